//! The sample manifests in `src/api/samples/` parse into the Rust types and say what their
//! comments promise; the status types serialize completely (for whole-status merge patches).

use ferrvault_operator::{
    api::{
        ConnectionMode, FerrVaultConnection, FerrVaultSecret, FerrVaultSecretStatus, GO_DURATION_PATTERN,
        TransformType, WorkloadKind,
        samples::{CLOUD_CONNECTION, FERRVAULT_CONNECTION, SECRET_WITH_TRANSFORMS},
    },
    rules::parse_go_duration,
};
use k8s_openapi::api::{apps::v1::Deployment, core::v1::Secret};
use serde::de::DeserializeOwned;
use serde_json::json;

/// The one document of `kind` in a multi-document sample, parsed as `T`.
fn document<T: DeserializeOwned>(file: &str, kind: &str) -> T {
    let doc = file
        .split("\n---\n")
        .find(|doc| doc.lines().any(|line| line == format!("kind: {kind}")))
        .unwrap_or_else(|| panic!("sample has a {kind}"));
    serde_norway::from_str(doc).unwrap_or_else(|e| panic!("{kind} parses: {e}"))
}

fn token_of(secret: &Secret, key: &str) -> String {
    secret
        .string_data
        .as_ref()
        .and_then(|data| data.get(key))
        .cloned()
        .expect("token in stringData")
}

#[test]
fn ferrvault_sample_should_be_a_ferrvault_mode_connection_with_a_sat_token_secret() {
    let connection: FerrVaultConnection = document(FERRVAULT_CONNECTION, "FerrVaultConnection");
    let token: Secret = document(FERRVAULT_CONNECTION, "Secret");
    assert_eq!(connection.spec.mode, ConnectionMode::Ferrvault);
    let reference = connection
        .spec
        .token_secret_ref
        .as_ref()
        .expect("token reference");
    assert_eq!(Some(reference.name.as_str()), token.metadata.name.as_deref());
    assert!(token_of(&token, &reference.key).starts_with("fvsat_"));
    assert_eq!(connection.metadata.namespace, token.metadata.namespace);
    assert!(connection.spec.oidc.is_none());
}

#[test]
fn cloud_sample_should_be_a_cloud_mode_connection_with_an_organization() {
    let connection: FerrVaultConnection = document(CLOUD_CONNECTION, "FerrVaultConnection");
    let token: Secret = document(CLOUD_CONNECTION, "Secret");
    assert_eq!(connection.spec.mode, ConnectionMode::Cloud);
    assert!(
        connection
            .spec
            .organization
            .as_deref()
            .is_some_and(|org| !org.is_empty())
    );
    let reference = connection
        .spec
        .token_secret_ref
        .as_ref()
        .expect("token reference");
    assert!(token_of(&token, &reference.key).starts_with("fft_"));
}

#[test]
fn secret_sample_should_have_transforms_and_a_rollout_target_that_exists() {
    let secret: FerrVaultSecret = document(SECRET_WITH_TRANSFORMS, "FerrVaultSecret");
    let deployment: Deployment = document(SECRET_WITH_TRANSFORMS, "Deployment");
    let connection: FerrVaultConnection = document(FERRVAULT_CONNECTION, "FerrVaultConnection");
    assert_eq!(
        Some(secret.spec.connection_ref.name.as_str()),
        connection.metadata.name.as_deref()
    );
    let types: Vec<TransformType> = secret.spec.transforms.iter().map(|t| t.type_).collect();
    for needed in [
        TransformType::JsonExpand,
        TransformType::Base64Decode,
        TransformType::Rename,
        TransformType::Prefix,
    ] {
        assert!(types.contains(&needed), "sample shows {needed:?}");
    }
    assert_eq!(secret.spec.rollout_restart.len(), 1);
    assert_eq!(secret.spec.rollout_restart[0].kind, WorkloadKind::Deployment);
    assert_eq!(
        Some(secret.spec.rollout_restart[0].name.as_str()),
        deployment.metadata.name.as_deref()
    );
    assert_eq!(secret.spec.target_name("app-config"), "app-config");
    assert_eq!(secret.spec.target_type(), "Opaque");
    assert!(
        regex::Regex::new(GO_DURATION_PATTERN)
            .unwrap()
            .is_match(&secret.spec.refresh_interval)
    );
    assert!(parse_go_duration(&secret.spec.refresh_interval).is_ok());
}

#[test]
fn omitted_fields_should_take_their_documented_defaults() {
    let secret: FerrVaultSecret = serde_norway::from_str(
        "apiVersion: ferrvault.com/v1alpha1\nkind: FerrVaultSecret\nmetadata: {name: s}\n\
         spec: {connectionRef: {name: c}, vault: v}\n",
    )
    .unwrap();
    assert_eq!(secret.spec.refresh_interval, "1h");
    assert_eq!(secret.spec.target_name("s"), "s");
    assert_eq!(secret.spec.target_type(), "Opaque");
    assert!(secret.spec.selected_names().is_empty());
    let connection: FerrVaultConnection = serde_norway::from_str(
        "apiVersion: ferrvault.com/v1alpha1\nkind: FerrVaultConnection\nmetadata: {name: c}\n\
         spec: {url: 'https://x', oidc: {}}\n",
    )
    .unwrap();
    assert_eq!(connection.spec.mode, ConnectionMode::Ferrvault);
    assert_eq!(
        connection.spec.oidc,
        Some(Default::default()),
        "nothing to choose in oidc"
    );
}

#[test]
fn status_should_serialize_every_field_so_a_merge_patch_clears_stale_values() {
    let status = serde_json::to_value(FerrVaultSecretStatus::default()).unwrap();
    assert_eq!(
        status,
        json!({
            "conditions": [],
            "lastSyncedAt": null,
            "lastRolloutHash": null,
            "syncedKeys": [],
            "missingKeys": [],
            "observedGeneration": null,
            "targetResourceVersion": null,
            "observedInputs": null,
        })
    );
}
