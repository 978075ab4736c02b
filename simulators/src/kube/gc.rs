//! Deletion semantics: finalizers and `deletionTimestamp`, propagation policies,
//! ownerReference garbage collection, namespace and CRD teardown.
//!
//! The real server runs the garbage collector and the namespace controller
//! asynchronously; here they run right after the delete that triggers them, in the same
//! critical section, in the same order (owner first, then dependents), each change with
//! its own resourceVersion and watch event.
//!
//! # Guarantees
//! - An object with finalizers is never removed: it gets `deletionTimestamp` and stays
//!   until its last finalizer is removed by an update or patch.
//! - `Background`: dependents whose every owner is gone are deleted after the owner.
//!   `Foreground`: the owner keeps a `foregroundDeletion` finalizer until its dependents
//!   are gone. `Orphan`: dependents lose the ownerReference and stay.
//! - A deleted namespace is `Terminating` until every object in it is gone, then removed.

use super::{
    meta::{finalizers, now_rfc3339},
    registry::{ResourceId, ResourceType},
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
}

const FOREGROUND: &str = "foregroundDeletion";
/// Bound on GC sweeps after one delete; each pass removes at least one level of dependents.
const MAX_GC_PASSES: usize = 64;

/// The outcome of a delete request.
#[derive(Debug)]
pub enum Deleted {
    /// Removed from the store; carries the last state.
    Gone(Arc<Value>),
    /// Still present, waiting for finalizers (or dependents, or namespace contents).
    Pending(Arc<Value>),
}

/// Deletes one object with the given propagation, then lets the collector run.
pub fn delete(store: &mut Store, rt: &ResourceType, key: &ObjKey, policy: Propagation) -> Option<Deleted> {
    let result = delete_uncollected(store, rt, key, policy)?;
    collect(store);
    Some(settle(store, rt, key, result))
}

/// Deletes several objects of one type (deletecollection), collecting garbage once at
/// the end rather than after each (the collector scans the whole store).
pub fn delete_many(
    store: &mut Store,
    rt: &ResourceType,
    keys: &[ObjKey],
    policy: Propagation,
) -> Vec<Deleted> {
    let results: Vec<(&ObjKey, Deleted)> = keys
        .iter()
        .filter_map(|k| delete_uncollected(store, rt, k, policy).map(|r| (k, r)))
        .collect();
    collect(store);
    results
        .into_iter()
        .map(|(k, r)| settle(store, rt, k, r))
        .collect()
}

/// A pending deletion that the collector completed is reported as gone.
fn settle(store: &Store, rt: &ResourceType, key: &ObjKey, result: Deleted) -> Deleted {
    match result {
        Deleted::Pending(p) => store
            .get(&rt.id(), key)
            .map_or(Deleted::Gone(p), Deleted::Pending),
        gone @ Deleted::Gone(_) => gone,
    }
}

