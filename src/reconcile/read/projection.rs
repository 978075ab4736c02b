//! What the watches' stores keep of each object: one projection per watched kind, the `trim` of
//! its watch ([`WatchSpec::trim`](controller_actors::WatchSpec::trim)), so the operator's memory
//! does not grow with what tenants write (issue 34, point 3). Each runs on every listed or watched
//! object before the filter, the mapper and the store see it; what it drops no filter compares,
//! so a change of a dropped field enqueues nothing.
//!
//! # What survives, and who reads it
//! Metadata is rebuilt from an allow-list: a field Kubernetes adds later is dropped, not kept.
//!
//! | kind | kept | read by |
//! |---|---|---|
//! | Secret (metadata) | name, namespace, UID, `resourceVersion`, deletion timestamp | the stores' lookups; [`inputs`](crate::reconcile::read::inputs) and [`secret_values`](crate::reconcile::read::secret_values) (versions); `secret_change_matters`, `KnownTarget::as_left` |
//! | | the controller owner reference (none other) | `controlling_secret`; `judge_target` and `needs_write` on a target as our last write left it |
//! | | annotations [`MANAGED_BY_ANNOTATION`], [`CONTENT_HASH_ANNOTATION`], [`ADOPTABLE_BY_ANNOTATION`] | `secret_change_matters`, `needs_write`, `recorded_hash`, `judge_target` |
//! | | annotations [`SERVICE_ACCOUNT_ANNOTATIONS`], presence only | `judge_target` (`kubernetes_marker`) |
//! | | label [`CLUSTER_SECRET_UID_LABEL`] (no other label) | a ClusterFerrVaultSecret's pass: which Secrets are its copies (`judge_copy`, `is_copy_of`) |
//! | FerrVaultSecret, FerrVaultConnection | name, namespace, UID, `resourceVersion`, generation, creation and deletion timestamps, finalizers | the stores' lookups, both reconcilers' prologue, `cr_change_matters`, the settled rules, Events |
//! | | annotation [`FORCE_SYNC_ANNOTATION`], its value bounded ([`force_token`]: a longer one as its digest) | `cr_change_matters`, the rule `explain` |
//! | | spec, status | both reconcilers, the mappers (`connectionRef`, `target.name`, the Secrets a connection reads), the dependants filter (Ready status) |
//!
//! Not kept, because no reconciler reads them: labels and annotations of the custom resources
//! (all of them but the force-sync one), Secrets' labels (but the cluster secret's) and every other annotation, owner references
//! of the custom resources and non-controller ones of Secrets, Secrets' finalizers,
//! `generateName`, `managedFields`, `selfLink`, `deletionGracePeriodSeconds`. Nor the labels and
//! annotations a target gets from its FerrVaultSecret's `target.metadata`: a target the store
//! shows at the version the last sync left, at this generation, carries what the spec says, so
//! `KnownTarget::left` takes them from the spec (as it takes the type and the immutable flag),
//! and any other version is read with a GET before it is written. The credential
//! opt-in label is not read from here either: the opt-in also depends on a Secret's `type`, which
//! metadata lacks, so it is judged on the Secret read for its value
//! ([`secret_values`](crate::reconcile::read::secret_values)), labels and type of that same version.
//!
//! # Guarantees
//! - A Secret's stored metadata holds at most a few KiB whatever the Secret carries: each kept
//!   annotation and owner-reference string is at most [`MAX_KEPT_VALUE`] bytes (a longer
//!   one is dropped: nothing a reconciler compares it with is that long, so it reads the same).
//! - A custom resource keeps its spec and finalizers whole while what could be dropped of them
//!   (a FerrVaultSecret's `selector`, `transforms` and `rolloutRestart`; finalizers other than
//!   ours) holds at most [`CACHED_BUDGET`] bytes. Beyond, the store keeps none of it and marks
//!   the object [`PARTIAL_ANNOTATION`]; a pass reads such an object with a GET
//!   ([`reads`](crate::reconcile::read::cr_store)), so the fields dropped are read only where they are
//!   needed, never from the store. The mappers and filters read none of them.
//! - The marker cannot be forged: custom resources keep no annotation of their own but the
//!   force-sync one, so the only other one a stored object can carry is the projection's.
//!
//! # Caveats
//! The watch still receives and decodes each object whole (one at a time) before it is
//! projected: the projection bounds what is kept, not what passes through.

