//! The target Secret: what it must look like after a sync (pure), and the read and write. Whether
//! it may be written at all is decided before, by
//! [`target_access`](crate::reconcile::rules::access::target_access).
//!
//! # Guarantees
//! - The content is replaced, not merged: stale keys disappear. Values go to `data` as bytes,
//!   so binary `base64Decode` results survive. Under `creationPolicy: Merge` only the keys this
//!   FerrVaultSecret writes are replaced (a key it wrote before, in `status.syncedKeys`, and no
//!   longer produces is removed); the keys others wrote stay.
//! - Labels and annotations set by others are kept; `ferrvault.com/managed-by` and
//!   `ferrvault.com/content-hash` are stamped, and `target.metadata`'s keys set, those of the last
//!   sync's (`status.ownedLabels`, `ownedAnnotations`) no longer in it removed
//!   ([`owned_map`]).
//! - Under `creationPolicy: Owner` (the default) the target gets this FerrVaultSecret as
//!   controller owner (`blockOwnerDeletion`); under `Orphan` and `Merge` it gets no owner
//!   reference of ours (one left by an earlier `Owner` is removed), and an `Orphan` target is
//!   stamped `ferrvault.com/adoptable-by` with this FerrVaultSecret's name (what lets it write
//!   the Secret again). Other owner references are kept.
//! - `target.immutable: true` writes `immutable: true`.
//! - Updates carry the read `resourceVersion`, so a concurrent edit is a conflict, not lost.
//! - A Secret's `type` is immutable, and so are an immutable Secret's content and flag, so a
//!   target whose type must change (or an immutable one under `immutableChange: Replace`) is
//!   replaced: deleted (only the version that was read: UID and `resourceVersion`
//!   preconditions) and created again at once with the same metadata and the new content
//!   ([`target_write`]).

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
        CreationPolicy, FerrVaultSecret, FerrVaultSecretSpec, FerrVaultSecretStatus,
        names::{ADOPTABLE_BY_ANNOTATION, CONTENT_HASH_ANNOTATION, MANAGED_BY_ANNOTATION, MANAGED_BY_VALUE},
    },
    reconcile::rules::content::{
        SecretData,
        target_shape::{TargetWrite, data_changes, is_immutable, owned_map, target_write, type_changes},
    },
};

