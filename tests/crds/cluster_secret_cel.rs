//! The ClusterFerrVaultSecret's CEL rules (docs/cluster-scope.md), evaluated as in `cel.rs`: its
//! connection is a ClusterFerrVaultConnection, its `namespaces` keeps `"*"` alone, and the
//! FerrVaultSecret spec it nests keeps that spec's own rules.

use ferrvault_operator::api::{
    CLUSTER_CONNECTION_MESSAGE, CREATED_ONCE_REPLACE_MESSAGE, ClusterFerrVaultSecret, NO_ROLLOUT_MESSAGE,
    OWNER_ONLY_MESSAGE,
};
use kube::core::cel::validate_cel;

/// The messages of the CEL rules a ClusterFerrVaultSecret violates, with `connection_ref` as its
/// `secretSpec.connectionRef` and `rest` appended to its spec.
fn cluster_secret(connection_ref: &str, rest: &str) -> Vec<String> {
    let yaml = format!(
        "apiVersion: ferrvault.com/v1alpha1\nkind: ClusterFerrVaultSecret\nmetadata: {{name: s}}\nspec:\n  \
         secretSpec:\n    connectionRef: {connection_ref}\n    vault: v\n{rest}"
    );
    let object: ClusterFerrVaultSecret =
        serde_norway::from_str(&yaml).unwrap_or_else(|e| panic!("test object parses: {e}\n{yaml}"));
    match validate_cel(&object) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.iter().map(|e| e.message.clone()).collect(),
    }
}

const CLUSTER: &str = "{kind: ClusterFerrVaultConnection, name: platform}";
const ALL: &str = "  namespaces: {names: ['*']}\n";

#[test]
fn a_cluster_secret_should_be_admitted_only_with_a_cluster_connection() {
    assert_eq!(cluster_secret(CLUSTER, ALL), Vec::<String>::new());
    assert_eq!(
        cluster_secret("{name: platform}", ALL),
        [CLUSTER_CONNECTION_MESSAGE],
        "an unset kind is the namespaced kind"
    );
    assert_eq!(
        cluster_secret("{kind: FerrVaultConnection, name: platform}", ALL),
        [CLUSTER_CONNECTION_MESSAGE]
    );
}

#[test]
fn a_cluster_secret_should_keep_the_wildcard_alone_and_admit_an_empty_selection() {
    assert_eq!(
        cluster_secret(CLUSTER, ""),
        Vec::<String>::new(),
        "empty: admitted, and selects nobody"
    );
    assert_eq!(
        cluster_secret(CLUSTER, "  namespaces: {names: ['*', team-a]}\n"),
        ["\"*\" must be the only name when it is used"]
    );
}

#[test]
fn a_cluster_secret_should_keep_the_rules_of_the_secret_spec_it_nests() {
    let contradiction = "    refreshPolicy: CreatedOnce\n    target: {immutableChange: Replace}\n";
    assert_eq!(
        cluster_secret(CLUSTER, &format!("{contradiction}{ALL}")),
        [CREATED_ONCE_REPLACE_MESSAGE]
    );
}

#[test]
fn a_cluster_secret_should_own_its_copies_wholly_and_restart_nothing() {
    for policy in ["Orphan", "Merge"] {
        assert_eq!(
            cluster_secret(
                CLUSTER,
                &format!("    target: {{creationPolicy: {policy}}}\n{ALL}")
            ),
            [OWNER_ONLY_MESSAGE],
            "{policy}"
        );
    }
    assert_eq!(
        cluster_secret(CLUSTER, &format!("    target: {{creationPolicy: Owner}}\n{ALL}")),
        Vec::<String>::new()
    );
    assert_eq!(
        cluster_secret(
            CLUSTER,
            &format!("    rolloutRestart: [{{kind: Deployment, name: app}}]\n{ALL}")
        ),
        [NO_ROLLOUT_MESSAGE]
    );
}
