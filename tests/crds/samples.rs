//! The sample manifests in `src/api/samples/` parse into the Rust types and say what their
//! comments promise; the status types serialize completely (for whole-status merge patches).

use ferrvault_operator::{
    api::{
        ConnectionMode, FerrVaultConnection, FerrVaultSecret, FerrVaultSecretStatus, GO_DURATION_PATTERN,
        TransformType, WorkloadKind,
        samples::{CLOUD_CONNECTION, CLUSTER_CONNECTION, FERRVAULT_CONNECTION, SECRET_WITH_TRANSFORMS},
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
fn cluster_sample_should_lend_its_connection_to_exactly_the_three_team_namespaces_that_use_it() {
    use ferrvault_operator::api::{ClusterFerrVaultConnection, ConnectionKind};
    let connection: ClusterFerrVaultConnection = document(CLUSTER_CONNECTION, "ClusterFerrVaultConnection");
    let token: Secret = document(CLUSTER_CONNECTION, "Secret");
    let reference = connection
        .spec
        .token_secret_ref
        .as_ref()
        .expect("token reference");
    assert_eq!(
        (Some(reference.namespace.as_str()), Some(reference.name.as_str())),
        (
            token.metadata.namespace.as_deref(),
            token.metadata.name.as_deref()
        )
    );
    assert!(token_of(&token, &reference.key).starts_with("fvsat_"));
    let selector = connection
        .spec
        .allowed_namespaces
        .selector
        .as_ref()
        .expect("a selector");
    let term = &selector.match_expressions[0];
    assert_eq!(term.key, "kubernetes.io/metadata.name", "a label nobody can set");
    assert_eq!(term.values, ["team-a", "team-b", "team-c"]);
    let users: Vec<FerrVaultSecret> = CLUSTER_CONNECTION
        .split("\n---\n")
        .filter(|doc| doc.lines().any(|line| line == "kind: FerrVaultSecret"))
        .map(|doc| serde_norway::from_str(doc).expect("a FerrVaultSecret"))
        .collect();
    let namespaces: Vec<&str> = users
        .iter()
        .filter_map(|s| s.metadata.namespace.as_deref())
        .collect();
    assert_eq!(namespaces, ["team-a", "team-b", "team-c"]);
    for user in &users {
        assert_eq!(
            user.spec.connection_ref.kind,
            ConnectionKind::ClusterFerrVaultConnection
        );
        assert_eq!(user.spec.connection_ref.name, "platform");
    }
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
            "targetReplacedAt": null,
            "syncedKeys": [],
            "missingKeys": [],
            "observedGeneration": null,
            "targetResourceVersion": null,
            "observedInputs": null,
            "observedSpecDigest": null,
            "observedForceSync": null,
            "observedConnectionForceSync": null,
            "ownedLabels": [],
            "ownedAnnotations": [],
            "observedSourceVersion": null,
        })
    );
}

#[test]
fn template_sample_should_render_a_dsn_and_a_docker_config_offline() {
    use ferrvault_operator::{api::samples::SECRET_WITH_TEMPLATE, rules::render_target};
    let values = |pairs: &[(&str, &str)]| -> ferrvault_operator::rules::SecretData {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.as_bytes().to_vec()))
            .collect()
    };
    let mut docs = SECRET_WITH_TEMPLATE.split("\n---\n");
    let dsn: FerrVaultSecret = serde_norway::from_str(docs.next().unwrap()).expect("app-dsn parses");
    let rendered = render_target(
        &dsn.spec,
        values(&[
            ("DATABASE", r#"{"host":"db","port":5432}"#),
            ("DB_PASSWORD", "p@ss"),
        ]),
    )
    .expect("renders");
    assert_eq!(rendered.type_, "Opaque");
    assert_eq!(
        rendered.data.into_iter().collect::<Vec<_>>(),
        [(
            "DSN".to_owned(),
            b"postgres://app:p%40ss@db:5432/shop?sslmode=require".to_vec()
        )]
    );
    let pull: FerrVaultSecret = serde_norway::from_str(docs.next().unwrap()).expect("registry-pull parses");
    let rendered = render_target(
        &pull.spec,
        values(&[("REGISTRY_USER", "bot"), ("REGISTRY_TOKEN", "t")]),
    )
    .expect("renders");
    assert_eq!(rendered.type_, "kubernetes.io/dockerconfigjson");
    let config: serde_json::Value =
        serde_json::from_slice(&rendered.data[".dockerconfigjson"]).expect("JSON");
    assert_eq!(config["auths"]["registry.demo.example"]["auth"], "Ym90OnQ=");
}
