//! The target Secret: what it must look like after a sync (pure), and the read and write. Whether
//! it may be written at all is decided before, by
//! [`target_access`](crate::reconcile::rules::access::target_access).
//!
//! # Guarantees
//! - The content is replaced, not merged: stale keys disappear. Values go to `data` as bytes,
//!   so binary `base64Decode` results survive.
//! - Labels and annotations set by others are kept; only `ferrvault.com/managed-by` and
//!   `ferrvault.com/content-hash` are stamped.
//! - The target gets this FerrVaultSecret as controller owner (`blockOwnerDeletion`); other,
//!   non-controller owner references are kept.
//! - Updates carry the read `resourceVersion`, so a concurrent edit is a conflict, not lost.
//! - A Secret's `type` is immutable, so a target whose type must change is replaced: deleted
//!   (only the version that was read: UID and `resourceVersion` preconditions) and created again
//!   at once with the same metadata, the new type and the content.

use std::collections::BTreeMap;

use k8s_openapi::{
    ByteString,
    api::core::v1::Secret,
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference},
};
use kube::{
    Api, Resource, ResourceExt,
    api::{DeleteParams, Preconditions},
};

use crate::reconcile::write::post_params;
use crate::{
    api::{
        FerrVaultSecret, FerrVaultSecretStatus,
        names::{CONTENT_HASH_ANNOTATION, MANAGED_BY_ANNOTATION, MANAGED_BY_VALUE},
    },
    reconcile::rules::content::SecretData,
};

/// The type the API server gives a Secret stored without one.
const IMPLICIT_TYPE: &str = "Opaque";

/// The target as it must be after this sync, starting from `existing` (or a new Secret named
/// `target` in the CR's namespace), controlled by `cr`. Ownership was judged before.
pub(crate) fn desired_target(
    existing: Option<&Secret>,
    cr: &FerrVaultSecret,
    target: &str,
    type_: &str,
    data: &SecretData,
    hash: &str,
) -> Secret {
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
    owners.retain(|o| o.uid != uid);
    let owner = cr
        .controller_owner_ref(&())
        .expect("a stored FerrVaultSecret has a name and uid");
    owners.push(OwnerReference {
        block_owner_deletion: Some(true),
        ..owner
    });
    secret.metadata.owner_references = Some(owners);
    let annotations = secret.metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert(MANAGED_BY_ANNOTATION.to_owned(), MANAGED_BY_VALUE.to_owned());
    annotations.insert(CONTENT_HASH_ANNOTATION.to_owned(), hash.to_owned());
    secret.data = Some(
        data.iter()
            .map(|(k, v)| (k.clone(), ByteString(v.clone())))
            .collect(),
    );
    secret.string_data = None;
    secret.type_ = Some(type_.to_owned());
    secret
}

/// The target as a pass knows it.
#[derive(Debug, Clone)]
pub(crate) enum KnownTarget {
    /// Read with a GET; `None`: it does not exist.
    Read(Option<Secret>),
    /// Not read: the Secret store shows it at the version the last sync left it
    /// (`status.targetResourceVersion`, at this generation), so it is that sync's target: its
    /// metadata as the store holds it, its type the spec's, and the content its content-hash
    /// annotation names. Its `data` is not known.
    AsLeft(Secret),
    /// Not read: the listed Secret store holds no Secret of that name and the status records no
    /// target this object wrote. Writing it is a create, which the API server refuses (409)
    /// should it exist after all (created since the store last heard): never an overwrite.
    Unlisted,
}

impl KnownTarget {
    /// The target as the last sync left it, when the Secret store's `stored` metadata shows the
    /// version that sync recorded (`status.targetResourceVersion`) and `status` was written at
    /// this `generation` (so the spec, hence the type, is the one that sync wrote); else `None`.
    pub(crate) fn as_left(
        stored: Option<&ObjectMeta>,
        status: &FerrVaultSecretStatus,
        generation: Option<i64>,
        type_: &str,
    ) -> Option<Self> {
        let stored = stored?;
        let recorded = status.target_resource_version.as_ref()?;
        (stored.resource_version.as_ref() == Some(recorded) && status.observed_generation == generation)
            .then(|| Self::left(stored, type_))
    }

    /// The target as the last sync left it, from `stored` metadata whose version the caller has
    /// checked against `status.targetResourceVersion` (see [`KnownTarget::as_left`]).
    pub(crate) fn left(stored: &ObjectMeta, type_: &str) -> Self {
        Self::AsLeft(Secret {
            metadata: stored.clone(),
            type_: Some(type_.to_owned()),
            ..Secret::default()
        })
    }

