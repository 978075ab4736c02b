//! The per-namespace write budget (issue 34): how many writes the operator makes, under its own
//! identity, for the objects of one namespace. A tenant chooses how many objects it has and how
//! often they change; the budget bounds what that costs the API server and the other tenants.
//!
//! Two halves:
//! - **Charging** ([`charging`]): every write request the reconcilers' client sends (POST, PUT,
//!   PATCH, DELETE) to a namespaced path spends one token of that namespace's bucket: target
//!   Secrets, status and finalizer patches, Events, workload restarts. It is done where the
//!   request leaves the process, so no write path can forget it; it never refuses a request.
//! - **Admission** ([`WriteBudget::admit`]): a pass that is about to do timed work (a sync, a
//!   probe, a retry) asks first. While its namespace's bucket is empty, the pass does nothing and
//!   is requeued for a slot when the bucket will have refilled ([`Admission::Throttled`]),
//!   counted in `ferrvault_write_budget_throttled_total{controller}`. It never waits on a worker.
//!
//! # Guarantees
//! - In any window of `t` seconds, the operator's writes for one namespace number at most
//!   `burst + qps × t`, plus the writes of the passes admitted before the bucket ran dry (each
//!   admitted pass may finish: at most `--max-concurrent-reconciles` per controller at once, a
//!   handful of writes each).
//! - One namespace's budget is its own: spending it never delays another namespace's passes, and
//!   a throttled pass holds no worker (the work queue also caps each namespace's share of the
//!   workers).
//! - Throttled passes of one namespace are given successive slots, [`PASS_WRITES`] tokens'
//!   refill apart, rather than all the same instant: a namespace with thousands of waiting
//!   objects costs a few cheap passes per slot, not thousands.
//! - Passes that write nothing (nothing due) are never throttled; writes that follow an edit
//!   by the tenant one for one (finalizers, deletion, an invalid spec) are charged but not held
//!   back.
//! - Memory: one bucket per namespace that wrote recently; full, idle buckets are dropped once
//!   the map has doubled. With a rate of `None` (`--namespace-write-qps=0`, for benchmarks)
//!   nothing is kept, charged or throttled.
//! - The metric's only label is the controller: never a namespace (unbounded cardinality).

mod charging;

use std::{
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use controller_actors::Outcome;
use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family},
    registry::Registry,
};
use tokio::time::Instant;

use crate::reconcile::rules::bounds::{
    pruned_map::PrunedMap,
    token_bucket::{Rate, TokenBucket},
};

/// `--namespace-write-qps` default: a namespace of 1,000 FerrVaultSecrets refreshing at the
/// 30 s floor, every value changing each time, writes 3 times per object per refresh (target,
/// status, one Event) at most, 111 writes/s at the shortest wave factor (0.9): it never waits.
pub(crate) const DEFAULT_QPS: f64 = 120.0;

/// `--namespace-write-burst` default: one refresh wave of those 1,000 objects at once.
pub(crate) const DEFAULT_BURST: u32 = 3000;

/// The writes a throttled pass is assumed to need when slots are handed out: a sync that
/// changed the content writes the target, the status and an Event.
pub(crate) const PASS_WRITES: f64 = 3.0;

/// Whether a pass may go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Go on: the namespace has budget.
    Admitted,
    /// The namespace's budget is spent: requeue the key after this long (its slot) and do
    /// nothing now.
    Throttled(Duration),
}

/// `controller` label of the throttled counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabel {
    controller: &'static str,
}

/// One namespace's budget.
#[derive(Debug, Clone, Copy)]
struct NamespaceBudget {
    bucket: TokenBucket,
    /// The end of the last slot handed to a throttled pass; slots are handed out from here.
    slots_until: Instant,
}

/// The per-namespace write budgets of one operator process; see the module doc.
pub struct WriteBudget {
    /// `None`: unlimited.
    rate: Option<Rate>,
    namespaces: Mutex<PrunedMap<String, NamespaceBudget>>,
    throttled: Family<ControllerLabel, Counter>,
}