use std::{collections::BTreeMap, mem::size_of};

use k8s_openapi::{api::core::v1::Secret, apimachinery::pkg::apis::meta::v1::OwnerReference};
use kube::{Resource, api::ObjectMeta, core::PartialObjectMeta};

use crate::{
    api::{
        FerrVaultConnection, FerrVaultSecret, FerrVaultSecretSpec, Lenient,
        names::{
            ADOPTABLE_BY_ANNOTATION, CLUSTER_SECRET_UID_LABEL, CONNECTION_FINALIZER, CONTENT_HASH_ANNOTATION,
            FORCE_SYNC_ANNOTATION, MANAGED_BY_ANNOTATION, SECRET_FINALIZER,
        },
    },
    reconcile::rules::{
        access::target_access::SERVICE_ACCOUNT_ANNOTATIONS, schedule::force_sync::force_token,
    },
};

/// The longest annotation or owner-reference string a Secret's stored metadata keeps:
/// 253 bytes, a Kubernetes name. What the reconcilers compare kept values with (a FerrVaultSecret
/// name, our 64-character content hash, `ferrvault-operator`, `true`, our UIDs and kinds) is never
/// longer, so a longer value compares unequal whether it is kept or not.
pub(crate) const MAX_KEPT_VALUE: usize = 253;

/// What a custom resource's stored spec and finalizers may hold of what the projection could drop
/// (see the module), in bytes: 4 KiB, many times a real manifest's selector and transforms.
/// Counted as the strings' bytes plus a `String` each, what they cost in memory.
pub(crate) const CACHED_BUDGET: usize = 4 * 1024;

/// Marks a stored custom resource whose spec lists and foreign finalizers were dropped (over
/// [`CACHED_BUDGET`]): a pass must read it with a GET. Set only by the projection, in the store;
/// never written to the API server.
pub(crate) const PARTIAL_ANNOTATION: &str = "ferrvault.com/partially-cached";

/// How much of a kept annotation the reconcilers need.
#[derive(Clone, Copy)]
enum Keep {
    /// Its value (compared for equality), when at most [`MAX_KEPT_VALUE`] bytes.
    Value,
    /// Only that it is there (its value is stored empty).
    Presence,
}

/// The Secret annotations the reconcilers read (see the module's table).
const SECRET_ANNOTATIONS: [(&str, Keep); 5] = [
    (MANAGED_BY_ANNOTATION, Keep::Value),
    (CONTENT_HASH_ANNOTATION, Keep::Value),
    (ADOPTABLE_BY_ANNOTATION, Keep::Value),
    (SERVICE_ACCOUNT_ANNOTATIONS[0], Keep::Presence),
    (SERVICE_ACCOUNT_ANNOTATIONS[1], Keep::Presence),
];

/// The `secret-metadata` watches' projection.
pub(crate) fn secret_metadata(secret: &mut PartialObjectMeta<Secret>) {
    secret.types = None;
    let meta = std::mem::take(&mut secret.metadata);
    secret.metadata = ObjectMeta {
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resource_version: meta.resource_version,
        deletion_timestamp: meta.deletion_timestamp,
        owner_references: controller(meta.owner_references),
        annotations: kept(meta.annotations, &SECRET_ANNOTATIONS),
        labels: cluster_secret_label(meta.labels),
        ..ObjectMeta::default()
    };
}

/// Of a Secret's labels, only [`CLUSTER_SECRET_UID_LABEL`] (a UID, at most 63 bytes): what marks a
/// ClusterFerrVaultSecret's copy, so its passes find and judge their copies without a GET.
fn cluster_secret_label(labels: Option<BTreeMap<String, String>>) -> Option<BTreeMap<String, String>> {
    let (key, value) = labels?.remove_entry(CLUSTER_SECRET_UID_LABEL)?;
    (value.len() <= MAX_KEPT_VALUE).then(|| BTreeMap::from([(key, value)]))
}

/// The `ferrvaultsecret` watches' projection.
pub(crate) fn ferrvault_secret(object: &mut Lenient<FerrVaultSecret>) {
    let dropped_spec = match object {
        Lenient::Valid(cr) => droppable_spec_bytes(&cr.spec),
        Lenient::Invalid(_) => 0,
    };
    let partial = project_cr_meta(object.meta_mut(), SECRET_FINALIZER, dropped_spec);
    if let (true, Lenient::Valid(cr)) = (partial, object) {
        cr.spec.selector = None;
        cr.spec.transforms = Vec::new();
        cr.spec.rollout_restart = Vec::new();
    }
}

