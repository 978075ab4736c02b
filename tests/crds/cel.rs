//! The CRDs' CEL rules (`x-kubernetes-validations`) evaluated client-side with kube's CEL engine:
//! they compile, accept valid objects and refuse exactly the invalid ones with the documented
//! message, as the API server would at `kubectl apply` time.

use ferrvault_operator::api::{FerrVaultConnection, FerrVaultSecret};
use kube::core::cel::validate_cel;

/// The messages of the CEL rules that `object` violates (empty when it is valid).
fn violations<K>(yaml: &str) -> Vec<String>
where
    K: kube::CustomResourceExt + serde::Serialize + serde::de::DeserializeOwned,
{
    let object: K =
        serde_norway::from_str(yaml).unwrap_or_else(|e| panic!("test object parses: {e}\n{yaml}"));
    match validate_cel(&object) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.iter().map(|e| e.message.clone()).collect(),
    }
}

fn connection(spec: &str) -> Vec<String> {
    let yaml = format!(
        "apiVersion: ferrvault.com/v1alpha1\nkind: FerrVaultConnection\nmetadata: {{name: c, namespace: n}}\nspec:\n{spec}"
    );
    violations::<FerrVaultConnection>(&yaml)
}

fn secret_with_transform(transform: &str) -> Vec<String> {
    let yaml = format!(
        "apiVersion: ferrvault.com/v1alpha1\nkind: FerrVaultSecret\nmetadata: {{name: s, namespace: n}}\n\
         spec:\n  connectionRef: {{name: c}}\n  vault: v\n  transforms:\n  - {transform}\n"
    );
    violations::<FerrVaultSecret>(&yaml)
}

const TOKEN: &str = "  tokenSecretRef: {name: t, key: token}\n";
const OIDC: &str = "  oidc: {}\n";
/// A Go-era manifest: still admitted (the operator compares, never uses, these values).
const GO_ERA_OIDC: &str = "  oidc: {clusterID: 0b6f7e2c-1d2e-4f00-8a9b-0123456789ab, tokenPath: /var/run/secrets/ferrvault/token}\n";
const ORGANIZATION: &str = "organization is required when mode is cloud";

#[test]
fn a_ferrvault_connection_with_one_credential_should_be_accepted() {
    assert_eq!(
        connection(&format!("  url: https://x\n{TOKEN}")),
        Vec::<String>::new()
    );
    assert_eq!(
        connection(&format!("  url: https://x\n{OIDC}")),
        Vec::<String>::new()
    );
    assert_eq!(
        connection(&format!("  url: https://x\n{GO_ERA_OIDC}")),
        Vec::<String>::new()
    );
}

#[test]
fn a_connection_with_both_or_neither_credential_should_be_admitted_as_the_go_crd_did() {
    // Reported TokenUnreadable by the reconciler instead.
    assert_eq!(
        connection(&format!("  url: https://x\n{TOKEN}{OIDC}")),
        Vec::<String>::new()
    );
    assert_eq!(connection("  url: https://x\n"), Vec::<String>::new());
}

#[test]
fn a_cloud_connection_should_need_a_non_empty_organization() {
    assert_eq!(
        connection(&format!("  url: https://x\n  mode: cloud\n{TOKEN}")),
        [ORGANIZATION]
    );
    assert_eq!(
        connection(&format!(
            "  url: https://x\n  mode: cloud\n  organization: ''\n{TOKEN}"
        )),
        [ORGANIZATION]
    );
    assert_eq!(
        connection(&format!(
            "  url: https://x\n  mode: cloud\n  organization: o\n{TOKEN}"
        )),
        Vec::<String>::new()
    );
    // ferrvault mode ignores the organization
    assert_eq!(
        connection(&format!("  url: https://x\n  mode: ferrvault\n{TOKEN}")),
        Vec::<String>::new()
    );
}

#[test]
fn each_transform_type_should_be_accepted_with_the_fields_it_needs() {
    for transform in [
        "{type: prefix, value: P_}",
        "{type: suffix, value: _S}",
        "{type: rename, from: a, to: b}",
        "{type: base64Decode}",
        "{type: base64Decode, keys: [a]}",
        "{type: jsonExpand, key: a}",
    ] {
        assert_eq!(
            secret_with_transform(transform),
            Vec::<String>::new(),
            "{transform}"
        );
    }
}

