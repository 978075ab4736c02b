//! The target Secret: what it must look like after a sync (pure), and the read and write.
//!
//! # Guarantees
//! - The content is replaced, not merged: stale keys disappear. Values go to `data` as bytes,
//!   so binary `base64Decode` results survive.
//! - Labels and annotations set by others are kept; only `ferrvault.com/managed-by` and
//!   `ferrvault.com/content-hash` are stamped.
//! - An owned target gets this FerrVaultSecret as controller owner (`blockOwnerDeletion`),
//!   adopting an unowned Secret; one controlled by anything else is never touched.
//! - The connection's token Secret (`Unowned`) never gets an owner reference from us (one is
//!   stripped), and its keys that the sync does not produce are kept: writing the token
//!   target must not drop unrelated keys (reference §8 item 12).
//! - Updates carry the read `resourceVersion`, so a concurrent edit is a conflict, not lost.

use std::collections::BTreeMap;

use k8s_openapi::{
    ByteString,
    api::core::v1::Secret,
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference},
};
use kube::{Api, Resource, ResourceExt};

use crate::reconcile::field_manager::post_params;
use crate::{
    api::{
        FerrVaultSecret,
        names::{CONTENT_HASH_ANNOTATION, MANAGED_BY_ANNOTATION, MANAGED_BY_VALUE},
    },
    reconcile::rules::SecretData,
};

/// Largest content written to a Secret: the API server refuses Secrets over 1 MiB.
pub const MAX_SECRET_BYTES: usize = 1024 * 1024;

/// How the target is written (from the token-target guard).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ownership {
    /// Controlled by the FerrVaultSecret; content replaced.
    Owned,
    /// The connection's token Secret: never owned by us; synced keys written, others kept.
    Unowned,
}

/// Why the target cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetConflict {
    /// Another controller owns the Secret.
    #[error("Secret {target} is already controlled by {kind} {name:?}")]
    ControlledByOther {
        /// The target's name.
        target: String,
        /// The controlling owner's kind.
        kind: String,
        /// The controlling owner's name.
        name: String,
    },
}

/// Total size of keys and values, as the API server counts a Secret's data.
pub fn payload_bytes(data: &SecretData) -> usize {
    data.iter().map(|(k, v)| k.len() + v.len()).sum()
}

