//! Fault injection: latency, failures by verb/resource/caller, lost responses (the request
//! is handled, a write commits, and the answer the client gets is an error), hung
//! requests, a frozen server, dropped watches, forced 410s and history compaction.
//!
//! The whole configuration ([`FaultConfig`], with its decisions in `rules.rs`) lives in one
//! `tokio::sync::watch` channel so requests that hang or wait for a thaw simply wait for the
//! configuration to change; [`Faults`] is the handle that changes it.

mod rules;

pub use rules::{FailureRule, FaultConfig, RequestMatch, Verdict, decide, decide_lost, must_wait};

use super::{state::Shared, store::Store};
use std::{
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

/// Cloneable handle to the simulator's faults.
#[derive(Clone)]
pub struct Faults {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Faults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Faults")
            .field(&*self.shared.faults.borrow())
            .finish()
    }
}

impl Faults {
    fn update(&self, change: impl FnOnce(&mut FaultConfig)) {
        self.shared.faults.send_modify(change);
    }

    /// The current configuration.
    pub fn config(&self) -> FaultConfig {
        self.shared.faults.borrow().clone()
    }

    /// Replaces the whole configuration.
    pub fn set_config(&self, config: FaultConfig) {
        self.shared.faults.send_replace(config);
    }

    /// Removes every standing fault (latency, failures, hangs, freeze).
    pub fn clear(&self) {
        self.set_config(FaultConfig::default());
    }

    /// Adds `latency` before every API request.
    pub fn set_latency(&self, latency: Duration) {
        self.update(|c| c.latency_ms = u64::try_from(latency.as_millis()).unwrap_or(u64::MAX));
    }

    /// Fails `fraction` of requests matching `verb`/`resource` (None = any) with `code`.
    pub fn fail(&self, verb: Option<&str>, resource: Option<&str>, fraction: f64, code: u16) {
        let target = RequestMatch {
            verb: verb.map(String::from),
            resource: resource.map(String::from),
            identity: None,
        };
        self.update(|c| {
            c.failures.push(FailureRule {
                target,
                fraction,
                code,
            })
        });
    }

    /// Fails every request of `identity` matching `verb`/`resource` (None = any) with `code`.
    pub fn fail_for(&self, identity: &str, verb: Option<&str>, resource: Option<&str>, code: u16) {
        let target = RequestMatch {
            verb: verb.map(String::from),
            resource: resource.map(String::from),
            identity: Some(identity.to_owned()),
        };
        self.update(|c| {
            c.failures.push(FailureRule {
                target,
                fraction: 1.0,
                code,
            })
        });
    }

    /// Handles `fraction` of the requests matching `verb`/`resource` (None = any), then
    /// answers them with `code` instead of their result: the client sees an error although
    /// its write was applied.
    pub fn lose_responses(&self, verb: Option<&str>, resource: Option<&str>, fraction: f64, code: u16) {
        let target = RequestMatch {
            verb: verb.map(String::from),
            resource: resource.map(String::from),
            identity: None,
        };
        self.update(|c| {
            c.lost_responses.push(FailureRule {
                target,
                fraction,
                code,
            })
        });
    }

    /// Hangs requests matching `verb`/`resource` until [`Faults::clear`] or [`Faults::unhang`].
    pub fn hang(&self, verb: Option<&str>, resource: Option<&str>) {
        let m = RequestMatch {
            verb: verb.map(String::from),
            resource: resource.map(String::from),
            identity: None,
        };
        self.update(|c| c.hangs.push(m));
    }

    /// Releases every hung request.
    pub fn unhang(&self) {
        self.update(|c| c.hangs.clear());
    }

    /// Freezes the server: requests wait, watches stop delivering.
    pub fn freeze(&self) {
        self.update(|c| c.frozen = true);
    }

    /// Ends a freeze; waiting requests proceed and watches catch up.
    pub fn thaw(&self) {
        self.update(|c| c.frozen = false);
    }

    /// Ends every open watch stream (clients see the connection end and re-watch).
    pub fn drop_watches(&self) {
        self.shared.drop_watches.send_modify(|epoch| *epoch += 1);
    }

    /// The next `count` watch requests get a 410 Gone `ERROR` event instead of events.
    pub fn force_gone(&self, count: u32) {
        self.shared.force_gone.fetch_add(count, Ordering::SeqCst);
    }

    /// Compacts history: any watch from a resourceVersion before now gets 410 Gone.
    pub fn compact(&self) {
        let mut store = self.shared.store.lock().expect("store lock poisoned");
        Store::compact(&mut store);
    }
}