fn delete_uncollected(
    store: &mut Store,
    rt: &ResourceType,
    key: &ObjKey,
    policy: Propagation,
) -> Option<Deleted> {
    let id = rt.id();
    let current = store.get(&id, key)?;
    let uid = uid_of(&current);
    let is_namespace = rt.group.is_empty() && rt.plural == "namespaces";
    if policy == Propagation::Orphan {
        orphan_dependents(store, &uid);
    }
    let mut obj = (*current).clone();
    let mut fins = finalizers(&obj);
    if policy == Propagation::Foreground && !fins.iter().any(|f| f == FOREGROUND) {
        fins.push(FOREGROUND.to_string());
        obj["metadata"]["finalizers"] = json!(fins);
    }
    let result = if fins.is_empty() && !is_namespace {
        let gone = store.remove(&id, key)?;
        if rt.group == "apiextensions.k8s.io" {
            drop_custom_resources(store, &gone);
        }
        Deleted::Gone(gone)
    } else {
        if obj.pointer("/metadata/deletionTimestamp").is_none() {
            obj["metadata"]["deletionTimestamp"] = json!(now_rfc3339());
            obj["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        }
        if is_namespace {
            obj["status"] = json!({ "phase": "Terminating" });
        }
        let pending = if *current == obj {
            current
        } else {
            store.put(&id, key.clone(), obj)
        };
        if is_namespace {
            delete_namespace_contents(store, &key.1);
        }
        if policy == Propagation::Foreground {
            delete_dependents(store, &uid);
        }
        Deleted::Pending(pending)
    };
    Some(result)
}

/// Removes an object whose deletion is complete (deletionTimestamp set, no finalizers),
/// then lets the collector run. Called after every update.
pub fn finish_if_released(store: &mut Store, rt: &ResourceType, key: &ObjKey) {
    let Some(obj) = store.get(&rt.id(), key) else {
        return;
    };
    let releasing = obj.pointer("/metadata/deletionTimestamp").is_some() && finalizers(&obj).is_empty();
    let is_namespace = rt.group.is_empty() && rt.plural == "namespaces";
    if releasing && !is_namespace {
        if let Some(gone) = store.remove(&rt.id(), key)
            && rt.group == "apiextensions.k8s.io"
        {
            drop_custom_resources(store, &gone);
        }
        collect(store);
    }
}

fn uid_of(obj: &Value) -> String {
    obj.pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn owner_uids(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map_or_else(Vec::new, |a| {
            a.iter()
                .filter_map(|r| r["uid"].as_str().map(String::from))
                .collect()
        })
}

/// Every (resource, key, object) in the store. Collect passes work on this snapshot.
fn everything(store: &Store) -> Vec<(ResourceId, ObjKey, Arc<Value>)> {
    let mut out = Vec::new();
    for id in store.resources() {
        out.extend(
            store
                .range(&id, None, None)
                .map(|(k, v)| (id.clone(), k.clone(), v.clone())),
        );
    }
    out
}

fn type_of(store: &Store, id: &ResourceId) -> Option<ResourceType> {
    store.registry.get(id).cloned()
}

fn orphan_dependents(store: &mut Store, owner_uid: &str) {
    for (id, key, obj) in everything(store) {
        if owner_uids(&obj).iter().any(|u| u == owner_uid) {
            let mut o = (*obj).clone();
            retain_owners(&mut o, |u| u != owner_uid);
            store.put(&id, key, o);
        }
    }
}

fn retain_owners(obj: &mut Value, keep: impl Fn(&str) -> bool) {
    if let Some(refs) = obj
        .pointer_mut("/metadata/ownerReferences")
        .and_then(Value::as_array_mut)
    {
        refs.retain(|r| keep(r["uid"].as_str().unwrap_or_default()));
    }
}

fn delete_dependents(store: &mut Store, owner_uid: &str) {
    for (id, key, obj) in everything(store) {
        if owner_uids(&obj).iter().any(|u| u == owner_uid)
            && obj.pointer("/metadata/deletionTimestamp").is_none()
            && let Some(rt) = type_of(store, &id)
        {
            mark_or_remove(store, &rt, &key, &obj);
        }
    }
}

fn delete_namespace_contents(store: &mut Store, namespace: &str) {
    for (id, key, obj) in everything(store) {
        if key.0 == namespace
            && obj.pointer("/metadata/deletionTimestamp").is_none()
            && let Some(rt) = type_of(store, &id).filter(|rt| rt.namespaced)
        {
            mark_or_remove(store, &rt, &key, &obj);
        }
    }
}

/// Background deletion of one object without re-running the collector.
fn mark_or_remove(store: &mut Store, rt: &ResourceType, key: &ObjKey, obj: &Value) {
    if finalizers(obj).is_empty() {
        store.remove(&rt.id(), key);
    } else {
        let mut o = obj.clone();
        o["metadata"]["deletionTimestamp"] = json!(now_rfc3339());
        o["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        store.put(&rt.id(), key.clone(), o);
    }
}

fn drop_custom_resources(store: &mut Store, crd: &Value) {
    let Some(t) = ResourceType::from_crd(crd) else {
        return;
    };
    let keys: Vec<ObjKey> = store.range(&t.id(), None, None).map(|(k, _)| k.clone()).collect();
    for key in keys {
        store.remove(&t.id(), &key);
    }
    store.registry.unregister(&t.id());
}

/// Runs the garbage collector and namespace controller to a fixed point.
pub fn collect(store: &mut Store) {
    for _ in 0..MAX_GC_PASSES {
        if !collect_once(store) {
            return;
        }
    }
    tracing::warn!("garbage collection did not settle after {MAX_GC_PASSES} passes");
}

fn collect_once(store: &mut Store) -> bool {
    let all = everything(store);
    let uids: HashSet<String> = all.iter().map(|(_, _, o)| uid_of(o)).collect();
    let owners_in_use: HashSet<String> = all.iter().flat_map(|(_, _, o)| owner_uids(o)).collect();
    let busy_namespaces: HashSet<String> = all
        .iter()
        .filter(|(id, ..)| id.plural != "namespaces" || !id.group.is_empty())
        .map(|(_, k, _)| k.0.clone())
        .collect();
    let mut changed = false;
    for (id, key, _) in all {
        // Re-read: an earlier step of this pass may have changed or removed it.
        let Some(obj) = store.get(&id, &key) else { continue };
        let Some(rt) = type_of(store, &id) else { continue };
        let deleting = obj.pointer("/metadata/deletionTimestamp").is_some();
        let owners = owner_uids(&obj);
        let dangling = owners.iter().filter(|u| !uids.contains(*u)).count();
        if !deleting && dangling > 0 && dangling == owners.len() {
            mark_or_remove(store, &rt, &key, &obj);
            changed = true;
        } else if dangling > 0 {
            let mut o = (*obj).clone();
            retain_owners(&mut o, |u| uids.contains(u));
            store.put(&id, key, o);
            changed = true;
        } else if deleting
            && finalizers(&obj).iter().any(|f| f == FOREGROUND)
            && !owners_in_use.contains(&uid_of(&obj))
        {
            let mut o = (*obj).clone();
            let rest: Vec<String> = finalizers(&obj).into_iter().filter(|f| f != FOREGROUND).collect();
            o["metadata"]["finalizers"] = json!(rest);
            if rest.is_empty() {
                store.remove(&id, &key);
            } else {
                store.put(&id, key, o);
            }
            changed = true;
        } else if deleting
            && rt.group.is_empty()
            && rt.plural == "namespaces"
            && !busy_namespaces.contains(&key.1)
        {
            store.remove(&id, &key);
            changed = true;
        }
    }
    changed
}
