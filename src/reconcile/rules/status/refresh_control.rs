//! What status says about refresh control (issue 36): a suspended object, a `CreatedOnce` target
//! kept, and a resumed object.
//!
//! # Guarantees
//! - While suspended: `Suspended=True` (reason `Suspended`, or `ConnectionSuspended` on a
//!   FerrVaultSecret whose connection is), and nothing else changes: `Ready` keeps what the last
//!   pass found (the target still holds what it wrote), so an alert on `Ready=False` neither
//!   fires nor clears because of a pause.
//! - Every status a running pass writes has no `Suspended` condition ([`without_suspension`]).
//! - Resumed with nothing due (only `spec.suspend` changed since the last sync): no `Suspended`
//!   condition, and the last sync's `Ready`, `RolloutRestarted` and `observedGeneration` carried
//!   to this generation ([`resumed`]), so generation-based health checks see it current.
//! - A kept `CreatedOnce` target: `Ready=True/TargetKept` at this generation, its version and the
//!   force-sync values recorded, the last sync's `lastSyncedAt` and keys kept; a restart still
//!   due for it (retried by that pass) keeps `RolloutRestarted=False`, so it stays due.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use super::{
    conditions::{ConditionUpdate, remove_condition, upsert_condition},
    secret_status::{ForceSyncSeen, RolloutState, record_rollout},
};
use crate::api::{ConditionStatus, ConditionType, FerrVaultSecretStatus, Reason};

/// The `Suspended=True` condition for `reason` (`Suspended` or `ConnectionSuspended`) written
/// into `conditions`, at `generation`.
pub(crate) fn suspend(
    conditions: &mut Vec<Condition>,
    reason: Reason,
    generation: Option<i64>,
    now: Timestamp,
) {
    let message = match reason {
        Reason::ConnectionSuspended => {
            "its FerrVaultConnection has spec.suspend: true: no FerrVault request, no write"
        }
        _ => "spec.suspend is true: no FerrVault request, no write, no timer",
    };
    upsert_condition(
        conditions,
        ConditionUpdate {
            type_: ConditionType::Suspended,
            status: ConditionStatus::True,
            reason,
            message: message.to_owned(),
            observed_generation: generation,
        },
        now,
    );
}

/// `conditions` without the `Suspended` condition: a pass runs.
pub(crate) fn without_suspension(conditions: &mut Vec<Condition>) {
    remove_condition(conditions, ConditionType::Suspended);
}

/// The status of a FerrVaultSecret with nothing due at `generation` (its last sync holds for it):
/// `previous` without the `Suspended` condition, its sync's conditions and `observedGeneration`
/// at `generation`. Equal to `previous` when it already synced at `generation` and is not suspended.
pub(crate) fn resumed(previous: &FerrVaultSecretStatus, generation: Option<i64>) -> FerrVaultSecretStatus {
    let mut status = previous.clone();
    without_suspension(&mut status.conditions);
    let synced_at = status.observed_generation;
    for condition in &mut status.conditions {
        let of_sync = [ConditionType::Ready, ConditionType::RolloutRestarted]
            .iter()
            .any(|type_| condition.type_ == type_.as_str());
        if of_sync && condition.observed_generation == synced_at {
            condition.observed_generation = generation;
        }
    }
    status.observed_generation = generation;
    status
}

/// The status of a `CreatedOnce` FerrVaultSecret whose target `target` exists at `version`;
/// `rollout` is how the retry of a restart still due for it ended (`None`: none was due, and the
/// `RolloutRestarted` condition goes).
pub(crate) fn kept(
    previous: &FerrVaultSecretStatus,
    (target, version): (&str, Option<String>),
    (force_sync, rollout): (ForceSyncSeen, Option<RolloutState>),
    generation: Option<i64>,
    now: Timestamp,
) -> FerrVaultSecretStatus {
    let mut status = previous.clone();
    upsert_condition(
        &mut status.conditions,
        ConditionUpdate::ready(
            ConditionStatus::True,
            Reason::TargetKept,
            format!(
                "refreshPolicy CreatedOnce: Secret {target} exists and is never overwritten \
                 (annotate ferrvault.com/force-sync to overwrite it)"
            ),
            generation,
        ),
        now,
    );
    record_rollout(&mut status.conditions, rollout, generation, now);
    status.observed_generation = generation;
    status.target_resource_version = version;
    force_sync.record(&mut status);
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suspension_should_add_its_condition_and_leave_ready_alone_until_resumed() {
        let mut status = FerrVaultSecretStatus::default();
        upsert_condition(
            &mut status.conditions,
            ConditionUpdate::ready(ConditionStatus::True, Reason::Synced, "ok".into(), Some(1)),
            Timestamp::UNIX_EPOCH,
        );
        let ready = status.conditions.clone();
        suspend(
            &mut status.conditions,
            Reason::Suspended,
            Some(2),
            Timestamp::UNIX_EPOCH,
        );
        assert_eq!(status.conditions[0], ready[0], "Ready untouched");
        let suspended = &status.conditions[1];
        assert_eq!(
            (
                suspended.type_.as_str(),
                suspended.status.as_str(),
                suspended.reason.as_str()
            ),
            ("Suspended", "True", "Suspended")
        );
        without_suspension(&mut status.conditions);
        assert_eq!(status.conditions, ready);
    }

    #[test]
    fn resumed_should_drop_suspended_and_carry_the_last_sync_to_this_generation() {
        let mut status = FerrVaultSecretStatus {
            observed_generation: Some(1),
            ..Default::default()
        };
        upsert_condition(
            &mut status.conditions,
            ConditionUpdate::ready(ConditionStatus::True, Reason::Synced, "ok".into(), Some(1)),
            Timestamp::UNIX_EPOCH,
        );
        let synced = status.clone();
        suspend(
            &mut status.conditions,
            Reason::Suspended,
            Some(2),
            Timestamp::UNIX_EPOCH,
        );
        let current = resumed(&status, Some(3));
        assert_eq!(current.observed_generation, Some(3));
        assert_eq!(current.conditions.len(), 1, "{:?}", current.conditions);
        let ready = &current.conditions[0];
        assert_eq!(ready.observed_generation, Some(3));
        assert_eq!(
            ready.last_transition_time,
            synced.conditions[0].last_transition_time
        );
        assert_eq!(resumed(&current, Some(3)), current, "nothing more once caught up");
    }

    #[test]
    fn a_kept_target_should_read_ready_at_this_generation_and_record_the_force_values() {
        let forced = ForceSyncSeen {
            own: Some("1".into()),
            connection: Some("c".into()),
        };
        let status = kept(
            &FerrVaultSecretStatus::default(),
            ("app", Some("9".into())),
            (forced, None),
            Some(3),
            Timestamp::UNIX_EPOCH,
        );
        let ready = &status.conditions[0];
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("True", "TargetKept")
        );
        assert_eq!(ready.observed_generation, Some(3));
        assert_eq!(status.observed_generation, Some(3));
        assert_eq!(status.target_resource_version.as_deref(), Some("9"));
        assert_eq!(status.observed_force_sync.as_deref(), Some("1"));
        assert_eq!(status.observed_connection_force_sync.as_deref(), Some("c"));
        assert_eq!(status.last_synced_at, None, "nothing was synced");
    }
}
