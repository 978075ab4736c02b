//! The demo's sample world, also what the chart and process tests apply: the FerrVault vault
//! behind the samples, the namespace, the CRDs (from [`crdgen`]) and the sample manifests of
//! [`samples`], with each connection's URL pointed at the in-process FerrVault simulator.

use k8s_openapi::api::{
    apps::v1::Deployment,
    core::v1::{Namespace, Secret},
};
use kube::{
    Api, Client, Resource,
    api::{ApiResource, DynamicObject, PostParams},
};
use serde::Deserialize;
use serde_json::{Value, json};

use ferrvault_operator::api::{
    ClusterFerrVaultConnection, ClusterFerrVaultSecret, FerrVaultConnection, FerrVaultSecret, crdgen, samples,
};
use ferrvault_sim::ferrvault::SimConfig;

/// The namespace of every sample.
pub const NAMESPACE: &str = "demo";

/// The secrets in the demo's `production` vault. The values are sample data, but the demo
/// treats them as secret: no output of the demo or the operator shows them.
pub const VAULT_SECRETS: [(&str, &str); 6] = [
    ("DATABASE", r#"{"host":"db.demo.svc","port":5432}"#),
    // base64 of "-----BEGIN CERTIFICATE-----\ndemo-cert\n-----END CERTIFICATE-----\n"
    (
        "TLS_CERT_B64",
        "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCmRlbW8tY2VydAotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==",
    ),
    ("api_key", "demo-api-key-5f0c2a9e"),
    // Read by the template sample (`samples::SECRET_WITH_TEMPLATE`).
    ("DB_PASSWORD", "demo-db-p@ss-4b7e"),
    ("REGISTRY_USER", "demo-bot"),
    ("REGISTRY_TOKEN", "demo-registry-token-9c3d1f"),
];

/// The vault the samples read.
pub const VAULT: &str = "production";

/// A FerrVaultSecret without transforms, next to the sample with transforms.
const PLAIN_SECRET: &str = r"
apiVersion: ferrvault.com/v1alpha1
kind: FerrVaultSecret
metadata:
  name: api-key
  namespace: demo
spec:
  connectionRef:
    name: ferrvault
  vault: production
  selector:
    names: [api_key]
";

/// Why the demo's world could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    /// A sample manifest did not parse (a bug in the samples).
    #[error("sample manifest: {0}")]
    Manifest(String),
    /// The simulated API server refused a create.
    #[error("creating {what}: {source}")]
    Create {
        /// `Kind namespace/name`.
        what: String,
        /// kube's error.
        #[source]
        source: kube::Error,
    },
}

/// Every sample manifest document, in apply order.
///
/// # Errors
/// A sample that is not YAML (a bug caught by the demo test).
pub fn manifests() -> Result<Vec<Value>, FixtureError> {
    let mut documents = Vec::new();
    for text in [
        samples::FERRVAULT_CONNECTION,
        samples::CLOUD_CONNECTION,
        samples::SECRET_WITH_TRANSFORMS,
        samples::REFRESH_CONTROL,
        samples::SECRET_WITH_TEMPLATE,
        PLAIN_SECRET,
        samples::CLUSTER_CONNECTION,
        samples::CLUSTER_SECRET,
    ] {
        for document in serde_norway::Deserializer::from_str(text) {
            let value = Value::deserialize(document).map_err(|e| FixtureError::Manifest(e.to_string()))?;
            if !value.is_null() {
                documents.push(value);
            }
        }
    }
    Ok(documents)
}

/// The `stringData.token` of every sample Secret: the FerrVault tokens of the samples.
pub fn sample_tokens(manifests: &[Value]) -> Vec<String> {
    manifests
        .iter()
        .filter(|m| m["kind"] == "Secret")
        .filter_map(|m| m["stringData"]["token"].as_str().map(str::to_owned))
        .collect()
}

/// How long the samples' service-account tokens stay valid from the simulator's start: they
/// expire, as real ones do, so a connection's status shows `tokenExpiresAt` (`GET /operator/me`).
pub const SAMPLE_TOKEN_LIFETIME: jiff::SignedDuration = jiff::SignedDuration::from_hours(90 * 24);

/// How many sample FerrVaultSecrets `manifests` put in [`NAMESPACE`] (the others are the cluster
/// connection's, in their team namespaces).
pub fn secrets_in_namespace(manifests: &[Value]) -> usize {
    manifests
        .iter()
        .filter(|m| m["kind"] == "FerrVaultSecret" && m["metadata"]["namespace"] == NAMESPACE)
        .count()
}

/// The FerrVault simulator's configuration: the `production` vault, each sample token bound
/// to it (a `fvsat_` token as a service-account token valid for [`SAMPLE_TOKEN_LIFETIME`], a
/// `fft_` one as an org token).
pub fn ferrvault_config(manifests: &[Value]) -> SimConfig {
    let mut config = SimConfig::default().vault(VAULT, VAULT_SECRETS);
    let expires_at = jiff::Timestamp::now() + SAMPLE_TOKEN_LIFETIME;
    for token in sample_tokens(manifests) {
        config = if token.starts_with("fvsat_") {
            config
                .service_account_token(&token, VAULT)
                .token_expires_at(&token, expires_at)
        } else {
            config.org_token(&token, "acme")
        };
    }
    config
}