fn secret_with_target(target: &str) -> Vec<String> {
    let yaml = format!(
        "apiVersion: ferrvault.com/v1alpha1\nkind: FerrVaultSecret\nmetadata: {{name: s, namespace: n}}\n\
         spec:\n  connectionRef: {{name: c}}\n  vault: v\n  target: {target}\n"
    );
    violations::<FerrVaultSecret>(&yaml)
}

#[test]
fn a_docker_config_with_another_target_type_should_be_refused_at_admission_naming_both_fields() {
    let docker = "template: {dockerConfig: {server: ghcr.io, usernameKey: U, passwordKey: P}}";
    assert_eq!(
        secret_with_target(&format!("{{type: Opaque, {docker}}}")),
        [ferrvault_operator::api::DOCKER_CONFIG_TYPE_MESSAGE]
    );
    for allowed in [
        format!("{{{docker}}}"),
        format!("{{type: kubernetes.io/dockerconfigjson, {docker}}}"),
        "{type: Opaque, template: {data: {DSN: x}}}".to_owned(),
    ] {
        assert_eq!(secret_with_target(&allowed), Vec::<String>::new(), "{allowed}");
    }
}

#[test]
fn a_target_type_kubernetes_turns_into_credentials_should_be_refused_at_admission() {
    for type_ in ferrvault_operator::api::REFUSED_TARGET_TYPES {
        assert_eq!(
            secret_with_target(&format!("{{name: t, type: {type_}}}")),
            [ferrvault_operator::api::REFUSED_TARGET_TYPE_MESSAGE],
            "{type_}"
        );
    }
    for allowed in [
        "{name: t}",
        "{type: Opaque}",
        "{type: kubernetes.io/tls}",
        "{type: kubernetes.io/dockerconfigjson}",
        // Secret types are case-sensitive: this one is inert to Kubernetes.
        "{type: Kubernetes.io/service-account-token}",
    ] {
        assert_eq!(secret_with_target(allowed), Vec::<String>::new(), "{allowed}");
    }
}

#[test]
fn the_shipped_samples_should_pass_every_cel_rule() {
    use ferrvault_operator::api::samples::{
        CLOUD_CONNECTION, FERRVAULT_CONNECTION, REFRESH_CONTROL, SECRET_WITH_TEMPLATE, SECRET_WITH_TRANSFORMS,
    };
    for doc in [
        FERRVAULT_CONNECTION,
        CLOUD_CONNECTION,
        SECRET_WITH_TRANSFORMS,
        REFRESH_CONTROL,
        SECRET_WITH_TEMPLATE,
    ]
    .iter()
    .flat_map(|f| f.split("\n---\n"))
    {
        if doc.contains("kind: FerrVaultConnection") {
            assert_eq!(
                violations::<FerrVaultConnection>(doc),
                Vec::<String>::new(),
                "{doc}"
            );
        } else if doc.contains("kind: FerrVaultSecret") {
            assert_eq!(violations::<FerrVaultSecret>(doc), Vec::<String>::new(), "{doc}");
        }
    }
}

#[test]
fn target_metadata_keys_under_the_reserved_prefixes_should_be_refused_at_admission() {
    use ferrvault_operator::api::target_shape::{KEY_SHAPE_MESSAGE, RESERVED_MESSAGE};
    for (key, expected) in [
        ("team", vec![]),
        ("app.kubernetes.io/name", vec![]),
        ("example.com/owner", vec![]),
        ("sub.ferrvault.com/x", vec![]),
        ("ferrvault.com/content-hash", vec![RESERVED_MESSAGE]),
        ("kubernetes.io/service-account.name", vec![RESERVED_MESSAGE]),
        ("k8s.io/x", vec![RESERVED_MESSAGE]),
        ("a/b/c", vec![KEY_SHAPE_MESSAGE]),
    ] {
        for field in ["labels", "annotations"] {
            assert_eq!(
                secret_with_target(&format!("{{metadata: {{{field}: {{'{key}': v}}}}}}")),
                expected,
                "{field} {key}"
            );
        }
    }
    let long_name = "n".repeat(64);
    assert_eq!(
        secret_with_target(&format!("{{metadata: {{labels: {{'{long_name}': v}}}}}}")),
        [KEY_SHAPE_MESSAGE]
    );
}