/// The target as it must be after this sync, starting from `existing` (or a new Secret named
/// `target` in the CR's namespace), shaped by `cr`'s `target` (owner, metadata, immutability) over
/// what the last sync recorded owning (`previous`). Ownership was judged before.
pub(crate) fn desired_target(
    existing: Option<&Secret>,
    cr: &FerrVaultSecret,
    previous: &FerrVaultSecretStatus,
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
    let policy = cr.spec.creation_policy();
    let uid = cr.uid().unwrap_or_default();
    let mut owners: Vec<OwnerReference> = secret.metadata.owner_references.take().unwrap_or_default();
    owners.retain(|o| o.uid != uid);
    if policy == CreationPolicy::Owner {
        let owner = cr
            .controller_owner_ref(&())
            .expect("a stored FerrVaultSecret has a name and uid");
        owners.push(OwnerReference {
            block_owner_deletion: Some(true),
            ..owner
        });
    }
    secret.metadata.owner_references = (!owners.is_empty()).then_some(owners);
    let shape = cr.spec.target_metadata();
    secret.metadata.labels = owned_map(
        secret.metadata.labels.as_ref(),
        &previous.owned_labels,
        &shape.labels,
    );
    let mut annotations = owned_map(
        secret.metadata.annotations.as_ref(),
        &previous.owned_annotations,
        &shape.annotations,
    )
    .unwrap_or_default();
    annotations.insert(MANAGED_BY_ANNOTATION.to_owned(), MANAGED_BY_VALUE.to_owned());
    annotations.insert(CONTENT_HASH_ANNOTATION.to_owned(), hash.to_owned());
    if policy == CreationPolicy::Orphan {
        annotations.insert(ADOPTABLE_BY_ANNOTATION.to_owned(), cr.name_any());
    }
    secret.metadata.annotations = Some(annotations);
    let ours: BTreeMap<String, ByteString> = data
        .iter()
        .map(|(k, v)| (k.clone(), ByteString(v.clone())))
        .collect();
    secret.data = match policy {
        CreationPolicy::Merge => owned_map(secret.data.as_ref(), &previous.synced_keys, &ours),
        CreationPolicy::Owner | CreationPolicy::Orphan => Some(ours),
    };
    secret.string_data = None;
    secret.type_ = Some(type_.to_owned());
    secret.immutable = cr.spec.target_immutable().then_some(true);
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
        spec: &FerrVaultSecretSpec,
    ) -> Option<Self> {
        let stored = stored?;
        let recorded = status.target_resource_version.as_ref()?;
        (stored.resource_version.as_ref() == Some(recorded) && status.observed_generation == generation)
            .then(|| Self::left(stored, spec))
    }

    /// The target as the last sync left it, from `stored` metadata whose version the caller has
    /// checked against `status.targetResourceVersion` (see [`KnownTarget::as_left`]). What the
    /// store does not keep of it is what that sync wrote from `spec` (the same generation): the
    /// type, the immutable flag, and `target.metadata`'s labels and annotations (the store keeps
    /// none of a Secret's labels, and of its annotations only the operator's own).
    pub(crate) fn left(stored: &ObjectMeta, spec: &FerrVaultSecretSpec) -> Self {
        let mut metadata = stored.clone();
        let shape = spec.target_metadata();
        if !shape.labels.is_empty() {
            metadata.labels = Some(shape.labels.clone());
        }
        if !shape.annotations.is_empty() {
            let annotations = metadata.annotations.get_or_insert_with(BTreeMap::new);
            annotations.extend(shape.annotations.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        Self::AsLeft(Secret {
            metadata,
            type_: Some(spec.target_type().to_owned()),
            immutable: spec.target_immutable().then_some(true),
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
    (data_known && data_changes(existing, desired))
        || existing.metadata.annotations != desired.metadata.annotations
        || existing.metadata.labels != desired.metadata.labels
        || existing.metadata.owner_references != desired.metadata.owner_references
        || is_immutable(existing) != is_immutable(desired)
        || type_changes(existing, desired)
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

/// A write of the target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Write<'a> {
    /// It does not exist (or is not known to): a create, never an overwrite.
    Create,
    /// An update of the version read.
    Update,
    /// A delete of the version read and a create ([`target_write`]).
    Replace {
        /// The version read.
        existing: &'a Secret,
        /// Restart the rollout targets whatever the content hash says (an immutable target).
        restart: bool,
    },
}

/// The target is immutable, the change needs a replacement and `immutableChange` is `Refuse`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ImmutableRefused;

/// The write that makes the target as `known` into `desired` under `spec`'s `immutableChange`:
/// `None` when nothing would change.
///
/// # Errors
/// [`ImmutableRefused`] when only a replacement of an immutable target could make it.
pub(crate) fn write_for<'a>(
    known: &'a KnownTarget,
    desired: &Secret,
    spec: &FerrVaultSecretSpec,
) -> Result<Option<Write<'a>>, ImmutableRefused> {
    if !needs_write(known, desired) {
        return Ok(None);
    }
    let Some(existing) = known.secret() else {
        return Ok(Some(Write::Create));
    };
    match target_write(existing, desired, spec.immutable_change()) {
        TargetWrite::Update => Ok(Some(Write::Update)),
        TargetWrite::Replace { restart } => Ok(Some(Write::Replace { existing, restart })),
        TargetWrite::RefuseImmutable => Err(ImmutableRefused),
    }
}

/// Makes `write` of `desired`; returns the written Secret (its new `resourceVersion`).
///
/// # Errors
/// The API error: a 409 when the Secret changed since it was read (or was recreated meanwhile).
pub(crate) async fn write(
    api: &Api<Secret>,
    write: Write<'_>,
    desired: &Secret,
) -> Result<Secret, kube::Error> {
    let params = post_params();
    match write {
        Write::Create => api.create(&params, desired).await,
        Write::Update => api.replace(&desired.name_any(), &params, desired).await,
        Write::Replace { existing, .. } => replace(api, existing, desired).await,
    }
}

/// Replaces `existing` by `desired`, which only a delete and a create can do: a new type, or an
/// immutable Secret's new content or flag.
///
/// NOTE: this is the operator's only Secret `delete` (issue 34 point 8; `docs/security.md`, RBAC):
/// only of a target it may write (judged before), only the version it read (UID and
/// `resourceVersion` preconditions, so a Secret replaced or edited since is a 409, not a loss),
/// and followed at once by the create. A FerrVaultSecret's deletion deletes nothing: its targets
/// go by their owner reference, through Kubernetes' garbage collector.
async fn replace(api: &Api<Secret>, existing: &Secret, desired: &Secret) -> Result<Secret, kube::Error> {
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
    use crate::reconcile::fixtures;

    /// The reconcilers' fixture `app`, in `ns` with a UID and no generation.
    fn cr() -> FerrVaultSecret {
        let mut cr = fixtures::secret(1, None);
        cr.metadata.namespace = Some("ns".into());
        cr.metadata.uid = Some("uid-1".into());
        cr.metadata.generation = None;
        cr
    }

    /// The target `app` of [`cr`] before any sync.
    fn desired(existing: Option<&Secret>, type_: &str, data: &SecretData, hash: &str) -> Secret {
        desired_target(
            existing,
            &cr(),
            &FerrVaultSecretStatus::default(),
            "app",
            type_,
            data,
            hash,
        )
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
        let desired = desired(Some(&existing()), "Opaque", &data(), "h");
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
        let desired = desired(None, "Opaque", &data(), "h");
        assert!(needs_write(&KnownTarget::Read(None), &desired));
        assert!(!needs_write(&KnownTarget::Read(Some(desired.clone())), &desired));
        assert_eq!(recorded_hash(Some(&desired)).as_deref(), Some("h"));
        assert_eq!(desired.type_.as_deref(), Some("Opaque"));
    }

    #[test]
    fn a_target_as_left_should_be_compared_through_its_content_hash() {
        let mut as_left = desired(None, "Opaque", &data(), "h");
        as_left.data = None;
        let known = KnownTarget::AsLeft(as_left.clone());
        let same = desired(Some(&as_left), "Opaque", &data(), "h");
        assert!(!needs_write(&known, &same), "same hash: same content");
        let changed = [("A".to_owned(), b"new".to_vec())].into();
        let other = desired(Some(&as_left), "Opaque", &changed, "h2");
        assert!(needs_write(&known, &other), "another hash: another content");
        let retyped = desired(Some(&as_left), "kubernetes.io/tls", &data(), "h");
        assert!(needs_write(&known, &retyped), "another type");
    }

    #[test]
    fn a_new_type_should_be_a_write_and_a_recreation_without_server_fields() {
        let mut stored = desired(Some(&existing()), "Opaque", &data(), "h");
        stored.type_ = None; // as a server that defaulted it may omit it: Opaque
        let known = KnownTarget::Read(Some(stored.clone()));
        assert!(!needs_write(
            &known,
            &desired(Some(&stored), "Opaque", &data(), "h")
        ));
        let tls = desired(Some(&stored), "kubernetes.io/tls", &data(), "h");
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