/// The target as it must be after this sync, starting from `existing` (or a new Secret named
/// `target` in the CR's namespace).
///
/// # Errors
/// [`TargetConflict::ControlledByOther`] for an owned target controlled by someone else.
pub fn desired_target(
    existing: Option<&Secret>,
    cr: &FerrVaultSecret,
    target: &str,
    type_: &str,
    data: &SecretData,
    hash: &str,
    ownership: Ownership,
) -> Result<Secret, TargetConflict> {
    let mut secret = existing.cloned().unwrap_or_else(|| Secret {
        metadata: ObjectMeta {
            name: Some(target.to_owned()),
            namespace: cr.namespace(),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    });
    let uid = cr.uid().unwrap_or_default();
    let mut owners: Vec<OwnerReference> = secret.metadata.owner_references.take().unwrap_or_default();
    match ownership {
        Ownership::Owned => {
            if let Some(other) = owners.iter().find(|o| o.controller == Some(true) && o.uid != uid) {
                return Err(TargetConflict::ControlledByOther {
                    target: target.to_owned(),
                    kind: other.kind.clone(),
                    name: other.name.clone(),
                });
            }
            owners.retain(|o| o.uid != uid);
            let owner = cr
                .controller_owner_ref(&())
                .expect("a stored FerrVaultSecret has a name and uid");
            owners.push(OwnerReference {
                block_owner_deletion: Some(true),
                ..owner
            });
        }
        Ownership::Unowned => owners.retain(|o| o.uid != uid),
    }
    secret.metadata.owner_references = (!owners.is_empty()).then_some(owners);
    let annotations = secret.metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert(MANAGED_BY_ANNOTATION.to_owned(), MANAGED_BY_VALUE.to_owned());
    annotations.insert(CONTENT_HASH_ANNOTATION.to_owned(), hash.to_owned());
    let mut content: BTreeMap<String, ByteString> = match ownership {
        Ownership::Owned => BTreeMap::new(),
        Ownership::Unowned => secret.data.take().unwrap_or_default(),
    };
    content.extend(data.iter().map(|(k, v)| (k.clone(), ByteString(v.clone()))));
    secret.data = Some(content);
    secret.string_data = None;
    if existing.is_none() {
        secret.type_ = Some(type_.to_owned());
    }
    Ok(secret)
}

/// Whether writing `desired` over `existing` would change anything.
pub fn needs_write(existing: Option<&Secret>, desired: &Secret) -> bool {
    let Some(existing) = existing else {
        return true;
    };
    let empty = BTreeMap::new();
    existing.data.as_ref().unwrap_or(&empty) != desired.data.as_ref().unwrap_or(&empty)
        || existing.metadata.annotations != desired.metadata.annotations
        || existing.metadata.owner_references != desired.metadata.owner_references
}

/// The content-hash annotation of an existing target.
pub fn recorded_hash(existing: Option<&Secret>) -> Option<String> {
    existing?
        .metadata
        .annotations
        .as_ref()?
        .get(CONTENT_HASH_ANNOTATION)
        .cloned()
}

/// Creates or replaces the target; returns the written Secret (its new `resourceVersion`).
///
/// # Errors
/// The API error (a 409 when the Secret changed since it was read).
pub async fn write(
    api: &Api<Secret>,
    existing: Option<&Secret>,
    desired: &Secret,
) -> Result<Secret, kube::Error> {
    let params = post_params();
    match existing {
        None => api.create(&params, desired).await,
        Some(_) => api.replace(&desired.name_any(), &params, desired).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{ConnectionRef, FerrVaultSecretSpec};

    fn cr() -> FerrVaultSecret {
        let mut cr = FerrVaultSecret::new(
            "app",
            FerrVaultSecretSpec {
                connection_ref: ConnectionRef { name: "conn".into() },
                project: None,
                vault: "prod".into(),
                selector: None,
                target: None,
                refresh_interval: "1h".into(),
                rollout_restart: vec![],
                transforms: vec![],
            },
        );
        cr.metadata.namespace = Some("ns".into());
        cr.metadata.uid = Some("uid-1".into());
        cr
    }

    fn existing(owner_uid: Option<&str>) -> Secret {
        Secret {
            metadata: ObjectMeta {
                name: Some("app".into()),
                labels: Some([("team".to_owned(), "shop".to_owned())].into()),
                owner_references: owner_uid.map(|uid| {
                    vec![OwnerReference {
                        api_version: "apps/v1".into(),
                        kind: "Deployment".into(),
                        name: "other".into(),
                        uid: uid.into(),
                        controller: Some(true),
                        block_owner_deletion: None,
                    }]
                }),
                ..ObjectMeta::default()
            },
            data: Some(
                [
                    ("STALE".to_owned(), ByteString(b"old".to_vec())),
                    ("token".to_owned(), ByteString(b"t".to_vec())),
                ]
                .into(),
            ),
            ..Secret::default()
        }
    }

    fn data() -> SecretData {
        [("A".to_owned(), vec![0xff, 0x00])].into()
    }

    #[test]
    fn owned_target_should_replace_content_keep_labels_and_be_controlled() {
        let desired = desired_target(
            Some(&existing(None)),
            &cr(),
            "app",
            "Opaque",
            &data(),
            "h",
            Ownership::Owned,
        )
        .unwrap();
        assert_eq!(
            desired.data.as_ref().unwrap().keys().collect::<Vec<_>>(),
            vec!["A"]
        );
        assert_eq!(desired.data.as_ref().unwrap()["A"].0, vec![0xff, 0x00]);
        assert_eq!(desired.metadata.labels.as_ref().unwrap()["team"], "shop");
        let owners = desired.metadata.owner_references.unwrap();
        assert_eq!(owners.len(), 1);
        assert_eq!(
            (owners[0].controller, owners[0].block_owner_deletion),
            (Some(true), Some(true))
        );
        assert_eq!(
            desired.metadata.annotations.unwrap()[CONTENT_HASH_ANNOTATION],
            "h"
        );
    }

    #[test]
    fn target_controlled_by_another_should_be_refused() {
        let refused = desired_target(
            Some(&existing(Some("x"))),
            &cr(),
            "app",
            "Opaque",
            &data(),
            "h",
            Ownership::Owned,
        );
        assert!(matches!(refused, Err(TargetConflict::ControlledByOther { .. })));
    }

    #[test]
    fn unowned_target_should_keep_other_keys_and_drop_our_owner_reference() {
        let mut token = existing(Some("uid-1"));
        token.data.as_mut().unwrap().remove("STALE");
        let desired = desired_target(
            Some(&token),
            &cr(),
            "app",
            "Opaque",
            &data(),
            "h",
            Ownership::Unowned,
        )
        .unwrap();
        assert_eq!(
            desired.data.as_ref().unwrap().keys().collect::<Vec<_>>(),
            vec!["A", "token"]
        );
        assert_eq!(desired.metadata.owner_references, None);
    }

    #[test]
    fn an_identical_target_should_not_be_rewritten() {
        let desired = desired_target(None, &cr(), "app", "Opaque", &data(), "h", Ownership::Owned).unwrap();
        assert!(needs_write(None, &desired));
        assert!(!needs_write(Some(&desired), &desired));
        assert_eq!(recorded_hash(Some(&desired)).as_deref(), Some("h"));
        assert_eq!(desired.type_.as_deref(), Some("Opaque"));
    }
}
