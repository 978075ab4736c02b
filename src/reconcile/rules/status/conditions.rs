//! Condition upserts on `status.conditions` (reference §1.2 `setCondition`, with
//! `observedGeneration` added).
//!
//! # Guarantees
//! - At most one entry per type: an update replaces the entry of its type or is appended.
//! - `lastTransitionTime` moves only when `status` changes; a new reason or message alone keeps
//!   the old time, so "Ready=False since 3h" stays true while the message is refreshed.
//! - `observedGeneration` is always written (unlike the Go operator), so a reader can tell a
//!   condition about the current spec from a stale one.
//! - No message is longer than [`MAX_MESSAGE_BYTES`] (1 KiB): every condition of both kinds is
//!   written through [`upsert_condition`], which cuts a longer one with a marker naming its
//!   length ([`bounded_text`](crate::reconcile::rules::bounds::bounded_text)), so nothing a
//!   tenant names or serves makes a status grow with it (issue 34 point 8).

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use crate::api::{ConditionStatus, ConditionType, Reason};
use crate::reconcile::rules::bounds::bounded_text::{MAX_MESSAGE_BYTES, cut};

/// The new state of one condition.
///
/// NOTE: `message` ends up in status, where anyone with `get` on the object reads it; it must
/// never contain a secret value or token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConditionUpdate {
    /// Which condition.
    pub type_: ConditionType,
    /// Its new status.
    pub status: ConditionStatus,
    /// Why, from the fixed reason set.
    pub reason: Reason,
    /// For humans; no secret values. Cut to [`MAX_MESSAGE_BYTES`] when written.
    pub message: String,
    /// The object's `metadata.generation` this observation is based on.
    pub observed_generation: Option<i64>,
}

impl ConditionUpdate {
    /// The `Ready` condition at `status` for `reason`/`message`, observed at `generation`.
    pub(crate) fn ready(
        status: ConditionStatus,
        reason: Reason,
        message: String,
        generation: Option<i64>,
    ) -> Self {
        Self {
            type_: ConditionType::Ready,
            status,
            reason,
            message,
            observed_generation: generation,
        }
    }
}

/// Writes `update` into `conditions` at time `now`, its message cut to [`MAX_MESSAGE_BYTES`];
/// see the module guarantees.
pub(crate) fn upsert_condition(conditions: &mut Vec<Condition>, update: ConditionUpdate, now: Timestamp) {
    let type_ = update.type_.as_str();
    let status = update.status.as_str();
    let existing = conditions.iter().position(|c| c.type_ == type_);
    let last_transition_time = match existing.map(|i| &conditions[i]) {
        Some(previous) if previous.status == status => previous.last_transition_time.clone(),
        _ => Time(now),
    };
    let condition = Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: update.reason.as_str().to_owned(),
        message: cut(update.message, MAX_MESSAGE_BYTES),
        observed_generation: update.observed_generation,
        last_transition_time,
    };
    match existing {
        Some(index) => conditions[index] = condition,
        None => conditions.push(condition),
    }
}

/// Removes the condition of `type_`, if present (for example `RolloutRestarted` once
/// `spec.rolloutRestart` is emptied).
pub(crate) fn remove_condition(conditions: &mut Vec<Condition>, type_: ConditionType) {
    conditions.retain(|c| c.type_ != type_.as_str());
}

