//! The schema's bounds of a ClusterFerrVaultConnection and a ClusterFerrVaultSecret (with the
//! latter's CEL rules), checked again (as [`spec_bounds`] does
//! for the namespaced kinds): its connection fields, its references' namespaces and its
//! `allowedNamespaces`, in declaration order, a list's length before its items.
//!
//! # Guarantees
//! A selection that passes is at most [`MAX_NAMESPACE_NAMES`] names and [`MAX_SELECTOR_TERMS`]
//! terms of at most [`MAX_SELECTOR_VALUES`] values: matching a namespace against it is bounded
//! whatever was stored.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use super::spec_bounds::{SpecBounds, connection_spec_problem, list, problem, secret_spec_problem, text};
use crate::api::{
    CLUSTER_CONNECTION_MESSAGE, ClusterFerrVaultConnectionSpec, ClusterFerrVaultSecret,
    ClusterFerrVaultSecretSpec, ConnectionKind, CreationPolicy, NO_ROLLOUT_MESSAGE, NamespaceSelection,
    NamespacedSecretKeyRef, OWNER_ONLY_MESSAGE, SAME_NAMESPACE_MESSAGE, SpecProblem,
    bounds::{
        MAX_LABEL_TEXT, MAX_NAMESPACE_NAME, MAX_NAMESPACE_NAMES, MAX_SELECTOR_TERMS, MAX_SELECTOR_VALUES,
    },
    client_cert::CLIENT_CERT_NAMESPACE_MESSAGE,
};

/// The first bound `spec` exceeds, if any.
///
/// # Errors
/// The [`SpecProblem`] naming the field and its bound, never its value.
pub(crate) fn cluster_connection_spec_problem(
    spec: &ClusterFerrVaultConnectionSpec,
) -> Result<(), SpecProblem> {
    connection_spec_problem(&spec.as_connection().0)?;
    namespace_of("spec.tokenSecretRef", spec.token_secret_ref.as_ref())?;
    namespace_of("spec.caBundleSecretRef", spec.ca_bundle_secret_ref.as_ref())?;
    if let Some(ca) = &spec.ca_bundle_secret_ref
        && spec
            .token_secret_ref
            .as_ref()
            .is_none_or(|t| t.namespace != ca.namespace)
    {
        return Err(problem(
            &"spec.caBundleSecretRef.namespace",
            SAME_NAMESPACE_MESSAGE.to_owned(),
        ));
    }
    if let Some(cert) = &spec.client_cert_secret_ref {
        text(
            &"spec.clientCertSecretRef.namespace",
            &cert.namespace,
            MAX_NAMESPACE_NAME,
        )?;
        if spec
            .token_secret_ref
            .as_ref()
            .is_none_or(|t| t.namespace != cert.namespace)
        {
            return Err(problem(
                &"spec.clientCertSecretRef.namespace",
                CLIENT_CERT_NAMESPACE_MESSAGE.to_owned(),
            ));
        }
    }
    selection_problem("spec.allowedNamespaces", &spec.allowed_namespaces)
}

/// The first bound a ClusterFerrVaultSecret's `spec` exceeds, if any: its nested FerrVaultSecret
/// spec (named by that spec's own paths), then its `namespaces`.
///
/// # Errors
/// As [`cluster_connection_spec_problem`].
pub(crate) fn cluster_secret_spec_problem(spec: &ClusterFerrVaultSecretSpec) -> Result<(), SpecProblem> {
    secret_spec_problem(&spec.secret_spec)?;
    selection_problem("spec.namespaces", &spec.namespaces)?;
    // The kind's CEL rules, checked again for an object stored past them.
    let secret = &spec.secret_spec;
    if secret.connection_ref.kind != ConnectionKind::ClusterFerrVaultConnection {
        return Err(problem(
            &"spec.secretSpec.connectionRef.kind",
            CLUSTER_CONNECTION_MESSAGE.to_owned(),
        ));
    }
    if secret.creation_policy() != CreationPolicy::Owner {
        return Err(problem(
            &"spec.secretSpec.target.creationPolicy",
            OWNER_ONLY_MESSAGE.to_owned(),
        ));
    }
    if !secret.rollout_restart.is_empty() {
        return Err(problem(
            &"spec.secretSpec.rolloutRestart",
            NO_ROLLOUT_MESSAGE.to_owned(),
        ));
    }
    Ok(())
}

impl SpecBounds for ClusterFerrVaultSecret {
    fn bounds_problem(&self) -> Option<SpecProblem> {
        cluster_secret_spec_problem(&self.spec).err()
    }

    fn conditions(&self) -> Vec<Condition> {
        self.status
            .as_ref()
            .map(|status| status.conditions.clone())
            .unwrap_or_default()
    }
}

