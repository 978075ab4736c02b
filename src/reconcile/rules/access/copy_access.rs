//! Whether a ClusterFerrVaultSecret may write (or delete) the Secret in one namespace that would be
//! its copy: decided from the Secret's labels, owner references, type and annotations only, before
//! anything is revealed for that namespace.
//!
//! # Guarantees
//! - A copy is written only when no Secret of its name exists (it is then created, labelled
//!   [`CLUSTER_SECRET_UID_LABEL`] with the cluster secret's UID) or when the existing one carries
//!   that label with **this** cluster secret's UID. Owner references cannot cross namespaces, so
//!   the label is the only mark; a spec field alone never takes over a Secret that exists.
//! - Never written, whatever its label says: a Secret another object controls (a controller
//!   owner reference), and a Secret Kubernetes acts on (a refused type or a ServiceAccount token
//!   annotation, as for a FerrVaultSecret's target).
//! - A refusal fails that namespace only: the caller judges each namespace on its own.

use k8s_openapi::api::core::v1::Secret;

use super::target_access::SERVICE_ACCOUNT_ANNOTATIONS;
use crate::api::{Reason, names::CLUSTER_SECRET_UID_LABEL, secret::REFUSED_TARGET_TYPES};

/// How one copy may be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CopyAccess {
    /// No Secret of that name: create it.
    Create,
    /// It is this cluster secret's copy: update it.
    Owned,
}

/// Why one copy may not be written, with the condition reason it is reported under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CopyRefusal {
    /// The fixed reason.
    pub(crate) reason: Reason,
    /// What the status says (no value: names, kinds and types only).
    pub(crate) message: String,
}

/// Whether the cluster secret with UID `uid` may write its copy `name` of type `desired_type`
/// over `existing` (as read, or as the Secret store's metadata shows it).
///
/// # Errors
/// The [`CopyRefusal`], checked in this order: a refused type asked for, a Secret Kubernetes acts
/// on, another controller, a Secret that is not this cluster secret's copy.
pub(crate) fn judge_copy(
    uid: &str,
    name: &str,
    desired_type: &str,
    existing: Option<&Secret>,
) -> Result<CopyAccess, CopyRefusal> {
    let refuse = |reason, message: String| Err(CopyRefusal { reason, message });
    if REFUSED_TARGET_TYPES.contains(&desired_type) {
        return refuse(
            Reason::TargetTypeRefused,
            format!("type {desired_type:?} is never written: Kubernetes turns it into credentials"),
        );
    }
    let Some(existing) = existing else {
        return Ok(CopyAccess::Create);
    };
    let meta = &existing.metadata;
    let type_ = existing.type_.as_deref().unwrap_or_default();
    let service_account = meta
        .annotations
        .as_ref()
        .is_some_and(|a| SERVICE_ACCOUNT_ANNOTATIONS.iter().any(|k| a.contains_key(*k)));
    if REFUSED_TARGET_TYPES.contains(&type_) || service_account {
        return refuse(
            Reason::TargetTypeRefused,
            format!("Secret {name:?} is one Kubernetes acts on: not written"),
        );
    }
    let controller = meta
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true));
    if let Some(controller) = controller {
        return refuse(
            Reason::TargetControlledByOther,
            format!(
                "Secret {name:?} is controlled by {} {:?}: not written",
                controller.kind, controller.name
            ),
        );
    }
    let labelled = meta.labels.as_ref().and_then(|l| l.get(CLUSTER_SECRET_UID_LABEL));
    if labelled.is_some_and(|label| label == uid) {
        Ok(CopyAccess::Owned)
    } else {
        refuse(
            Reason::TargetNotOwned,
            format!("Secret {name:?} exists and is not a copy of this ClusterFerrVaultSecret: not written"),
        )
    }
}

/// Whether `existing` is the copy of the cluster secret with UID `uid` (what it may delete).
pub(crate) fn is_copy_of(uid: &str, existing: &kube::api::ObjectMeta) -> bool {
    existing
        .labels
        .as_ref()
        .and_then(|l| l.get(CLUSTER_SECRET_UID_LABEL))
        .is_some_and(|label| label == uid)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    use serde_json::json;

    use super::*;

    fn secret(value: serde_json::Value) -> Secret {
        serde_json::from_value(value).expect("a Secret")
    }

    #[test]
    fn a_copy_should_be_created_when_missing_and_written_only_when_labelled_with_its_uid() {
        assert_eq!(judge_copy("u1", "db", "Opaque", None), Ok(CopyAccess::Create));
        let ours = secret(json!({"metadata": {"name": "db", "labels": {CLUSTER_SECRET_UID_LABEL: "u1"}}}));
        assert_eq!(
            judge_copy("u1", "db", "Opaque", Some(&ours)),
            Ok(CopyAccess::Owned)
        );
        assert!(is_copy_of("u1", &ours.metadata));
        let refused = judge_copy("u2", "db", "Opaque", Some(&ours)).unwrap_err();
        assert_eq!(
            refused.reason,
            Reason::TargetNotOwned,
            "another cluster secret's copy"
        );
        assert!(!is_copy_of("u2", &ours.metadata));
        let unlabelled = secret(json!({"metadata": {"name": "db"}}));
        let refused = judge_copy("u1", "db", "Opaque", Some(&unlabelled)).unwrap_err();
        assert_eq!(refused.reason, Reason::TargetNotOwned);
    }

    #[test]
    fn a_copy_should_never_overwrite_a_controlled_secret_or_one_kubernetes_acts_on() {
        let mut controlled =
            secret(json!({"metadata": {"name": "db", "labels": {CLUSTER_SECRET_UID_LABEL: "u1"}}}));
        controlled.metadata.owner_references = Some(vec![OwnerReference {
            controller: Some(true),
            kind: "FerrVaultSecret".into(),
            name: "db".into(),
            uid: "x".into(),
            ..OwnerReference::default()
        }]);
        let refused = judge_copy("u1", "db", "Opaque", Some(&controlled)).unwrap_err();
        assert_eq!(refused.reason, Reason::TargetControlledByOther);
        let token = secret(json!({
            "metadata": {"name": "db", "labels": {CLUSTER_SECRET_UID_LABEL: "u1"}},
            "type": "kubernetes.io/service-account-token",
        }));
        let refused = judge_copy("u1", "db", "Opaque", Some(&token)).unwrap_err();
        assert_eq!(refused.reason, Reason::TargetTypeRefused);
        let refused = judge_copy("u1", "db", "bootstrap.kubernetes.io/token", None).unwrap_err();
        assert_eq!(refused.reason, Reason::TargetTypeRefused);
    }
}
