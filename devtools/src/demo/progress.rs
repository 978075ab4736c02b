//! The demo's progress: one line per resource whenever its Ready condition changes, and the
//! verdict "all Ready". Pure: fed with the conditions read from the cluster.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

/// One resource's Ready condition as last read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceState {
    /// `FerrVaultSecret` or `FerrVaultConnection`.
    pub kind: &'static str,
    /// `namespace/name`.
    pub key: String,
    /// Ready=True, or Suspended=True (a paused object is as the user asked, issue 36).
    pub ready: bool,
    /// `Ready=<status> <reason>: <message>` (`Suspended=True …` while suspended), or `waiting for
    /// the first reconcile`.
    pub summary: String,
}

impl ResourceState {
    /// The state of a resource with these `conditions` (its status may still be empty).
    pub fn new(kind: &'static str, key: String, conditions: &[Condition]) -> Self {
        let find = |type_: &str| conditions.iter().find(|c| c.type_ == type_ && c.status == "True");
        let shown = find("Suspended").or_else(|| conditions.iter().find(|c| c.type_ == "Ready"));
        let summary = match shown {
            Some(c) => format!("{}={:<5} {:<18} {}", c.type_, c.status, c.reason, c.message),
            None => "waiting for the first reconcile".to_owned(),
        };
        Self {
            kind,
            key,
            ready: find("Ready").is_some() || find("Suspended").is_some(),
            summary,
        }
    }
}

/// What has been printed so far, per resource.
#[derive(Debug, Default)]
pub struct Progress {
    printed: BTreeMap<(&'static str, String), String>,
}

impl Progress {
    /// The lines to print for `states`: one per resource whose summary changed since the last
    /// call (all of them the first time).
    pub fn observe(&mut self, states: &[ResourceState]) -> Vec<String> {
        let mut lines = Vec::new();
        for state in states {
            let id = (state.kind, state.key.clone());
            if self.printed.get(&id) != Some(&state.summary) {
                lines.push(format!("{:<20} {:<28} {}", state.kind, state.key, state.summary));
                self.printed.insert(id, state.summary.clone());
            }
        }
        lines
    }
}

/// Whether the demo is done: at least one resource, and every one Ready.
pub fn all_ready(states: &[ResourceState]) -> bool {
    !states.is_empty() && states.iter().all(|s| s.ready)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn condition(status: &str, reason: &str) -> Condition {
        Condition {
            type_: "Ready".into(),
            status: status.into(),
            reason: reason.into(),
            message: "m".into(),
            last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
            ),
            observed_generation: None,
        }
    }

    #[test]
    fn a_line_should_be_printed_only_when_a_resource_changes() {
        let mut progress = Progress::default();
        let waiting = ResourceState::new("FerrVaultSecret", "demo/a".into(), &[]);
        assert_eq!(progress.observe(std::slice::from_ref(&waiting)).len(), 1);
        assert!(progress.observe(std::slice::from_ref(&waiting)).is_empty());
        let synced = ResourceState::new("FerrVaultSecret", "demo/a".into(), &[condition("True", "Synced")]);
        let lines = progress.observe(&[synced]);
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].contains("Ready=True") && lines[0].contains("Synced"),
            "{lines:?}"
        );
    }

    #[test]
    fn a_suspended_resource_should_count_as_settled_and_say_so() {
        let mut suspended = condition("True", "Suspended");
        suspended.type_ = "Suspended".into();
        let state = ResourceState::new("FerrVaultSecret", "demo/paused".into(), &[suspended]);
        assert!(
            state.ready && state.summary.starts_with("Suspended=True"),
            "{state:?}"
        );
    }

    #[test]
    fn all_ready_should_need_every_resource_ready_and_at_least_one() {
        let ready = ResourceState::new("K", "a".into(), &[condition("True", "Synced")]);
        let failing = ResourceState::new("K", "b".into(), &[condition("False", "Unreachable")]);
        assert!(all_ready(std::slice::from_ref(&ready)));
        assert!(!all_ready(&[ready, failing]));
        assert!(!all_ready(&[]));
    }
}
