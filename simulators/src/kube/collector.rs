//! kube-controller-manager's garbage collector and namespace controller, run in the
//! background: a task woken by the writes that may leave them work (deletions, objects
//! with owners), at most once per [`PASS_INTERVAL`], each pass under the store lock and each
//! of its changes with its own resourceVersion and watch event.
//!
//! A pass scans every stored object, so its cost grows with the store; after each one the task
//! waits [`IDLE_PER_BUSY`] times as long as the pass took (and at least [`PASS_INTERVAL`]). The
//! collector then holds the store lock at most a tenth of the time, as the real one, which works
//! from its own informers, holds none of the API server's: without it, a store of 30,000 objects
//! written to continuously spent nearly all its time locked by the collector, and every
//! client's requests waited behind it. Collection stays eventual, as in a real cluster; only its
//! delay grows with the store (tens of milliseconds at that size).
//!
//! # Guarantees
//! - A dependent whose owners are all gone is deleted, whenever its owner went: before it
//!   was created, or without the collector being told (its ownerReference names a uid that
//!   no object of that kind and name has, in the dependent's namespace or cluster-wide).
//!   References to gone owners are removed from dependents that still have a live owner.
//! - A dependent with an ownerReference whose kind does not resolve ([`gc::OwnerKinds`]) is
//!   left whole: not deleted, no reference dropped, as the real collector leaves it while it
//!   retries (and an owner deleted in the foreground waits for it if it blocks).
//! - An owner deleted in the foreground keeps its `foregroundDeletion` finalizer while a
//!   dependent with `blockOwnerDeletion: true` exists; its dependents are deleted.
//! - An owner deleted with `Orphan` keeps its `orphan` finalizer until no dependent refers
//!   to it any more.
//! - A terminating namespace is emptied (objects with finalizers wait for them), then
//!   removed.

use super::{
    gc::{self, FOREGROUND, ORPHAN},
    meta::{finalizers, now_rfc3339},
    registry::{ResourceId, ResourceType},
    state::Shared,
    store::{ObjKey, Store},
};
use serde_json::{Value, json};
use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
    time::Duration,
};

/// Least time between two passes: a burst of writes costs one scan, not one per write.
pub const PASS_INTERVAL: Duration = Duration::from_millis(20);
/// Bound on passes per wake-up; each pass settles at least one level of dependents.
const MAX_PASSES: usize = 64;
/// How much longer than a pass the collector waits before the next one.
const IDLE_PER_BUSY: u32 = 9;

/// Runs the collector until the simulator shuts down.
pub async fn run(shared: Arc<Shared>) {
    loop {
        tokio::select! {
            () = shared.collector.notified() => {}
            () = shared.shutdown.cancelled() => return,
        }
        let started = std::time::Instant::now();
        shared.write(collect);
        let pause = PASS_INTERVAL.max(started.elapsed() * IDLE_PER_BUSY);
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = shared.shutdown.cancelled() => return,
        }
    }
}

/// Collects to a fixed point.
pub fn collect(store: &mut Store) {
    for _ in 0..MAX_PASSES {
        if !collect_once(store) {
            return;
        }
    }
    tracing::warn!("garbage collection did not settle after {MAX_PASSES} passes");
}

/// One stored object.
struct Node {
    id: ResourceId,
    key: ObjKey,
    obj: Arc<Value>,
}

impl Node {
    fn uid(&self) -> &str {
        text(&self.obj, "/metadata/uid")
    }

    fn deleting(&self) -> bool {
        self.obj.pointer("/metadata/deletionTimestamp").is_some()
    }

    fn has_finalizer(&self, f: &str) -> bool {
        finalizers(&self.obj).iter().any(|have| have == f)
    }
}

fn text<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