#[test]
fn the_new_target_fields_should_be_admitted_without_being_defaulted() {
    assert_eq!(
        secret_with_target(
            "{immutable: true, immutableChange: Replace, creationPolicy: Orphan, deletionPolicy: Retain}"
        ),
        Vec::<String>::new()
    );
}

fn secret_with(spec: &str) -> Vec<String> {
    let yaml = format!(
        "apiVersion: ferrvault.com/v1alpha1\nkind: FerrVaultSecret\nmetadata: {{name: s, namespace: n}}\n\
         spec:\n  connectionRef: {{name: c}}\n  vault: v\n{spec}"
    );
    violations::<FerrVaultSecret>(&yaml)
}

#[test]
fn created_once_with_an_immutable_replace_should_be_refused_at_admission_naming_both_fields() {
    use ferrvault_operator::api::CREATED_ONCE_REPLACE_MESSAGE;
    assert!(CREATED_ONCE_REPLACE_MESSAGE.contains("refreshPolicy"));
    assert!(CREATED_ONCE_REPLACE_MESSAGE.contains("target.immutableChange"));
    assert_eq!(
        secret_with("  refreshPolicy: CreatedOnce\n  target: {immutable: true, immutableChange: Replace}\n"),
        [CREATED_ONCE_REPLACE_MESSAGE]
    );
    for alone in [
        "  refreshPolicy: CreatedOnce\n",
        "  refreshPolicy: CreatedOnce\n  target: {immutable: true, immutableChange: Refuse}\n",
        "  refreshPolicy: OnChange\n  target: {immutable: true, immutableChange: Replace}\n",
        "  target: {immutable: true, immutableChange: Replace}\n",
    ] {
        assert_eq!(secret_with(alone), Vec::<String>::new(), "{alone}");
    }
}

#[test]
fn a_merged_target_with_a_replacing_template_should_be_refused_at_admission_naming_both_fields() {
    use ferrvault_operator::api::MERGE_REPLACE_MESSAGE;
    assert!(MERGE_REPLACE_MESSAGE.contains("target.creationPolicy"));
    assert!(MERGE_REPLACE_MESSAGE.contains("target.template.mergePolicy"));
    assert_eq!(
        secret_with_target("{creationPolicy: Merge, template: {mergePolicy: Replace, data: {DSN: x}}}"),
        [MERGE_REPLACE_MESSAGE]
    );
    for alone in [
        "{creationPolicy: Merge}",
        "{creationPolicy: Merge, template: {mergePolicy: Merge, data: {DSN: x}}}",
        "{creationPolicy: Orphan, template: {mergePolicy: Replace, data: {DSN: x}}}",
        "{template: {mergePolicy: Replace, data: {DSN: x}}}",
    ] {
        assert_eq!(secret_with_target(alone), Vec::<String>::new(), "{alone}");
    }
}

#[test]
fn a_change_detection_interval_below_5s_should_be_refused() {
    let with = |interval: &str| {
        connection(&format!(
            "  url: https://x\n{TOKEN}  changeDetection: {{mode: Versions, interval: {interval}}}\n"
        ))
    };
    let floor = ferrvault_operator::api::INTERVAL_FLOOR_MESSAGE;
    assert_eq!(with("5s"), Vec::<String>::new());
    assert_eq!(with("1m"), Vec::<String>::new());
    assert_eq!(with("4s"), vec![floor.to_owned()]);
    assert_eq!(with("500ms"), vec![floor.to_owned()]);
    assert_eq!(
        connection(&format!(
            "  url: https://x\n{TOKEN}  changeDetection: {{mode: Versions}}\n"
        )),
        Vec::<String>::new(),
        "unset means 30s"
    );
}
