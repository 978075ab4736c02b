//! What a delete request does in the API server itself: finalizers and
//! `deletionTimestamp`, the finalizer each propagation policy asks the garbage collector
//! for, and the removal of an object whose last finalizer is gone. Dependents, orphans and
//! namespace contents are handled afterwards by the background [`collector`], as
//! kube-controller-manager's garbage collector and namespace controller do.
//!
//! # Guarantees
//! - An object with finalizers is never removed: it gets `deletionTimestamp` and stays
//!   until its last finalizer is removed by an update or patch (or by the collector).
//! - `Background` (the default): the owner goes now, the collector deletes its dependents
//!   later. `Foreground`: the owner keeps a `foregroundDeletion` finalizer until its
//!   blocking dependents are gone. `Orphan`: the owner keeps an `orphan` finalizer until the
//!   collector has removed its ownerReference from every dependent.
//! - A deleted namespace is `Terminating` until the collector has emptied it.
//! - A deleted CRD takes its custom resources and its served type with it at once.
//! - An ownerReference is resolved as the real collector's REST mapper resolves it
//!   ([`OwnerKinds`]): its `apiVersion` and `kind` must name a served group, version and kind.
//!   The real collector cannot look up an owner whose kind does not resolve (a CRD not
//!   installed, a version not served): it logs, retries, and leaves the dependent as it is, so
//!   the [`collector`] keeps such a dependent whole. A CRD written wakes the collector, as the
//!   real one's retry would find the new kind.
//!
//! [`collector`]: super::collector

use super::{
    meta::{finalizers, now_rfc3339},
    registry::{Registry, ResourceType},
    store::{ObjKey, Store},
};
use serde_json::{Value, json};
use std::{collections::HashSet, sync::Arc};

/// `DeleteOptions.propagationPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    /// Delete the owner now, dependents afterwards (the default).
    Background,
    /// Delete dependents first; the owner waits with a `foregroundDeletion` finalizer.
    Foreground,
    /// Keep dependents, removing their ownerReference to the owner.
    Orphan,
}

impl Propagation {
    /// Parses the wire value.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "Background" => Some(Propagation::Background),
            "Foreground" => Some(Propagation::Foreground),
            "Orphan" => Some(Propagation::Orphan),
            _ => None,
        }
    }

    /// The finalizer through which this policy hands the owner to the collector.
    fn finalizer(self) -> Option<&'static str> {
        match self {
            Propagation::Background => None,
            Propagation::Foreground => Some(FOREGROUND),
            Propagation::Orphan => Some(ORPHAN),
        }
    }
}

/// The finalizer of a foreground deletion.
pub const FOREGROUND: &str = "foregroundDeletion";
/// The finalizer of an orphaning deletion.
pub const ORPHAN: &str = "orphan";

/// The outcome of a delete request.
#[derive(Debug)]
pub enum Deleted {
    /// Removed from the store; carries the last state.
    Gone(Arc<Value>),
    /// Still present, waiting for finalizers (or dependents, or namespace contents).
    Pending(Arc<Value>),
}

/// Whether `rt` is the core Namespace type.
pub fn is_namespace(rt: &ResourceType) -> bool {
    rt.group.is_empty() && rt.plural == "namespaces"
}

/// Deletes one object with the given propagation.
pub fn delete(store: &mut Store, rt: &ResourceType, key: &ObjKey, policy: Propagation) -> Option<Deleted> {
    let id = rt.id();
    let current = store.get(&id, key)?;
    let mut obj = (*current).clone();
    let mut fins = finalizers(&obj);
    if let Some(f) = policy.finalizer()
        && !fins.iter().any(|have| have == f)
    {
        fins.push(f.to_owned());
        obj["metadata"]["finalizers"] = json!(fins);
    }
    if fins.is_empty() && !is_namespace(rt) {
        return Some(Deleted::Gone(remove(store, rt, key)?));
    }
    if obj.pointer("/metadata/deletionTimestamp").is_none() {
        obj["metadata"]["deletionTimestamp"] = json!(now_rfc3339());
        obj["metadata"]["deletionGracePeriodSeconds"] = json!(0);
    }
    if is_namespace(rt) {
        obj["status"] = json!({ "phase": "Terminating" });
    }
    let pending = if *current == obj {
        current
    } else {
        store.put(&id, key.clone(), obj)
    };
    Some(Deleted::Pending(pending))
}

/// Deletes several objects of one type (deletecollection).
pub fn delete_many(
    store: &mut Store,
    rt: &ResourceType,
    keys: &[ObjKey],
    policy: Propagation,
) -> Vec<Deleted> {
    keys.iter().filter_map(|k| delete(store, rt, k, policy)).collect()
}

/// Removes an object whose deletion is complete (deletionTimestamp set, no finalizers).
/// Called after every update; namespaces are left to the collector.
pub fn finish_if_released(store: &mut Store, rt: &ResourceType, key: &ObjKey) {
    let Some(obj) = store.get(&rt.id(), key) else {
        return;
    };
    let released = obj.pointer("/metadata/deletionTimestamp").is_some() && finalizers(&obj).is_empty();
    if released && !is_namespace(rt) {
        remove(store, rt, key);
    }
}

/// Removes an object from the store; a CRD takes its custom resources and type with it.
pub fn remove(store: &mut Store, rt: &ResourceType, key: &ObjKey) -> Option<Arc<Value>> {
    let gone = store.remove(&rt.id(), key)?;
    if rt.group == "apiextensions.k8s.io"
        && let Some(t) = ResourceType::from_crd(&gone)
    {
        let keys: Vec<ObjKey> = store.range(&t.id(), None, None).map(|(k, _)| k.clone()).collect();
        for key in keys {
            store.remove(&t.id(), &key);
        }
        store.registry.unregister(&t.id());
    }
    Some(gone)
}

/// Whether a write of `obj` may leave work for the collector: an object being deleted, one
/// with owners (which may be gone), or a CRD (owners of its kind can now be resolved).
pub fn concerns_collector(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp").is_some()
        || obj
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .is_some_and(|refs| !refs.is_empty())
        || obj.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
}

/// The kinds an ownerReference can name, as the real collector's REST mapper knows them: each
/// served group, version and kind. Taken once per collector pass.
pub struct OwnerKinds(HashSet<(String, String, String)>);

impl OwnerKinds {
    /// The kinds `registry` serves now.
    pub fn of(registry: &Registry) -> Self {
        Self(
            registry
                .all()
                .flat_map(|t| {
                    t.versions
                        .iter()
                        .map(|v| (t.group.clone(), v.clone(), t.kind.clone()))
                })
                .collect(),
        )
    }

    /// Whether `owner_ref`'s `apiVersion` (`v1`, `group/version`) and `kind` name a served kind.
    /// When not, kube-controller-manager's `attemptToDeleteItem` fails with a REST mapping error
    /// and requeues the dependent: it deletes nothing and drops no reference.
    pub fn resolves(&self, owner_ref: &Value) -> bool {
        let text = |field: &str| owner_ref.get(field).and_then(Value::as_str).unwrap_or_default();
        let (group, version) = text("apiVersion")
            .rsplit_once('/')
            .unwrap_or(("", text("apiVersion")));
        self.0
            .contains(&(group.to_owned(), version.to_owned(), text("kind").to_owned()))
    }
}
