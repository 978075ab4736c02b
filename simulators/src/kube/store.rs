//! Objects, the cluster-wide resourceVersion counter and the bounded event history.
//!
//! # Invariants
//! - `rv` only grows; every committed change takes the next value and stamps it into the
//!   object's `metadata.resourceVersion` (a deleted object carries its deletion's rv).
//! - `history` is ordered by rv; it holds every change with rv > `floor`, nothing older.
//!   A watch may resume from rv N only if N >= `floor` (otherwise 410 Gone).
//! - Objects of one resource are kept in a `BTreeMap` by (namespace, name), the order in
//!   which lists are returned and paginated.
//! - Every method taking a [`ResourceId`] resolves it to its storage first
//!   ([`Registry::storage_of`]), so a type served from another one's objects sees them.

use super::registry::{Registry, ResourceId};
use serde_json::{Value, json};
use std::{
    collections::{BTreeMap, HashMap, HashSet, VecDeque},
    sync::Arc,
};

/// (namespace, name); namespace is "" for cluster-scoped objects.
pub type ObjKey = (String, String);

/// What happened to an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Created.
    Added,
    /// Changed (including gaining a deletionTimestamp).
    Modified,
    /// Removed from the store.
    Deleted,
}

impl EventType {
    /// The wire name (`ADDED`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One committed version of an object, as [`super::KubeSim::history`] reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    /// The resourceVersion of the change.
    pub resource_version: u64,
    /// Added, Modified or Deleted.
    pub event: EventType,
    /// The object after the change (for Deleted: its last state).
    pub object: Value,
}

/// One committed change, as kept in the history ring for watch replay.
#[derive(Debug, Clone)]
pub struct Change {
    /// The resourceVersion this change produced.
    pub rv: u64,
    /// Which resource it belongs to.
    pub resource: ResourceId,
    /// Added, Modified or Deleted.
    pub kind: EventType,
    /// The object after the change (for Deleted: the last state, with the deletion rv).
    pub object: Arc<Value>,
    /// The object before the change (for selector transitions on watches).
    pub previous: Option<Arc<Value>>,
    /// `object` serialised once, shared by every watcher that sends it unchanged (watch
    /// fan-out would otherwise serialise the same object once per watcher).
    json: std::sync::OnceLock<bytes::Bytes>,
}

impl Change {
    /// The object's JSON, serialised on first use.
    pub fn object_json(&self) -> &bytes::Bytes {
        self.json.get_or_init(|| {
            serde_json::to_vec(&*self.object)
                .expect("stored objects serialise")
                .into()
        })
    }
}

/// The simulator's state: all objects, the resource registry and the change history.
///
/// `Debug` prints counts only: objects include Secrets, whose values must never reach
/// a log line or a debug dump.
pub struct Store {
    /// Last committed resourceVersion.
    rv: u64,
    /// Objects per resource.
    objects: HashMap<ResourceId, BTreeMap<ObjKey, Arc<Value>>>,
    /// Recent changes, oldest first, at most `capacity` of them.
    history: VecDeque<Arc<Change>>,
    /// Watches from an rv below this get 410 Gone.
    floor: u64,
    /// Bound of `history` (the real server's watch cache is bounded the same way).
    capacity: usize,
    /// Resources whose every change is kept, unbounded (see [`Store::keep_revisions`]).
    kept: HashSet<ResourceId>,
    /// Every change of the `kept` resources since they were kept, oldest first.
    revisions: HashMap<ResourceId, Vec<Arc<Change>>>,
    /// Served resource types.
    pub registry: Registry,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let objects: usize = self.objects.values().map(BTreeMap::len).sum();
        f.debug_struct("Store")
            .field("rv", &self.rv)
            .field("floor", &self.floor)
            .field("objects", &objects)
            .field("history", &self.history.len())
            .finish_non_exhaustive()
    }
}

/// Default number of changes kept for watch replay.
pub const DEFAULT_HISTORY: usize = 100_000;

