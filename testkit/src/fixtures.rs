//! What the in-process [`Harness`](crate::harness::Harness) and the scenarios share: the
//! namespace, FerrVault's distinctive secret values and tokens (so the leak scans find them
//! anywhere they should not be), spec builders and condition reads.

use std::collections::BTreeMap;

use ferrvault_operator::api::{
    ConnectionRef, FerrVaultConnectionSpec, FerrVaultSecret, FerrVaultSecretSpec, SecretKeyRef,
};
use ferrvault_sim::{ferrvault::SimConfig, kube::KubeSim};
use k8s_openapi::{
    api::{apps::v1::Deployment, core::v1::Secret},
    apimachinery::pkg::apis::meta::v1::Condition,
};
use kube::{Resource, ResourceExt};

/// Namespace every test works in.
pub const NS: &str = "default";

/// A FerrVault value: a database URL with a password.
pub const DB_URL: &str = "postgres://app:LEAKCHECK-db-pass@db:5432/shop";
/// A FerrVault value: an API key.
pub const API_KEY: &str = "sk_live_LEAKCHECK_apikey_0123";
/// The service-account token reading vault `prod`.
pub const PROD_TOKEN: &str = "fvsat_LEAKCHECK_prod_token";
/// The service-account token reading vault `blobs`.
pub const OTHER_TOKEN: &str = "fvsat_LEAKCHECK_other_token";
/// The org token of organisation `acme`.
pub const ORG_TOKEN: &str = "fft_LEAKCHECK_org_token";
/// The projected token FerrVault exchanges for a cluster token of [`CLUSTER_ID`].
pub const OIDC_JWT: &str = "LEAKCHECK.projected.jwt";
/// The cluster's ID registered in FerrVault.
pub const CLUSTER_ID: &str = "0b6f7e2c-1d2e-4f00-8a9b-0123456789ab";
/// `{"host":"db","port":5432,"tls":true}` for jsonExpand.
pub const JSON_CONFIG: &str = r#"{"host":"LEAKCHECK-host","port":5432,"tls":true}"#;
/// Base64 of bytes that are not UTF-8 (0xff 0xfe 0x00 0x01 …), for base64Decode.
pub const BINARY_B64: &str = "//4AAUxFQUtDSEVDSw==";

/// Every string that must never appear outside a Secret's data.
pub fn sensitive_strings() -> Vec<&'static str> {
    vec![
        DB_URL,
        "LEAKCHECK-db-pass",
        API_KEY,
        PROD_TOKEN,
        OTHER_TOKEN,
        ORG_TOKEN,
        OIDC_JWT,
        "LEAKCHECK-host",
        BINARY_B64,
        "ffclust_",
    ]
}

/// The FerrVault simulator of the in-process harness: vaults `prod` and `blobs`, a token for
/// each, the org token and the OIDC cluster.
pub fn sim_config() -> SimConfig {
    let yaml = format!(
        r#"
rate_limit: {{ per_second: 100.0, burst: 100 }}
cluster_token_ttl_secs: 900
vaults:
  - name: prod
    org: acme
    project: shop
    environment: production
    secrets:
      DB_URL: "{DB_URL}"
      API_KEY: "{API_KEY}"
  - name: blobs
    org: acme
    project: shop
    environment: production
    secrets:
      CONFIG: '{JSON_CONFIG}'
      CERT: "{BINARY_B64}"
service_account_tokens:
  - {{ token: {PROD_TOKEN}, vault: prod, label: prod-sat }}
  - {{ token: {OTHER_TOKEN}, vault: blobs, label: blobs-sat }}
org_tokens:
  - {{ token: {ORG_TOKEN}, org: acme, label: acme-org }}
oidc_clusters:
  - cluster_id: {CLUSTER_ID}
    jwt: {OIDC_JWT}
    org: acme
    namespaces: []
"#
    );
    SimConfig::from_yaml(&yaml).expect("test FerrVault config parses")
}

/// The Ready condition of a conditions list.
pub fn ready(conditions: Option<&[Condition]>) -> Option<&Condition> {
    conditions?.iter().find(|c| c.type_ == "Ready")
}

/// A condition of `type_`.
pub fn condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// A ferrvault-mode connection spec reading its token from `token_secret`/`token`.
pub fn connection_spec(url: &str, token_secret: &str) -> FerrVaultConnectionSpec {
    FerrVaultConnectionSpec {
        mode: Default::default(),
        url: url.to_owned(),
        organization: None,
        token_secret_ref: Some(SecretKeyRef {
            name: token_secret.into(),
            key: "token".into(),
        }),
        oidc: None,
        ca_bundle_secret_ref: None,
        client_cert_secret_ref: None,
        pin_sha256: None,
        suspend: None,
        change_detection: None,
    }
}

/// A FerrVaultSecret spec reading `vault` through connection `conn`.
pub fn secret_spec(conn: &str, vault: &str) -> FerrVaultSecretSpec {
    FerrVaultSecretSpec {
        connection_ref: ConnectionRef::namespaced(conn),
        project: None,
        vault: vault.into(),
        selector: None,
        target: None,
        refresh_interval: "1h".into(),
        rollout_restart: Vec::new(),
        transforms: Vec::new(),
        suspend: None,
        refresh_policy: None,
    }
}

/// The string data of a Secret (lossy), for assertions.
pub fn data_of(secret: &Secret) -> BTreeMap<String, Vec<u8>> {
    secret
        .data
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v.0))
        .collect()
}

/// Whether a Secret carries a controller owner reference to `owner`.
pub fn controlled_by(secret: &Secret, owner: &FerrVaultSecret) -> bool {
    secret.owner_references().iter().any(|o| {
        o.controller == Some(true)
            && o.block_owner_deletion == Some(true)
            && Some(&o.uid) == owner.metadata.uid.as_ref()
    })
}

/// A pod-template annotation of a Deployment.
pub fn template_annotation(deployment: &Deployment, key: &str) -> Option<String> {
    deployment
        .spec
        .as_ref()?
        .template
        .metadata
        .as_ref()?
        .annotations
        .as_ref()?
        .get(key)
        .cloned()
}

/// Stores an object of kind `K` named `name` in [`NS`] with `spec` exactly as given, so it can
/// carry what the CRD schema refuses. The API server would refuse it (422), so it is written
/// straight into storage (the simulator's test control
/// [`KubeSim::store_bypassing_admission`]), as an object stored under an older schema, or
/// written into etcd directly, exists in a real cluster.
pub fn store_unvalidated<K: Resource<DynamicType = ()>>(kube: &KubeSim, name: &str, spec: serde_json::Value) {
    let object = serde_json::json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "metadata": { "name": name, "namespace": NS },
        "spec": spec,
    });
    kube.store_bypassing_admission(&K::group(&()), &K::version(&()), &K::plural(&()), object)
        .unwrap_or_else(|e| panic!("{name} written into storage: {}", e.message));
}
