//! The standing fault configuration and what it decides for one request: fail it, lose its
//! answer, or hold it. Pure: no clock, no randomness of its own (the caller rolls the dice).

use serde::{Deserialize, Serialize};

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