impl Store {
    /// An empty store whose history keeps at most `capacity` changes.
    pub fn new(capacity: usize) -> Self {
        Store {
            rv: 0,
            objects: HashMap::new(),
            history: VecDeque::new(),
            floor: 0,
            capacity: capacity.max(1),
            kept: HashSet::new(),
            revisions: HashMap::new(),
            registry: Registry::default(),
        }
    }

    /// The last committed resourceVersion.
    pub fn rv(&self) -> u64 {
        self.rv
    }

    /// Oldest rv a watch may resume from.
    pub fn floor(&self) -> u64 {
        self.floor
    }

    /// Drops all history: watches from any rv before now get 410.
    pub fn compact(&mut self) {
        self.history.clear();
        self.floor = self.rv;
    }

    /// One object.
    pub fn get(&self, id: &ResourceId, key: &ObjKey) -> Option<Arc<Value>> {
        let id = self.registry.storage_of(id);
        self.objects.get(id)?.get(key).cloned()
    }

    /// Objects of a resource, in key order, optionally within one namespace, starting
    /// strictly after `after`.
    pub fn range<'a>(
        &'a self,
        id: &ResourceId,
        namespace: Option<&'a str>,
        after: Option<&ObjKey>,
    ) -> Box<dyn Iterator<Item = (&'a ObjKey, &'a Arc<Value>)> + 'a> {
        use std::ops::Bound::{Excluded, Included, Unbounded};
        let Some(map) = self.objects.get(self.registry.storage_of(id)) else {
            return Box::new(std::iter::empty());
        };
        let start = match (after, namespace) {
            (Some(k), _) => Excluded(k.clone()),
            (None, Some(ns)) => Included((ns.to_string(), String::new())),
            (None, None) => Unbounded,
        };
        let iter = map.range((start, Unbounded));
        match namespace {
            Some(ns) => Box::new(iter.take_while(move |(k, _)| k.0 == ns)),
            None => Box::new(iter),
        }
    }

    /// Number of objects of a resource.
    pub fn count(&self, id: &ResourceId) -> usize {
        self.objects
            .get(self.registry.storage_of(id))
            .map_or(0, BTreeMap::len)
    }

    /// Resources that currently hold objects.
    pub fn resources(&self) -> Vec<ResourceId> {
        self.objects
            .iter()
            .filter(|(_, m)| !m.is_empty())
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Stores `object` under the next rv and records the change.
    pub fn put(&mut self, id: &ResourceId, key: ObjKey, mut object: Value) -> Arc<Value> {
        let id = &self.registry.storage_of(id).clone();
        self.rv += 1;
        object["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        let object = Arc::new(object);
        let previous = self
            .objects
            .entry(id.clone())
            .or_default()
            .insert(key, object.clone());
        let kind = if previous.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.record(id, kind, object.clone(), previous);
        object
    }

    /// Removes an object under the next rv and records the deletion.
    pub fn remove(&mut self, id: &ResourceId, key: &ObjKey) -> Option<Arc<Value>> {
        let id = &self.registry.storage_of(id).clone();
        let previous = self.objects.get_mut(id)?.remove(key)?;
        self.rv += 1;
        let mut last = (*previous).clone();
        last["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        let last = Arc::new(last);
        self.record(id, EventType::Deleted, last.clone(), Some(previous));
        Some(last)
    }

    fn record(&mut self, id: &ResourceId, kind: EventType, object: Arc<Value>, previous: Option<Arc<Value>>) {
        if self.history.len() == self.capacity
            && let Some(old) = self.history.pop_front()
        {
            self.floor = old.rv;
        }
        let change = Arc::new(Change {
            rv: self.rv,
            resource: id.clone(),
            kind,
            object,
            previous,
            json: std::sync::OnceLock::new(),
        });
        if self.kept.contains(id) {
            self.revisions.entry(id.clone()).or_default().push(change.clone());
        }
        self.history.push_back(change);
    }

    /// From now on keeps every change of `id`, beyond the bounded history (a test's full
    /// record of what was ever written, lost responses included).
    pub fn keep_revisions(&mut self, id: &ResourceId) {
        let id = self.registry.storage_of(id).clone();
        self.kept.insert(id);
    }

    /// Every change of `id` since [`Store::keep_revisions`], oldest first.
    pub fn revisions(&self, id: &ResourceId) -> Vec<Arc<Change>> {
        let id = self.registry.storage_of(id);
        self.revisions.get(id).cloned().unwrap_or_default()
    }

    /// Changes of `id` with rv > `since`, or `Err(floor)` when `since` is older than the history.
    pub fn changes_since(&self, id: &ResourceId, since: u64) -> Result<Vec<Arc<Change>>, u64> {
        if since < self.floor {
            return Err(self.floor);
        }
        let id = self.registry.storage_of(id);
        let start = self.history.partition_point(|c| c.rv <= since);
        Ok(self
            .history
            .range(start..)
            .filter(|c| &c.resource == id)
            .cloned()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets() -> ResourceId {
        ResourceId {
            group: String::new(),
            plural: "secrets".into(),
        }
    }

    fn key(ns: &str, n: &str) -> ObjKey {
        (ns.into(), n.into())
    }

    #[test]
    fn store_should_stamp_monotonic_resource_versions_and_replay_changes() {
        let mut s = Store::new(10);
        s.put(&secrets(), key("a", "x"), json!({"metadata": {"name": "x"}}));
        let o = s.put(
            &secrets(),
            key("a", "x"),
            json!({"metadata": {"name": "x"}, "data": {}}),
        );
        assert_eq!(o["metadata"]["resourceVersion"], "2");
        let removed = s.remove(&secrets(), &key("a", "x")).expect("present");
        assert_eq!(removed["metadata"]["resourceVersion"], "3");
        let kinds: Vec<_> = s
            .changes_since(&secrets(), 1)
            .expect("retained")
            .iter()
            .map(|c| c.kind)
            .collect();
        assert_eq!(kinds, [EventType::Modified, EventType::Deleted]);
    }

    #[test]
    fn kept_revisions_should_outlive_the_bounded_history() {
        let mut s = Store::new(1);
        s.keep_revisions(&secrets());
        for i in 0..3 {
            s.put(
                &secrets(),
                key("a", "x"),
                json!({"metadata": {}, "data": {"n": i}}),
            );
        }
        s.remove(&secrets(), &key("a", "x"));
        let kinds: Vec<_> = s.revisions(&secrets()).iter().map(|c| (c.rv, c.kind)).collect();
        assert_eq!(
            kinds,
            [
                (1, EventType::Added),
                (2, EventType::Modified),
                (3, EventType::Modified),
                (4, EventType::Deleted)
            ]
        );
    }

    #[test]
    fn store_should_refuse_replay_older_than_its_bounded_history() {
        let mut s = Store::new(2);
        for i in 0..5 {
            s.put(&secrets(), key("a", &i.to_string()), json!({"metadata": {}}));
        }
        assert_eq!(s.changes_since(&secrets(), 1).unwrap_err(), 3);
        assert_eq!(s.changes_since(&secrets(), 3).expect("retained").len(), 2);
    }

    #[test]
    fn range_should_stay_within_one_namespace_and_resume_after_a_key() {
        let mut s = Store::new(10);
        for (ns, n) in [("a", "1"), ("b", "1"), ("b", "2"), ("c", "1")] {
            s.put(&secrets(), key(ns, n), json!({"metadata": {}}));
        }
        let in_b: Vec<_> = s
            .range(&secrets(), Some("b"), None)
            .map(|(k, _)| k.1.clone())
            .collect();
        assert_eq!(in_b, ["1", "2"]);
        let after: Vec<_> = s
            .range(&secrets(), None, Some(&key("b", "1")))
            .map(|(k, _)| k.clone())
            .collect();
        assert_eq!(after, [key("b", "2"), key("c", "1")]);
    }
}