/// The projection of both `ferrvaultconnection` watches (a connection's spec is small: its
/// strings are bounded by the CRD).
pub(crate) fn ferrvault_connection(object: &mut Lenient<FerrVaultConnection>) {
    project_cr_meta(object.meta_mut(), CONNECTION_FINALIZER, 0);
}

/// Whether a stored custom resource is partial (see [`PARTIAL_ANNOTATION`]).
pub(crate) fn is_partial(meta: &ObjectMeta) -> bool {
    meta.annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(PARTIAL_ANNOTATION))
}

/// Rebuilds a custom resource's metadata from the allow-list; over budget (its foreign
/// finalizers plus `dropped_spec`), keeps only `ours` of the finalizers and marks it partial.
/// Returns whether it is partial (the caller then drops the spec's lists).
fn project_cr_meta(meta: &mut ObjectMeta, ours: &str, dropped_spec: usize) -> bool {
    let old = std::mem::take(meta);
    let mut finalizers = old.finalizers;
    let foreign: usize = finalizers
        .iter()
        .flatten()
        .filter(|f| *f != ours)
        .map(|f| cost(f))
        .sum();
    let partial = foreign + dropped_spec > CACHED_BUDGET;
    if partial && let Some(list) = finalizers.as_mut() {
        list.retain(|f| f == ours);
    }
    let mut annotations = BTreeMap::new();
    if let Some(token) = force_token(old.annotations.as_ref()) {
        annotations.insert(FORCE_SYNC_ANNOTATION.to_owned(), token);
    }
    if partial {
        annotations.insert(PARTIAL_ANNOTATION.to_owned(), String::new());
    }
    *meta = ObjectMeta {
        name: old.name,
        namespace: old.namespace,
        uid: old.uid,
        resource_version: old.resource_version,
        generation: old.generation,
        creation_timestamp: old.creation_timestamp,
        deletion_timestamp: old.deletion_timestamp,
        finalizers,
        annotations: (!annotations.is_empty()).then_some(annotations),
        ..ObjectMeta::default()
    };
    partial
}

/// What a FerrVaultSecret's lists cost in memory (see [`CACHED_BUDGET`]).
fn droppable_spec_bytes(spec: &FerrVaultSecretSpec) -> usize {
    let names: usize = spec.selected_names().iter().map(|n| cost(n)).sum();
    let transforms: usize = spec
        .transforms
        .iter()
        .map(|t| {
            [&t.value, &t.from, &t.to, &t.key]
                .into_iter()
                .flatten()
                .chain(&t.keys)
                .map(|s| cost(s))
                .sum::<usize>()
        })
        .sum();
    let rollout: usize = spec.rollout_restart.iter().map(|r| cost(&r.name)).sum();
    names + transforms + rollout
}

/// A string's bytes plus the `String` holding them.
fn cost(text: &str) -> usize {
    text.len() + size_of::<String>()
}

/// The entries of `map` named in `keep`, as each needs them; `None` when none is left.
fn kept(map: Option<BTreeMap<String, String>>, keep: &[(&str, Keep)]) -> Option<BTreeMap<String, String>> {
    let kept: BTreeMap<String, String> = map?
        .into_iter()
        .filter_map(|(key, value)| {
            let (_, how) = keep.iter().find(|(name, _)| *name == key)?;
            match how {
                Keep::Value => (value.len() <= MAX_KEPT_VALUE).then_some((key, value)),
                Keep::Presence => Some((key, String::new())),
            }
        })
        .collect();
    (!kept.is_empty()).then_some(kept)
}

/// The controller owner reference, when its strings fit [`MAX_KEPT_VALUE`] (a longer one cannot
/// name a FerrVaultSecret, nor be one this operator wrote).
fn controller(owners: Option<Vec<OwnerReference>>) -> Option<Vec<OwnerReference>> {
    let controller = owners?.into_iter().find(|o| o.controller == Some(true))?;
    let fits = [
        &controller.api_version,
        &controller.kind,
        &controller.name,
        &controller.uid,
    ]
    .iter()
    .all(|s| s.len() <= MAX_KEPT_VALUE);
    fits.then(|| vec![controller])
}

#[cfg(test)]
mod tests;
