//! The ClusterFerrVaultConnection's CEL rules (docs/cluster-scope.md), evaluated as in `cel.rs`:
//! `"*"` is the only name when it is used, a CA bundle sits beside its token, cloud mode needs
//! an organization, `changeDetection.interval` is at least 5 s (as a FerrVaultConnection's).

use ferrvault_operator::api::{ClusterFerrVaultConnection, SAME_NAMESPACE_MESSAGE};
use kube::core::cel::validate_cel;

/// The messages of the CEL rules a ClusterFerrVaultConnection with `spec` violates.
fn cluster_connection(spec: &str) -> Vec<String> {
    let yaml = format!(
        "apiVersion: ferrvault.com/v1alpha1\nkind: ClusterFerrVaultConnection\nmetadata: {{name: c}}\nspec:\n  url: https://x\n{spec}"
    );
    let object: ClusterFerrVaultConnection =
        serde_norway::from_str(&yaml).unwrap_or_else(|e| panic!("test object parses: {e}\n{yaml}"));
    match validate_cel(&object) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.iter().map(|e| e.message.clone()).collect(),
    }
}

const TOKEN: &str = "  tokenSecretRef: {namespace: platform, name: t, key: token}\n";
const WILDCARD_ALONE: &str = "\"*\" must be the only name when it is used";

#[test]
fn the_wildcard_should_be_admitted_only_alone() {
    let none = Vec::<String>::new();
    assert_eq!(
        cluster_connection(&format!("{TOKEN}  allowedNamespaces: {{names: ['*']}}\n")),
        none
    );
    assert_eq!(
        cluster_connection(&format!("{TOKEN}  allowedNamespaces: {{names: [a, b]}}\n")),
        none
    );
    assert_eq!(
        cluster_connection(TOKEN),
        none,
        "empty: admitted, and allows nobody"
    );
    assert_eq!(
        cluster_connection(&format!("{TOKEN}  allowedNamespaces: {{names: ['*', team-a]}}\n")),
        [WILDCARD_ALONE]
    );
}

#[test]
fn a_ca_bundle_should_be_admitted_only_beside_its_token() {
    let ca =
        |namespace: &str| format!("  caBundleSecretRef: {{namespace: {namespace}, name: ca, key: ca.crt}}\n");
    assert_eq!(
        cluster_connection(&format!("{TOKEN}{}", ca("platform"))),
        Vec::<String>::new()
    );
    assert_eq!(
        cluster_connection(&format!("{TOKEN}{}", ca("tenant-a"))),
        [SAME_NAMESPACE_MESSAGE]
    );
    assert_eq!(
        cluster_connection(&format!("  oidc: {{}}\n{}", ca("platform"))),
        [SAME_NAMESPACE_MESSAGE],
        "no CA of anyone's choosing beside the cluster identity"
    );
}

#[test]
fn a_cloud_cluster_connection_should_need_an_organization() {
    assert_eq!(
        cluster_connection(&format!("{TOKEN}  mode: cloud\n")),
        ["organization is required when mode is cloud"]
    );
    assert_eq!(
        cluster_connection(&format!("{TOKEN}  mode: cloud\n  organization: acme\n")),
        Vec::<String>::new()
    );
}

#[test]
fn a_cluster_change_detection_interval_below_5s_should_be_refused() {
    let with = |interval: &str| {
        cluster_connection(&format!(
            "{TOKEN}  changeDetection: {{mode: Versions, interval: {interval}}}\n"
        ))
    };
    let floor = ferrvault_operator::api::INTERVAL_FLOOR_MESSAGE;
    assert_eq!(with("5s"), Vec::<String>::new());
    assert_eq!(with("4s"), [floor]);
    assert_eq!(
        cluster_connection(&format!("{TOKEN}  changeDetection: {{mode: Versions}}\n")),
        Vec::<String>::new(),
        "unset means 30s"
    );
}