    /// The target as the pass judges it (`data` absent for [`KnownTarget::AsLeft`]).
    pub(crate) fn secret(&self) -> Option<&Secret> {
        match self {
            Self::Read(secret) => secret.as_ref(),
            Self::AsLeft(secret) => Some(secret),
            Self::Unlisted => None,
        }
    }

    /// Its `resourceVersion`.
    pub(crate) fn version(&self) -> Option<String> {
        self.secret()?.metadata.resource_version.clone()
    }
}

/// Whether writing `desired` over the target as known would change anything. For a target
/// [`KnownTarget::AsLeft`] the content is compared through its content-hash annotation: the
/// keyed hash names exactly one content.
pub(crate) fn needs_write(known: &KnownTarget, desired: &Secret) -> bool {
    let (existing, data_known) = match known {
        KnownTarget::Read(None) | KnownTarget::Unlisted => return true,
        KnownTarget::Read(Some(existing)) => (existing, true),
        KnownTarget::AsLeft(existing) => (existing, false),
    };
    let empty = BTreeMap::new();
    (data_known && existing.data.as_ref().unwrap_or(&empty) != desired.data.as_ref().unwrap_or(&empty))
        || existing.metadata.annotations != desired.metadata.annotations
        || existing.metadata.owner_references != desired.metadata.owner_references
        || type_changes(existing, desired)
}

/// Whether `desired` has another `type` than `existing` (which only a replacement can change).
fn type_changes(existing: &Secret, desired: &Secret) -> bool {
    let type_of = |s: &Secret| s.type_.clone().unwrap_or_else(|| IMPLICIT_TYPE.to_owned());
    type_of(existing) != type_of(desired)
}

/// The content-hash annotation of an existing target.
pub(crate) fn recorded_hash(existing: Option<&Secret>) -> Option<String> {
    existing?
        .metadata
        .annotations
        .as_ref()?
        .get(CONTENT_HASH_ANNOTATION)
        .cloned()
}

/// Creates, updates or (for a new type) replaces the target; returns the written Secret (its new
/// `resourceVersion`).
///
/// # Errors
/// The API error: a 409 when the Secret changed since it was read (or was recreated meanwhile).
pub(crate) async fn write(
    api: &Api<Secret>,
    existing: Option<&Secret>,
    desired: &Secret,
) -> Result<Secret, kube::Error> {
    let params = post_params();
    match existing {
        None => api.create(&params, desired).await,
        Some(existing) if type_changes(existing, desired) => replace_retyped(api, existing, desired).await,
        Some(_) => api.replace(&desired.name_any(), &params, desired).await,
    }
}

/// Replaces `existing` by `desired` of another type, which only a delete and a create can do.
///
/// NOTE: this is the operator's only Secret `delete` (issue 34 point 8; `docs/security.md`, RBAC):
/// only of a target it controls (judged before), only the version it read (UID and
/// `resourceVersion` preconditions, so a Secret replaced or edited since is a 409, not a loss),
/// and followed at once by the create. A FerrVaultSecret's deletion deletes nothing: its targets
/// go by their owner reference, through Kubernetes' garbage collector.
async fn replace_retyped(
    api: &Api<Secret>,
    existing: &Secret,
    desired: &Secret,
) -> Result<Secret, kube::Error> {
    let exactly_what_was_read = DeleteParams {
        preconditions: Some(Preconditions {
            uid: existing.uid(),
            resource_version: existing.resource_version(),
        }),
        ..DeleteParams::default()
    };
    api.delete(&desired.name_any(), &exactly_what_was_read).await?;
    api.create(&post_params(), &recreated(desired)).await
}

