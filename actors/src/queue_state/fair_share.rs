//! Which ready key the next free worker takes, so that one namespace's slow, hanging or huge
//! workload cannot hold up another namespace's syncs (pure: no clocks, no actors).
//!
//! # Rules
//! - A namespace holds at most `share` workers at once (the default share is the pool size
//!   minus one: one namespace alone never occupies the whole pool).
//! - A free worker goes to the best lane first (`Changed` before `Refresh`, as ever), then,
//!   among the namespaces with a ready key in that lane and below their share, to the one
//!   holding the fewest workers, then to the one served longest ago (round robin). Within a
//!   namespace, keys keep their lane and FIFO order.
//!
//! # The bound this gives (pool `W ≥ 2`, share `W − 1`)
//! While a single namespace is slow (its reconciles hang), it holds at most `W − 1` workers,
//! so every other namespace's ready key is dispatched after waiting only for keys ahead of it
//! among the other namespaces: it waits for *their* work, never for the slow namespace's.
//! While several namespaces are slow at once they may fill the pool; a namespace holding no
//! worker then still takes the next worker that frees (fewest held first), which the runtime
//! bounds by the reconcile timeout plus the kill grace. With `W = 1` nothing can be reserved.
//!
//! # Invariants
//! - A namespace is in `turns` exactly when it has a ready key, under its current rank,
//!   workers held and last turn.
//! - `held` is the number of ready keys of namespaces at their share; `busy` lists the
//!   namespaces holding at least one worker.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use crate::key::ObjectKey;

/// A key's namespace (`None` for cluster-scoped objects, which share one bucket).
pub(crate) type Namespace = Option<String>;

/// One namespace's position as published: what it holds and what it has waiting.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NamespaceShare {
    /// The namespace (empty for cluster-scoped keys).
    pub namespace: String,
    /// Workers it holds now.
    pub in_flight: usize,
    /// Ready keys it has waiting.
    pub ready: usize,
    /// It holds its whole share: its ready keys wait for one of its own runs to end.
    pub at_share: bool,
}

/// Ready keys grouped by namespace, and the workers each namespace holds.
#[derive(Debug)]
pub(super) struct FairShare {
    /// Most workers one namespace may hold.
    share: usize,
    namespaces: HashMap<Namespace, Tenant>,
    /// Namespaces with a ready key, in the order they get the next free worker.
    turns: BTreeSet<Turn>,
    /// Namespaces holding at least one worker.
    busy: BTreeSet<Namespace>,
    /// Ready keys of namespaces at their share.
    held: usize,
    /// Dispatches so far (the round-robin clock).
    dispatches: u64,
}

#[derive(Debug, Default)]
struct Tenant {
    /// Ready keys by (lane rank, FIFO sequence).
    ready: BTreeMap<(u8, u64), ObjectKey>,
    /// Workers held.
    in_flight: usize,
    /// The dispatch number of its last dispatch (0: never).
    last_turn: u64,
}

/// A namespace's place in the dispatch order: best lane, fewest workers, longest unserved.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Turn {
    rank: u8,
    in_flight: usize,
    last_turn: u64,
    namespace: Namespace,
}

impl Tenant {
    fn turn(&self, namespace: &Namespace) -> Option<Turn> {
        self.ready.first_key_value().map(|(&(rank, _), _)| Turn {
            rank,
            in_flight: self.in_flight,
            last_turn: self.last_turn,
            namespace: namespace.clone(),
        })
    }
}

impl FairShare {
    /// Empty, with at most `share` workers per namespace (at least 1).
    pub(super) fn new(share: usize) -> Self {
        Self {
            share: share.max(1),
            namespaces: HashMap::new(),
            turns: BTreeSet::new(),
            busy: BTreeSet::new(),
            held: 0,
            dispatches: 0,
        }
    }

    /// Most workers one namespace may hold.
    pub(super) fn share(&self) -> usize {
        self.share
    }

    /// `key` is ready in lane `rank` with FIFO number `seq`.
    pub(super) fn insert(&mut self, key: ObjectKey, rank: u8, seq: u64) {
        let namespace = key.namespace.clone();
        self.update(&namespace, |t| {
            t.ready.insert((rank, seq), key);
        });
    }

    /// `key` (ready as `rank`, `seq`) no longer waits.
    pub(super) fn remove(&mut self, key: &ObjectKey, rank: u8, seq: u64) {
        self.update(&key.namespace, |t| {
            t.ready.remove(&(rank, seq));
        });
    }

    /// Take the next key by the rules, counting a worker for its namespace; `None` when no
    /// key waits or every namespace with one holds its share.
    pub(super) fn pop(&mut self) -> Option<(ObjectKey, u8, u64)> {
        let namespace = self
            .turns
            .iter()
            .find(|turn| turn.in_flight < self.share)?
            .namespace
            .clone();
        self.dispatches += 1;
        let turn = self.dispatches;
        let mut taken = None;
        self.update(&namespace, |t| {
            taken = t.ready.pop_first();
            t.in_flight += 1;
            t.last_turn = turn;
        });
        taken.map(|((rank, seq), key)| (key, rank, seq))
    }

    /// A worker of `namespace` is free again (its run ended, or was abandoned by a replaced
    /// worker: it no longer occupies the pool).
    ///
    /// # Panics
    /// If `namespace` holds no worker (a release without a dispatch).
    pub(super) fn release(&mut self, namespace: &Namespace) {
        self.update(namespace, |t| {
            t.in_flight = t
                .in_flight
                .checked_sub(1)
                .expect("a release without a dispatch violated");
        });
    }

    /// Ready keys waiting only because their namespace holds its share.
    pub(super) fn held(&self) -> usize {
        self.held
    }

    /// Namespaces with a ready key.
    pub(super) fn waiting(&self) -> usize {
        self.turns.len()
    }

    /// Every namespace holding a worker (at most one per worker).
    pub(super) fn holding(&self) -> Vec<NamespaceShare> {
        self.busy
            .iter()
            .filter_map(|ns| {
                let t = self.namespaces.get(ns)?;
                Some(NamespaceShare {
                    namespace: ns.clone().unwrap_or_default(),
                    in_flight: t.in_flight,
                    ready: t.ready.len(),
                    at_share: t.in_flight >= self.share,
                })
            })
            .collect()
    }

    /// Apply `change` to `namespace`'s tenant, keeping `turns`, `busy` and `held` exact and
    /// dropping tenants with nothing ready and nothing running.
    fn update(&mut self, namespace: &Namespace, change: impl FnOnce(&mut Tenant)) {
        let share = self.share;
        let tenant = self.namespaces.entry(namespace.clone()).or_default();
        if let Some(turn) = tenant.turn(namespace) {
            self.turns.remove(&turn);
        }
        if tenant.in_flight >= share {
            self.held -= tenant.ready.len();
        }
        change(tenant);
        if let Some(turn) = tenant.turn(namespace) {
            self.turns.insert(turn);
        }
        if tenant.in_flight >= share {
            self.held += tenant.ready.len();
        }
        if tenant.in_flight > 0 {
            self.busy.insert(namespace.clone());
        } else {
            self.busy.remove(namespace);
        }
        if tenant.ready.is_empty() && tenant.in_flight == 0 {
            self.namespaces.remove(namespace);
        }
    }
}

#[cfg(test)]
mod tests;