impl WriteBudget {
    /// Budgets of `rate` per namespace (`None`: unlimited), with their counter registered in
    /// `registry`, at zero for each of `controllers` (so an alert's `increase()` sees the first).
    pub fn new(rate: Option<Rate>, controllers: &[&'static str], registry: &mut Registry) -> Self {
        let budget = Self::unregistered(rate);
        for &controller in controllers {
            budget
                .throttled
                .get_or_create(&ControllerLabel { controller })
                .inc_by(0);
        }
        registry.register(
            "ferrvault_write_budget_throttled",
            "Reconciles held back because their namespace had spent its write budget \
             (--namespace-write-qps/--namespace-write-burst), by controller; each is requeued for \
             when the budget refills",
            budget.throttled.clone(),
        );
        budget
    }

    /// No budget at all, and no metric: for drivers that reconcile outside the operator's
    /// runtime (benchmarks).
    pub fn unlimited() -> Self {
        Self::unregistered(None)
    }

    fn unregistered(rate: Option<Rate>) -> Self {
        Self {
            rate,
            namespaces: Mutex::default(),
            throttled: Family::default(),
        }
    }

    /// Whether a pass of `controller` about to write for `namespace` may go on at `now`.
    pub fn admit(&self, namespace: &str, controller: &'static str, now: Instant) -> Admission {
        let Some(rate) = self.rate else {
            return Admission::Admitted;
        };
        let admission = self.with_namespace(rate, namespace, now, |budget| budget.admit(rate, now));
        if matches!(admission, Admission::Throttled(_)) {
            self.throttled
                .get_or_create(&ControllerLabel { controller })
                .inc();
        }
        admission
    }

    /// [`WriteBudget::admit`] now, as a pass's outcome: `None` to go on, or the requeue of a pass
    /// held back (for its slot, on the refresh lane: no backoff).
    pub fn hold_back(&self, namespace: &str, controller: &'static str) -> Option<Outcome> {
        match self.admit(namespace, controller, Instant::now()) {
            Admission::Admitted => None,
            Admission::Throttled(wait) => {
                tracing::debug!(?wait, "namespace write budget spent, requeued");
                Some(Outcome::RequeueAfter(wait))
            }
        }
    }

    /// Spends one write of `namespace` at `now`.
    pub fn charge(&self, namespace: &str, now: Instant) {
        if let Some(rate) = self.rate {
            self.with_namespace(rate, namespace, now, |budget| {
                budget.bucket.spend(rate, now, 1.0);
            });
        }
    }

    /// `client` with every write it sends charged here ([`charging`]); `client` itself when
    /// the budget is unlimited.
    pub fn charging(self: &Arc<Self>, client: kube::Client) -> kube::Client {
        if self.rate.is_none() {
            return client;
        }
        let budget = self.clone();
        charging::wrap(
            Arc::new(move |namespace: &str| budget.charge(namespace, Instant::now())),
            client,
        )
    }

    fn with_namespace<T>(
        &self,
        rate: Rate,
        namespace: &str,
        now: Instant,
        act: impl FnOnce(&mut NamespaceBudget) -> T,
    ) -> T {
        let mut namespaces = self.namespaces.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(budget) = namespaces.get_mut(namespace) {
            return act(budget);
        }
        namespaces.prune_if_doubled(|_, budget| budget.is_idle(rate, now));
        let budget = namespaces
            .entry(namespace.to_owned())
            .or_insert_with(|| NamespaceBudget::fresh(rate, now));
        act(budget)
    }
}

// === impl NamespaceBudget ===

impl NamespaceBudget {
    fn fresh(rate: Rate, now: Instant) -> Self {
        Self {
            bucket: TokenBucket::full(rate, now),
            slots_until: now,
        }
    }

    /// Admitted while a token is left; else the next slot: when the bucket will hold one, or
    /// [`PASS_WRITES`] tokens' refill after the slot handed out last, whichever is later.
    fn admit(&mut self, rate: Rate, now: Instant) -> Admission {
        let wait = self.bucket.wait_for(rate, now, 1.0);
        if wait.is_zero() {
            return Admission::Admitted;
        }
        let slot = (now + wait).max(self.slots_until);
        self.slots_until = slot + rate.time_for(PASS_WRITES);
        Admission::Throttled(slot.saturating_duration_since(now))
    }

    /// Forgetting it changes nothing: full, and no slot handed out ahead.
    fn is_idle(&self, rate: Rate, now: Instant) -> bool {
        self.bucket.is_full(rate, now) && self.slots_until <= now
    }
}

#[cfg(test)]
mod tests;