/// `desired` as a new object: what the server set on the old one (UID, versions, timestamps,
/// managed fields, finalizers) left out.
fn recreated(desired: &Secret) -> Secret {
    let meta = &desired.metadata;
    Secret {
        metadata: ObjectMeta {
            name: meta.name.clone(),
            namespace: meta.namespace.clone(),
            labels: meta.labels.clone(),
            annotations: meta.annotations.clone(),
            owner_references: meta.owner_references.clone(),
            ..ObjectMeta::default()
        },
        data: desired.data.clone(),
        type_: desired.type_.clone(),
        immutable: desired.immutable,
        ..Secret::default()
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

    fn existing() -> Secret {
        Secret {
            metadata: ObjectMeta {
                name: Some("app".into()),
                labels: Some([("team".to_owned(), "shop".to_owned())].into()),
                owner_references: Some(vec![OwnerReference {
                    api_version: "v1".into(),
                    kind: "ConfigMap".into(),
                    name: "other".into(),
                    uid: "uid-other".into(),
                    controller: None,
                    block_owner_deletion: None,
                }]),
                uid: Some("secret-uid".into()),
                resource_version: Some("7".into()),
                finalizers: Some(vec!["example.com/keep".into()]),
                ..ObjectMeta::default()
            },
            data: Some([("STALE".to_owned(), ByteString(b"old".to_vec()))].into()),
            ..Secret::default()
        }
    }

    fn data() -> SecretData {
        [("A".to_owned(), vec![0xff, 0x00])].into()
    }

    #[test]
    fn the_target_should_have_its_content_replaced_keep_labels_and_be_controlled() {
        let desired = desired_target(Some(&existing()), &cr(), "app", "Opaque", &data(), "h");
        assert_eq!(
            desired.data.as_ref().unwrap().keys().collect::<Vec<_>>(),
            vec!["A"]
        );
        assert_eq!(desired.data.as_ref().unwrap()["A"].0, vec![0xff, 0x00]);
        assert_eq!(desired.metadata.labels.as_ref().unwrap()["team"], "shop");
        let owners = desired.metadata.owner_references.clone().unwrap();
        assert_eq!(owners.len(), 2, "the non-controller owner is kept");
        assert_eq!(
            (
                owners[1].uid.as_str(),
                owners[1].controller,
                owners[1].block_owner_deletion
            ),
            ("uid-1", Some(true), Some(true))
        );
        assert_eq!(
            desired.metadata.annotations.unwrap()[CONTENT_HASH_ANNOTATION],
            "h"
        );
    }

    #[test]
    fn an_identical_target_should_not_be_rewritten() {
        let desired = desired_target(None, &cr(), "app", "Opaque", &data(), "h");
        assert!(needs_write(&KnownTarget::Read(None), &desired));
        assert!(!needs_write(&KnownTarget::Read(Some(desired.clone())), &desired));
        assert_eq!(recorded_hash(Some(&desired)).as_deref(), Some("h"));
        assert_eq!(desired.type_.as_deref(), Some("Opaque"));
    }

    #[test]
    fn a_target_as_left_should_be_compared_through_its_content_hash() {
        let mut as_left = desired_target(None, &cr(), "app", "Opaque", &data(), "h");
        as_left.data = None;
        let known = KnownTarget::AsLeft(as_left.clone());
        let same = desired_target(Some(&as_left), &cr(), "app", "Opaque", &data(), "h");
        assert!(!needs_write(&known, &same), "same hash: same content");
        let changed = [("A".to_owned(), b"new".to_vec())].into();
        let other = desired_target(Some(&as_left), &cr(), "app", "Opaque", &changed, "h2");
        assert!(needs_write(&known, &other), "another hash: another content");
        let retyped = desired_target(Some(&as_left), &cr(), "app", "kubernetes.io/tls", &data(), "h");
        assert!(needs_write(&known, &retyped), "another type");
    }

    #[test]
    fn a_new_type_should_be_a_write_and_a_recreation_without_server_fields() {
        let mut stored = desired_target(Some(&existing()), &cr(), "app", "Opaque", &data(), "h");
        stored.type_ = None; // as a server that defaulted it may omit it: Opaque
        let known = KnownTarget::Read(Some(stored.clone()));
        assert!(!needs_write(
            &known,
            &desired_target(Some(&stored), &cr(), "app", "Opaque", &data(), "h")
        ));
        let tls = desired_target(Some(&stored), &cr(), "app", "kubernetes.io/tls", &data(), "h");
        assert!(needs_write(&known, &tls));
        let fresh = recreated(&tls);
        assert_eq!(fresh.type_.as_deref(), Some("kubernetes.io/tls"));
        assert_eq!(fresh.data, tls.data);
        assert_eq!(fresh.metadata.labels, tls.metadata.labels);
        assert_eq!(fresh.metadata.owner_references, tls.metadata.owner_references);
        assert_eq!(
            (
                fresh.metadata.uid,
                fresh.metadata.resource_version,
                fresh.metadata.finalizers
            ),
            (None, None, None)
        );
    }
}