/// The condition of `type_`, if present.
pub fn find_condition(conditions: &[Condition], type_: ConditionType) -> Option<&Condition> {
    conditions.iter().find(|c| c.type_ == type_.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(seconds).unwrap()
    }

    fn ready(status: ConditionStatus, reason: Reason, message: &str, generation: i64) -> ConditionUpdate {
        ConditionUpdate {
            type_: ConditionType::Ready,
            status,
            reason,
            message: message.into(),
            observed_generation: Some(generation),
        }
    }

    /// The conditions after upserting each update at its time (in seconds), in order.
    fn upserted<const N: usize>(updates: [(ConditionUpdate, i64); N]) -> Vec<Condition> {
        let mut conditions = Vec::new();
        for (update, seconds) in updates {
            upsert_condition(&mut conditions, update, at(seconds));
        }
        conditions
    }

    #[test]
    fn upsert_should_append_a_new_type_with_the_current_time_and_generation() {
        let conditions = upserted([(ready(ConditionStatus::True, Reason::Synced, "ok", 3), 10)]);
        assert_eq!(conditions.len(), 1);
        let c = &conditions[0];
        assert_eq!(
            (c.type_.as_str(), c.status.as_str(), c.reason.as_str()),
            ("Ready", "True", "Synced")
        );
        assert_eq!(c.observed_generation, Some(3));
        assert_eq!(c.last_transition_time, Time(at(10)));
    }

    #[test]
    fn upsert_should_keep_the_transition_time_when_only_reason_or_message_change() {
        let conditions = upserted([
            (ready(ConditionStatus::False, Reason::Unreachable, "a", 1), 10),
            (ready(ConditionStatus::False, Reason::AuthFailed, "b", 2), 20),
        ]);
        assert_eq!(conditions.len(), 1);
        assert_eq!(conditions[0].last_transition_time, Time(at(10)));
        assert_eq!(
            (conditions[0].reason.as_str(), conditions[0].message.as_str()),
            ("AuthFailed", "b")
        );
        assert_eq!(conditions[0].observed_generation, Some(2));
    }

    #[test]
    fn upsert_should_move_the_transition_time_when_the_status_changes() {
        let conditions = upserted([
            (ready(ConditionStatus::False, Reason::Unreachable, "a", 1), 10),
            (ready(ConditionStatus::True, Reason::Synced, "b", 1), 20),
        ]);
        assert_eq!(conditions[0].last_transition_time, Time(at(20)));
    }

    #[test]
    fn upsert_should_bound_a_message_built_from_a_maximal_list() {
        // The longest list a message is built from: 100 names of 253 bytes (the longest Secret
        // key), as a missing-keys message names them.
        let names: Vec<String> = (0..100).map(|i| format!("{i:0>253}")).collect();
        let message = format!("missing in FerrVault: [{}]", names.join(" "));
        let conditions = upserted([(
            ready(ConditionStatus::False, Reason::MissingKeys, &message, 1),
            10,
        )]);
        let written = &conditions[0].message;
        assert!(written.len() <= MAX_MESSAGE_BYTES, "{} bytes", written.len());
        assert!(written.starts_with("missing in FerrVault: [000"), "{written}");
        assert!(
            written.ends_with(&format!("… [cut: {} bytes in all]", message.len())),
            "{written}"
        );
        let short = upserted([(ready(ConditionStatus::True, Reason::Synced, "ok", 1), 10)]);
        assert_eq!(short[0].message, "ok", "a short message is written as it is");
    }

    #[test]
    fn upsert_should_touch_only_the_condition_of_its_type() {
        let rollout = ConditionUpdate {
            type_: ConditionType::RolloutRestarted,
            ..ready(ConditionStatus::True, Reason::UpToDate, "r", 1)
        };
        let mut conditions = upserted([
            (rollout, 5),
            (ready(ConditionStatus::True, Reason::Synced, "ok", 1), 10),
            (ready(ConditionStatus::False, Reason::MissingKeys, "m", 1), 20),
        ]);
        assert_eq!(conditions.len(), 2);
        let is_true = |type_| {
            find_condition(&conditions, type_).is_some_and(|c| c.status == ConditionStatus::True.as_str())
        };
        assert!(is_true(ConditionType::RolloutRestarted));
        assert!(!is_true(ConditionType::Ready));
        remove_condition(&mut conditions, ConditionType::RolloutRestarted);
        assert!(find_condition(&conditions, ConditionType::RolloutRestarted).is_none());
        assert!(find_condition(&conditions, ConditionType::Ready).is_some());
    }
}