/// The first bound `selection` (at `path`) exceeds, if any.
///
/// # Errors
/// As [`cluster_connection_spec_problem`].
pub(crate) fn selection_problem(path: &str, selection: &NamespaceSelection) -> Result<(), SpecProblem> {
    list(
        &format_args!("{path}.names"),
        selection.names.len(),
        MAX_NAMESPACE_NAMES,
    )?;
    for (index, name) in selection.names.iter().enumerate() {
        text(&format_args!("{path}.names[{index}]"), name, MAX_NAMESPACE_NAME)?;
    }
    let Some(selector) = &selection.selector else {
        return Ok(());
    };
    let labels = format_args!("{path}.selector.matchLabels");
    list(&labels, selector.match_labels.len(), MAX_SELECTOR_TERMS)?;
    for (index, (key, value)) in selector.match_labels.iter().enumerate() {
        text(&format_args!("{labels} key #{index}"), key, MAX_LABEL_TEXT)?;
        text(&format_args!("{labels} value #{index}"), value, MAX_LABEL_TEXT)?;
    }
    let terms = &selector.match_expressions;
    list(
        &format_args!("{path}.selector.matchExpressions"),
        terms.len(),
        MAX_SELECTOR_TERMS,
    )?;
    for (index, term) in terms.iter().enumerate() {
        let at = format!("{path}.selector.matchExpressions[{index}]");
        text(&format_args!("{at}.key"), &term.key, MAX_LABEL_TEXT)?;
        list(
            &format_args!("{at}.values"),
            term.values.len(),
            MAX_SELECTOR_VALUES,
        )?;
        for (v, value) in term.values.iter().enumerate() {
            text(&format_args!("{at}.values[{v}]"), value, MAX_LABEL_TEXT)?;
        }
    }
    Ok(())
}

fn namespace_of(path: &str, reference: Option<&NamespacedSecretKeyRef>) -> Result<(), SpecProblem> {
    reference.map_or(Ok(()), |r| {
        text(
            &format_args!("{path}.namespace"),
            &r.namespace,
            MAX_NAMESPACE_NAME,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_certificate_outside_the_tokens_namespace_should_be_refused_as_stored() {
        let spec = |cert_namespace: &str| -> ClusterFerrVaultConnectionSpec {
            serde_json::from_value(serde_json::json!({
                "url": "https://x",
                "tokenSecretRef": { "namespace": "platform", "name": "t", "key": "token" },
                "clientCertSecretRef": { "namespace": cert_namespace, "name": "client-tls" },
            }))
            .expect("a spec")
        };
        assert_eq!(cluster_connection_spec_problem(&spec("platform")), Ok(()));
        let problem = cluster_connection_spec_problem(&spec("tenant-a")).unwrap_err();
        assert_eq!(problem.path, "spec.clientCertSecretRef.namespace");
    }

    #[test]
    fn a_selection_over_its_bounds_should_be_named_without_its_values() {
        let mut selection = NamespaceSelection {
            names: vec!["n".into(); MAX_NAMESPACE_NAMES],
            selector: None,
        };
        assert_eq!(selection_problem("spec.allowedNamespaces", &selection), Ok(()));
        selection.names.push("n".into());
        let problem = selection_problem("spec.allowedNamespaces", &selection).unwrap_err();
        assert_eq!(problem.path, "spec.allowedNamespaces.names");
        selection.names = vec!["SECRET".repeat(20)];
        let problem = selection_problem("spec.allowedNamespaces", &selection).unwrap_err();
        assert_eq!(problem.path, "spec.allowedNamespaces.names[0]");
        assert!(!problem.to_string().contains("SECRET"), "{problem}");
    }

    #[test]
    fn a_cluster_secret_over_its_namespaces_bound_should_be_named() {
        let mut spec: ClusterFerrVaultSecretSpec = serde_json::from_value(serde_json::json!({
            "secretSpec": {"connectionRef": {"kind": "ClusterFerrVaultConnection", "name": "p"}, "vault": "v"},
            "namespaces": {"names": ["a"]},
        }))
        .expect("a cluster secret spec");
        assert_eq!(cluster_secret_spec_problem(&spec), Ok(()));
        spec.namespaces.names = vec!["n".into(); MAX_NAMESPACE_NAMES + 1];
        let problem = cluster_secret_spec_problem(&spec).unwrap_err();
        assert_eq!(problem.path, "spec.namespaces.names");
    }

    #[test]
    fn a_cluster_secret_stored_past_its_cel_rules_should_be_refused_again() {
        let stored = |secret_spec: serde_json::Value| -> ClusterFerrVaultSecretSpec {
            serde_json::from_value(serde_json::json!({ "secretSpec": secret_spec })).expect("a spec")
        };
        let cluster = serde_json::json!({"kind": "ClusterFerrVaultConnection", "name": "p"});
        for (secret_spec, path) in [
            (
                serde_json::json!({"connectionRef": {"name": "p"}, "vault": "v"}),
                "spec.secretSpec.connectionRef.kind",
            ),
            (
                serde_json::json!({"connectionRef": cluster, "vault": "v", "target": {"creationPolicy": "Merge"}}),
                "spec.secretSpec.target.creationPolicy",
            ),
            (
                serde_json::json!({"connectionRef": cluster, "vault": "v",
                    "rolloutRestart": [{"kind": "Deployment", "name": "app"}]}),
                "spec.secretSpec.rolloutRestart",
            ),
        ] {
            assert_eq!(
                cluster_secret_spec_problem(&stored(secret_spec)).map_err(|p| p.path),
                Err(path.to_owned())
            );
        }
    }
}