fn owner_refs(obj: &Value) -> &[Value] {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// What one pass does to one object.
enum Action {
    /// Delete a dependent (in the foreground when its own dependents must go first).
    Delete { foreground: bool },
    /// Remove the ownerReferences to these uids.
    DropOwners(HashSet<String>),
    /// Remove this finalizer (its work is done).
    Release(&'static str),
    /// Remove an emptied namespace.
    RemoveNamespace,
}

fn everything(store: &Store) -> Vec<Node> {
    let mut out = Vec::new();
    for id in store.resources() {
        out.extend(store.range(&id, None, None).map(|(k, v)| Node {
            id: id.clone(),
            key: k.clone(),
            obj: v.clone(),
        }));
    }
    out
}

fn collect_once(store: &mut Store) -> bool {
    let nodes = everything(store);
    let actions = plan(&nodes, &gc::OwnerKinds::of(&store.registry));
    let mut changed = false;
    for (i, action) in actions {
        let node = &nodes[i];
        let Some(rt) = store.registry.get(&node.id).cloned() else {
            continue;
        };
        // An earlier action of this pass may have changed or removed the object.
        let Some(current) = store.get(&node.id, &node.key) else {
            continue;
        };
        changed |= apply(store, &rt, &node.key, &current, action);
    }
    changed
}

/// The actions of one pass, by index into `nodes`; owner kinds resolved through `kinds`.
fn plan(nodes: &[Node], kinds: &gc::OwnerKinds) -> Vec<(usize, Action)> {
    let by_uid: HashMap<&str, &Node> = nodes.iter().map(|n| (n.uid(), n)).collect();
    let mut dependents: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut blocking: HashSet<&str> = HashSet::new();
    let mut occupied: HashMap<&str, bool> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        for r in owner_refs(&n.obj) {
            let uid = text(r, "/uid");
            dependents.entry(uid).or_default().push(i);
            if r["blockOwnerDeletion"].as_bool() == Some(true) {
                blocking.insert(uid);
            }
        }
        if !n.key.0.is_empty() {
            let all_deleting = occupied.entry(n.key.0.as_str()).or_insert(true);
            *all_deleting &= n.deleting();
        }
    }
    let mut actions = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        if let Some(a) = owners_action(n, &by_uid, &blocking, kinds) {
            actions.push((i, a));
        }
        if n.deleting() && n.has_finalizer(ORPHAN) {
            for &d in dependents.get(n.uid()).into_iter().flatten() {
                actions.push((d, Action::DropOwners(HashSet::from([n.uid().to_owned()]))));
            }
            actions.push((i, Action::Release(ORPHAN)));
        }
        if n.deleting() && n.has_finalizer(FOREGROUND) && !blocking.contains(n.uid()) {
            actions.push((i, Action::Release(FOREGROUND)));
        }
        if n.deleting() && is_namespace_node(n) {
            match occupied.get(n.key.1.as_str()) {
                None => actions.push((i, Action::RemoveNamespace)),
                Some(true) => {}
                Some(false) => actions.extend(
                    nodes
                        .iter()
                        .enumerate()
                        .filter(|(_, o)| o.key.0 == n.key.1 && !o.deleting())
                        .map(|(j, _)| (j, Action::Delete { foreground: false })),
                ),
            }
        }
    }
    actions
}

fn is_namespace_node(n: &Node) -> bool {
    n.id.group.is_empty() && n.id.plural == "namespaces"
}

/// What a dependent's owners call for: deletion when none is alive and solid, or dropping
/// the references to gone owners; nothing while one of their kinds does not resolve.
fn owners_action(
    n: &Node,
    by_uid: &HashMap<&str, &Node>,
    blocking: &HashSet<&str>,
    kinds: &gc::OwnerKinds,
) -> Option<Action> {
    let refs = owner_refs(&n.obj);
    if refs.is_empty() || n.deleting() || !refs.iter().all(|r| kinds.resolves(r)) {
        return None;
    }
    let (mut solid, mut waiting) = (0, 0);
    let mut gone = HashSet::new();
    for r in refs {
        let owner = by_uid.get(text(r, "/uid")).filter(|o| {
            text(&o.obj, "/kind") == text(r, "/kind")
                && o.key.1 == text(r, "/name")
                && (o.key.0.is_empty() || o.key.0 == n.key.0)
        });
        match owner {
            None => {
                gone.insert(text(r, "/uid").to_owned());
            }
            Some(o) if o.deleting() && o.has_finalizer(FOREGROUND) => waiting += 1,
            Some(_) => solid += 1,
        }
    }
    if solid == 0 && (waiting > 0 || !gone.is_empty()) {
        Some(Action::Delete {
            foreground: waiting > 0 && blocking.contains(n.uid()),
        })
    } else if !gone.is_empty() {
        Some(Action::DropOwners(gone))
    } else {
        None
    }
}

/// Applies one action to the current state of an object; whether it changed anything.
fn apply(store: &mut Store, rt: &ResourceType, key: &ObjKey, current: &Value, action: Action) -> bool {
    let mut obj = current.clone();
    match action {
        Action::Delete { foreground } => {
            if current.pointer("/metadata/deletionTimestamp").is_some() {
                return false;
            }
            let mut fins = finalizers(&obj);
            if foreground {
                fins.push(FOREGROUND.to_owned());
            }
            if fins.is_empty() {
                return gc::remove(store, rt, key).is_some();
            }
            obj["metadata"]["finalizers"] = json!(fins);
            obj["metadata"]["deletionTimestamp"] = json!(now_rfc3339());
            obj["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        }
        Action::DropOwners(uids) => {
            if let Some(refs) = obj
                .pointer_mut("/metadata/ownerReferences")
                .and_then(Value::as_array_mut)
            {
                refs.retain(|r| !uids.contains(text(r, "/uid")));
            }
        }
        Action::Release(finalizer) => {
            let rest: Vec<String> = finalizers(&obj).into_iter().filter(|f| f != finalizer).collect();
            obj["metadata"]["finalizers"] = json!(rest);
        }
        Action::RemoveNamespace if finalizers(&obj).is_empty() => {
            return gc::remove(store, rt, key).is_some();
        }
        // Emptied; other finalizers still hold it: the controller's own is done.
        Action::RemoveNamespace => obj["spec"]["finalizers"] = json!([]),
    }
    if obj == *current {
        return false;
    }
    store.put(&rt.id(), key.clone(), obj);
    gc::finish_if_released(store, rt, key);
    true
}
