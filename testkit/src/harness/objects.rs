//! The objects a test creates through the harness: Secrets, connections, FerrVaultSecrets,
//! Deployments.

use ferrvault_operator::api::{
    ConnectionMode, FerrVaultConnection, FerrVaultConnectionSpec, FerrVaultSecret, FerrVaultSecretSpec,
    OidcSpec,
};
use ferrvault_sim::testkit::eventually;
use k8s_openapi::{
    ByteString,
    api::{apps::v1::Deployment, core::v1::Secret},
};
use kube::{
    Api,
    api::{ObjectMeta, PostParams},
};

use super::Harness;
use crate::fixtures::{NS, connection_spec, ready};

impl Harness {
    /// Creates a Secret holding `data` (string values).
    pub async fn put_secret(&self, name: &str, data: &[(&str, &str)]) -> Secret {
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            data: Some(
                data.iter()
                    .map(|(k, v)| ((*k).to_owned(), ByteString(v.as_bytes().to_vec())))
                    .collect(),
            ),
            ..Secret::default()
        };
        match self.secrets().get_opt(name).await.expect("read Secret") {
            Some(existing) => {
                let mut updated = secret;
                updated.metadata = existing.metadata;
                self.secrets()
                    .replace(name, &PostParams::default(), &updated)
                    .await
                    .expect("replace Secret")
            }
            None => self
                .secrets()
                .create(&PostParams::default(), &secret)
                .await
                .expect("create Secret"),
        }
    }

    /// A token Secret `name` with key `token` and a connection `conn` in ferrvault mode using it.
    ///
    /// Returns once the connection was probed (any Ready condition), so its first Ready change
    /// (which resyncs dependants) is over before the test creates FerrVaultSecrets.
    pub async fn connection(&self, conn: &str, token_secret: &str, token: &str) -> FerrVaultConnection {
        self.put_secret(token_secret, &[("token", token)]).await;
        self.create_connection(conn, connection_spec(&self.fv.url(), token_secret))
            .await;
        let api = self.fvc();
        eventually(&format!("FerrVaultConnection {conn} probed"), || {
            let api = api.clone();
            async move {
                let c = api.get(conn).await.ok()?;
                ready(c.status.as_ref().map(|s| s.conditions.as_slice()))?;
                Some(c)
            }
        })
        .await
    }

    /// Creates FerrVaultConnection `name` with `spec`.
    pub async fn create_connection(&self, name: &str, spec: FerrVaultConnectionSpec) -> FerrVaultConnection {
        self.fvc()
            .create(&PostParams::default(), &FerrVaultConnection::new(name, spec))
            .await
            .expect("create FerrVaultConnection")
    }

    /// Creates FerrVaultSecret `name` with `spec`.
    pub async fn create_secret(&self, name: &str, spec: FerrVaultSecretSpec) -> FerrVaultSecret {
        self.fvs()
            .create(&PostParams::default(), &FerrVaultSecret::new(name, spec))
            .await
            .expect("create FerrVaultSecret")
    }

    /// A cloud-mode connection (organization `acme`) to the FerrVault simulator opting in to the
    /// operator's cluster identity (`oidc: {}`).
    pub fn oidc_connection_spec(&self) -> FerrVaultConnectionSpec {
        FerrVaultConnectionSpec {
            mode: ConnectionMode::Cloud,
            url: self.fv.url(),
            organization: Some("acme".into()),
            token_secret_ref: None,
            oidc: Some(OidcSpec::default()),
            ca_bundle_secret_ref: None,
            client_cert_secret_ref: None,
            pin_sha256: None,
            suspend: None,
            change_detection: None,
        }
    }

    /// Deployments in [`NS`].
    pub fn deployments(&self) -> Api<Deployment> {
        Api::namespaced(self.client.clone(), NS)
    }

    /// Creates Deployment `name` (one container, a pod-template annotation `owner: team-shop`).
    pub async fn create_deployment(&self, name: &str) -> Deployment {
        let deployment: Deployment = serde_json::from_value(serde_json::json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name},
            "spec": {
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}, "annotations": {"owner": "team-shop"}},
                    "spec": {"containers": [{"name": "app", "image": "example/app:1"}]}
                }
            }
        }))
        .expect("a Deployment");
        self.deployments()
            .create(&PostParams::default(), &deployment)
            .await
            .expect("create Deployment")
    }

    /// A controller ownerReference to a new Deployment `name`: a live owner (the garbage
    /// collector deletes a dependent whose owner does not exist).
    pub async fn controller_ref_to_new_deployment(&self, name: &str) -> serde_json::Value {
        let owner = self.create_deployment(name).await;
        serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "name": name,
            "uid": owner.metadata.uid.expect("a stored Deployment has a uid"), "controller": true
        })
    }
}