/// Points every FerrVaultConnection and ClusterFerrVaultConnection at `url`.
pub fn point_connections_at(manifests: &mut [Value], url: &str) {
    for manifest in manifests
        .iter_mut()
        .filter(|m| m["kind"] == "FerrVaultConnection" || m["kind"] == "ClusterFerrVaultConnection")
    {
        manifest["spec"]["url"] = json!(url);
    }
}

/// Creates the CRDs (from `crdgen`), then [`apply_samples`].
///
/// # Errors
/// The first create the API server refused.
pub async fn apply(client: &Client, manifests: &[Value]) -> Result<(), FixtureError> {
    let crds = Api::all(client.clone());
    for crd in crdgen::crds() {
        let what = format!(
            "CustomResourceDefinition {}",
            crd.metadata.name.clone().unwrap_or_default()
        );
        create(&crds, &crd, what).await?;
    }
    apply_samples(client, manifests).await
}

/// Creates the samples' namespace (unless it exists, e.g. made by a chart watching it) and every
/// manifest (the CRDs must exist): namespaced ones in their namespace (the samples' by default),
/// Namespaces and ClusterFerrVaultConnections cluster-wide.
///
/// # Errors
/// The first create the API server refused.
pub async fn apply_samples(client: &Client, manifests: &[Value]) -> Result<(), FixtureError> {
    create_namespace(client, NAMESPACE).await?;
    for manifest in manifests {
        let kind = manifest["kind"].as_str().unwrap_or_default();
        let name = manifest["metadata"]["name"].as_str().unwrap_or_default();
        match kind {
            "Namespace" => {
                create_namespace(client, name).await?;
                continue;
            }
            "ClusterFerrVaultConnection" | "ClusterFerrVaultSecret" => {
                let object: DynamicObject = serde_json::from_value(manifest.clone())
                    .map_err(|e| FixtureError::Manifest(e.to_string()))?;
                let resource = if kind == "ClusterFerrVaultSecret" {
                    ApiResource::erase::<ClusterFerrVaultSecret>(&())
                } else {
                    ApiResource::erase::<ClusterFerrVaultConnection>(&())
                };
                let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
                create(&api, &object, format!("{kind} {name}")).await?;
                continue;
            }
            _ => {}
        }
        let resource = match kind {
            "Secret" => ApiResource::erase::<Secret>(&()),
            "Deployment" => ApiResource::erase::<Deployment>(&()),
            "FerrVaultConnection" => ApiResource::erase::<FerrVaultConnection>(&()),
            "FerrVaultSecret" => ApiResource::erase::<FerrVaultSecret>(&()),
            other => return Err(FixtureError::Manifest(format!("unexpected kind {other:?}"))),
        };
        let object: DynamicObject =
            serde_json::from_value(manifest.clone()).map_err(|e| FixtureError::Manifest(e.to_string()))?;
        let namespace = object
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| NAMESPACE.to_owned());
        let what = format!(
            "{kind} {namespace}/{}",
            object.metadata.name.clone().unwrap_or_default()
        );
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &namespace, &resource);
        create(&api, &object, what).await?;
    }
    Ok(())
}

/// Creates Namespace `name` unless it exists (e.g. made by a chart watching it).
async fn create_namespace(client: &Client, name: &str) -> Result<(), FixtureError> {
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": name}})).expect("a Namespace literal");
    match create(&Api::all(client.clone()), &namespace, format!("Namespace {name}")).await {
        Err(FixtureError::Create {
            source: kube::Error::Api(status),
            ..
        }) if status.code == 409 => Ok(()),
        other => other,
    }
}

async fn create<K>(api: &Api<K>, object: &K, what: String) -> Result<(), FixtureError>
where
    K: Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.create(&PostParams::default(), object)
        .await
        .map(drop)
        .map_err(|source| FixtureError::Create { what, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_should_give_two_connections_their_secrets_and_their_tokens() {
        let manifests = manifests().expect("samples parse");
        let count = |kind: &str| manifests.iter().filter(|m| m["kind"] == kind).count();
        assert_eq!(count("FerrVaultConnection"), 2);
        assert_eq!(count("ClusterFerrVaultConnection"), 1);
        // Transforms 2, refresh control 2, templates 2 in the demo namespace; one per team namespace
        // through the cluster connection.
        assert_eq!(secrets_in_namespace(&manifests), 6);
        assert_eq!(count("FerrVaultSecret"), 9);
        assert_eq!(count("Deployment"), 1);
        let tokens = sample_tokens(&manifests);
        assert!(tokens.iter().any(|t| t.starts_with("fvsat_")), "{}", tokens.len());
        assert!(tokens.iter().any(|t| t.starts_with("fft_")), "{}", tokens.len());
    }

    #[test]
    fn every_connection_should_point_at_the_simulator() {
        let mut manifests = manifests().expect("samples parse");
        point_connections_at(&mut manifests, "http://127.0.0.1:1");
        for connection in manifests.iter().filter(|m| m["kind"] == "FerrVaultConnection") {
            assert_eq!(connection["spec"]["url"], "http://127.0.0.1:1");
        }
    }
}
