//! The operator's floor under every interval a tenant sets (`--min-refresh-interval`, issue 34):
//! `spec.refreshInterval` today, and any polling interval a later spec field adds (give it an
//! [`IntervalField`] and call [`floor_interval`] and [`record_clamp`]). A tenant chooses how
//! often the operator writes for it; the floor bounds that choice.
//!
//! # Guarantees
//! - The interval used is never shorter than the floor, except `0s` (disabled), which stays
//!   disabled: a floor never turns on work the tenant turned off.
//! - A shorter interval is admitted, not refused: the object keeps syncing, at the floor, and a
//!   condition of the field's type (status True, reason `BelowMinimum`) says so; it is removed
//!   as soon as the interval is no longer clamped (edited, or the floor lowered).
//! - The condition names the field, the interval asked for and the floor: never a value.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::api::{ConditionStatus, ConditionType, Reason};
use crate::reconcile::rules::status::{
    conditions::{ConditionUpdate, remove_condition, upsert_condition},
    messages,
};

/// A spec field holding an interval the floor applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IntervalField {
    /// The field's name in the spec, as the message shows it.
    pub name: &'static str,
    /// What happens at that interval, as the message shows it ("refreshing every 30s").
    pub activity: &'static str,
    /// The condition that says the field is clamped.
    pub condition: ConditionType,
}

/// `spec.refreshInterval` of a FerrVaultSecret.
pub(crate) const REFRESH_INTERVAL: IntervalField = IntervalField {
    name: "refreshInterval",
    activity: "refreshing",
    condition: ConditionType::RefreshIntervalClamped,
};

/// An interval as the tenant asked for it and as the operator uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Floored {
    /// What the spec says.
    pub requested: Duration,
    /// What the operator uses: `requested`, or the floor when `requested` is shorter (and not
    /// zero).
    pub effective: Duration,
}

impl Floored {
    /// Whether the floor replaced the interval asked for.
    pub(crate) fn is_clamped(&self) -> bool {
        self.effective != self.requested
    }
}

/// `requested` under the floor `minimum`; see the module guarantees.
pub fn floor_interval(requested: Duration, minimum: Duration) -> Floored {
    let effective = if requested.is_zero() {
        requested
    } else {
        requested.max(minimum)
    };
    Floored { requested, effective }
}

/// Writes `field`'s condition into `conditions` when `floored` is clamped, and removes it
/// otherwise (also when the interval is unknown: `None`, an invalid spec).
pub(crate) fn record_clamp(
    conditions: &mut Vec<Condition>,
    field: IntervalField,
    floored: Option<Floored>,
    generation: Option<i64>,
    now: Timestamp,
) {
    match floored.filter(Floored::is_clamped) {
        None => remove_condition(conditions, field.condition),
        Some(floored) => upsert_condition(
            conditions,
            ConditionUpdate {
                type_: field.condition,
                status: ConditionStatus::True,
                reason: Reason::BelowMinimum,
                message: messages::interval_clamped(
                    field.name,
                    field.activity,
                    floored.requested,
                    floored.effective,
                ),
                observed_generation: generation,
            },
            now,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::rules::status::conditions::find_condition;

    fn s(seconds: u64) -> Duration {
        Duration::from_secs(seconds)
    }

    #[test]
    fn intervals_should_be_clamped_to_the_floor_except_zero() {
        // (requested, floor, effective)
        let table = [
            (s(1), s(30), s(30)),
            (Duration::from_millis(1), s(30), s(30)),
            (s(29), s(30), s(30)),
            (s(30), s(30), s(30)),
            (s(31), s(30), s(31)),
            (s(3600), s(30), s(3600)),
            (Duration::ZERO, s(30), Duration::ZERO),
            (s(1), Duration::ZERO, s(1)),
        ];
        for (requested, floor, effective) in table {
            let floored = floor_interval(requested, floor);
            assert_eq!(floored.effective, effective, "{requested:?} under {floor:?}");
            assert_eq!(floored.is_clamped(), effective != requested);
        }
    }

    #[test]
    fn the_condition_should_say_so_while_clamped_and_go_when_not() {
        let mut conditions = Vec::new();
        let clamped = floor_interval(s(1), s(30));
        record_clamp(
            &mut conditions,
            REFRESH_INTERVAL,
            Some(clamped),
            Some(4),
            Timestamp::UNIX_EPOCH,
        );
        let condition = find_condition(&conditions, ConditionType::RefreshIntervalClamped).expect("set");
        assert_eq!(
            (
                condition.status.as_str(),
                condition.reason.as_str(),
                condition.message.as_str(),
                condition.observed_generation
            ),
            (
                "True",
                "BelowMinimum",
                "refreshInterval 1s is below the operator's minimum of 30s; refreshing every 30s",
                Some(4)
            )
        );
        for unclamped in [Some(floor_interval(s(60), s(30))), None] {
            let mut now_clamped = conditions.clone();
            record_clamp(
                &mut now_clamped,
                REFRESH_INTERVAL,
                unclamped,
                Some(5),
                Timestamp::UNIX_EPOCH,
            );
            assert!(now_clamped.is_empty(), "{unclamped:?}: removed");
        }
    }
}
