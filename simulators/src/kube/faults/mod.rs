//! Fault injection: latency, failures by verb/resource/caller, lost responses (the request
//! is handled, a write commits, and the answer the client gets is an error), hung
//! requests, a frozen server, dropped watches, forced 410s and history compaction.
//!
//! The whole configuration lives in one `tokio::sync::watch` channel so requests that
//! hang or wait for a thaw simply wait for the configuration to change.

use super::{state::Shared, store::Store};
use serde::{Deserialize, Serialize};
use std::{
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

/// Which requests a rule applies to; `None` matches any.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestMatch {
    /// Kubernetes verb (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, …).
    pub verb: Option<String>,
    /// Plural resource (`leases`).
    pub resource: Option<String>,
    /// The caller, as the audit names it (a test control: one replica's requests fail while
    /// another's succeed, as when only one replica loses its network path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
}

impl RequestMatch {
    /// Whether a request with this verb and resource, from `identity`, is selected.
    pub fn matches(&self, verb: &str, resource: &str, identity: &str) -> bool {
        self.verb.as_deref().is_none_or(|v| v == verb)
            && self.resource.as_deref().is_none_or(|r| r == resource)
            && self.identity.as_deref().is_none_or(|i| i == identity)
    }
}

/// Fail a fraction of the matching requests with `code` (429, 500 or 503).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureRule {
    /// Requests the rule applies to.
    #[serde(flatten)]
    pub target: RequestMatch,
    /// Probability in [0, 1] that a matching request fails.
    pub fraction: f64,
    /// HTTP code of the failure (429 adds `Retry-After: 1`).
    pub code: u16,
}

/// The standing fault configuration (also the JSON body of `GET/PUT /_sim/faults`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FaultConfig {
    /// Added before every API request is handled.
    pub latency_ms: u64,
    /// Failure rules, first match wins; a failed request is not handled.
    pub failures: Vec<FailureRule>,
    /// Lost-response rules, first match wins: the request is handled (a write commits, with
    /// its watch event) and its answer replaced by the rule's error (500 InternalError or
    /// 504 Timeout), as when a response is lost between server and client. Not for watches.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lost_responses: Vec<FailureRule>,
    /// Matching requests wait, unanswered, until the rule is removed.
    pub hangs: Vec<RequestMatch>,
    /// Every API request waits and every watch stops delivering until thawed.
    pub frozen: bool,
}

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

/// What the fault configuration says to do with one request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// Handle it.
    Proceed,
    /// Answer with this injected error code.
    Fail(u16),
}

/// Decides whether a request of `identity` fails before it is handled, given a uniform
/// random number in [0, 1).
pub fn decide(config: &FaultConfig, verb: &str, resource: &str, identity: &str, roll: f64) -> Verdict {
    first_match(&config.failures, verb, resource, identity, roll)
}

/// Decides whether the answer to a handled request of `identity` is lost, given a uniform
/// random number in [0, 1).
pub fn decide_lost(config: &FaultConfig, verb: &str, resource: &str, identity: &str, roll: f64) -> Verdict {
    first_match(&config.lost_responses, verb, resource, identity, roll)
}

fn first_match(rules: &[FailureRule], verb: &str, resource: &str, identity: &str, roll: f64) -> Verdict {
    match rules.iter().find(|f| f.target.matches(verb, resource, identity)) {
        Some(rule) if roll < rule.fraction => Verdict::Fail(rule.code),
        _ => Verdict::Proceed,
    }
}

/// Whether the request of `identity` must keep waiting (hung or frozen).
pub fn must_wait(config: &FaultConfig, verb: &str, resource: &str, identity: &str) -> bool {
    config.frozen || config.hangs.iter().any(|h| h.matches(verb, resource, identity))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_rules_should_apply_by_verb_resource_and_fraction() {
        let mut c = FaultConfig::default();
        c.failures.push(FailureRule {
            target: RequestMatch {
                verb: Some("list".into()),
                resource: None,
                identity: None,
            },
            fraction: 0.5,
            code: 503,
        });
        assert_eq!(decide(&c, "list", "secrets", "a", 0.4), Verdict::Fail(503));
        assert_eq!(decide(&c, "list", "secrets", "a", 0.6), Verdict::Proceed);
        assert_eq!(decide(&c, "get", "secrets", "a", 0.0), Verdict::Proceed);
    }

    #[test]
    fn failure_rules_for_an_identity_should_spare_other_callers() {
        let mut c = FaultConfig::default();
        c.failures.push(FailureRule {
            target: RequestMatch {
                verb: Some("update".into()),
                resource: Some("leases".into()),
                identity: Some("replica-a".into()),
            },
            fraction: 1.0,
            code: 500,
        });
        assert_eq!(
            decide(&c, "update", "leases", "replica-a", 0.0),
            Verdict::Fail(500)
        );
        assert_eq!(decide(&c, "update", "leases", "replica-b", 0.0), Verdict::Proceed);
    }

    #[test]
    fn hang_rules_should_hold_only_matching_requests() {
        let mut c = FaultConfig::default();
        c.hangs.push(RequestMatch {
            verb: Some("update".into()),
            resource: Some("leases".into()),
            identity: None,
        });
        assert!(must_wait(&c, "update", "leases", "a"));
        assert!(!must_wait(&c, "get", "leases", "a"));
    }
}
