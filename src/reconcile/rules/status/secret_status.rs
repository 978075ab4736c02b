//! FerrVaultSecret status: how each outcome of a pass changes it.
//!
//! # Guarantees
//! - Failures keep `lastSyncedAt`, `syncedKeys` and `lastRolloutHash` of the last good sync
//!   and do not stamp `status.observedGeneration` (reference §3.3); the MissingKeys guard does.
//! - A sync records the target's version and its inputs' versions (`targetResourceVersion`,
//!   `observedInputs`), which tell the next pass whether anything changed since
//!   ([`freshness`](crate::reconcile::rules::schedule::freshness)); a failure keeps those of the
//!   last good sync.
//! - `syncedKeys` lists at most [`MAX_LISTED_SYNCED_KEYS`] keys (the first, sorted); the Ready
//!   message counts them all. A Secret may hold hundreds of thousands of one-letter keys within
//!   its 1 MiB, and a status listing them all would be larger than an object may be.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, MicroTime, Time};

use super::{
    conditions::{ConditionUpdate, remove_condition, upsert_condition},
    messages,
};
use crate::{
    api::{ConditionStatus, ConditionType, FerrVaultSecretStatus, Reason},
    ferrvault::MissingKeys,
};

/// The most keys `status.syncedKeys` lists (issue 34 point 8): 1,000 keys of the longest name a
/// Secret key may have (253 bytes) keep the list under 256 KiB; any usual Secret is listed whole.
pub(crate) const MAX_LISTED_SYNCED_KEYS: usize = 1000;

/// The status after a failure with `reason`: Ready=False, the rest of the last good sync kept.
pub(crate) fn after_failure(
    previous: &FerrVaultSecretStatus,
    reason: Reason,
    message: String,
    generation: Option<i64>,
    now: Timestamp,
) -> FerrVaultSecretStatus {
    let mut status = previous.clone();
    upsert_condition(
        &mut status.conditions,
        ConditionUpdate::ready(ConditionStatus::False, reason, message, generation),
        now,
    );
    status
}

/// How the rollout step of a pass ended (only with rollout targets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RolloutState {
    /// Every workload runs the current content.
    UpToDate,
    /// A restart failed: the first failure (names only); retried.
    Failed(String),
    /// A restart is due but the rollout floor defers it; the message says until when.
    Deferred(String),
}

/// What a sync that wrote (or confirmed) the target produced.
pub(crate) struct SyncedState {
    /// Keys in the target, sorted.
    pub synced_keys: Vec<String>,
    /// The label keys set from `target.metadata.labels`, sorted.
    pub owned_labels: Vec<String>,
    /// The annotation keys set from `target.metadata.annotations`, sorted.
    pub owned_annotations: Vec<String>,
    /// Requested keys absent upstream (the first names, sorted, and their count).
    pub missing_keys: MissingKeys,
    /// The target's name.
    pub target: String,
    /// `status.lastRolloutHash` after the rollout step.
    pub last_rollout_hash: Option<String>,
    /// `None` without rollout targets.
    pub rollout: Option<RolloutState>,
    /// The target's `resourceVersion` after the sync (written, or found as it must be).
    pub target_resource_version: Option<String>,
    /// When the immutable target was replaced, while a workload restart for it is still due
    /// (`status.targetReplacedAt`).
    pub target_replaced_at: Option<Timestamp>,
    /// The versions of what the sync read besides FerrVault (`status.observedInputs`).
    pub observed_inputs: String,
    /// The force-sync values the sync ran with.
    pub force_sync: ForceSyncSeen,
    /// The hash of the revealed versions (`status.observedSourceVersion`); `None` when the
    /// reveal carried no versions (cloud mode).
    pub source_version: Option<String>,
}

/// The force-sync values a pass ran with, which its status records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ForceSyncSeen {
    /// The object's own annotation, bounded (`status.observedForceSync`).
    pub own: Option<String>,
    /// Its connection's `status.observedForceSync` (`status.observedConnectionForceSync`).
    pub connection: Option<String>,
}

impl ForceSyncSeen {
    /// Records these values in `status`.
    pub(crate) fn record(self, status: &mut FerrVaultSecretStatus) {
        status.observed_force_sync = self.own;
        status.observed_connection_force_sync = self.connection;
    }
}

/// The `RolloutRestarted` condition in `conditions` after a rollout step that ended as
/// `rollout` (`None`: no rollout targets, no condition).
pub(crate) fn record_rollout(
    conditions: &mut Vec<Condition>,
    rollout: Option<RolloutState>,
    generation: Option<i64>,
    now: Timestamp,
) {
    let Some(rollout) = rollout else {
        remove_condition(conditions, ConditionType::RolloutRestarted);
        return;
    };
    let (holds, reason, message) = match rollout {
        RolloutState::UpToDate => (true, Reason::UpToDate, messages::ROLLOUT_UP_TO_DATE.to_owned()),
        RolloutState::Failed(error) => (false, Reason::RolloutFailed, error),
        RolloutState::Deferred(message) => (false, Reason::RolloutDeferred, message),
    };
    upsert_condition(
        conditions,
        ConditionUpdate {
            type_: ConditionType::RolloutRestarted,
            status: ConditionStatus::from_bool(holds),
            reason,
            message,
            observed_generation: generation,
        },
        now,
    );
}

/// The status after a sync that wrote the target.
pub(crate) fn after_sync(
    previous: &FerrVaultSecretStatus,
    state: SyncedState,
    generation: Option<i64>,
    now: Timestamp,
) -> FerrVaultSecretStatus {
    let mut status = previous.clone();
    let ready_update = if state.missing_keys.is_empty() {
        ConditionUpdate::ready(
            ConditionStatus::True,
            Reason::Synced,
            messages::synced(state.synced_keys.len(), &state.target),
            generation,
        )
    } else {
        ConditionUpdate::ready(
            ConditionStatus::False,
            Reason::MissingKeys,
            messages::missing_keys(&state.missing_keys),
            generation,
        )
    };
    upsert_condition(&mut status.conditions, ready_update, now);
    record_rollout(&mut status.conditions, state.rollout, generation, now);
    status.last_synced_at = Some(Time(now));
    status.synced_keys = state.synced_keys;
    status.synced_keys.truncate(MAX_LISTED_SYNCED_KEYS);
    status.owned_labels = state.owned_labels;
    status.owned_annotations = state.owned_annotations;
    status.missing_keys = messages::missing_keys_list(&state.missing_keys);
    status.observed_generation = generation;
    status.last_rollout_hash = state.last_rollout_hash;
    status.target_resource_version = state.target_resource_version;
    status.target_replaced_at = state.target_replaced_at.map(MicroTime);
    status.observed_inputs = Some(state.observed_inputs);
    status.observed_source_version = state.source_version;
    state.force_sync.record(&mut status);
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synced(rollout: Option<RolloutState>) -> SyncedState {
        SyncedState {
            synced_keys: vec!["A".into()],
            owned_labels: vec![],
            owned_annotations: vec![],
            missing_keys: MissingKeys::default(),
            target: "app".into(),
            last_rollout_hash: Some("h".into()),
            rollout,
            target_resource_version: Some("7".into()),
            target_replaced_at: None,
            observed_inputs: "inputs".into(),
            force_sync: Default::default(),
            source_version: None,
        }
    }

    #[test]
    fn failure_should_keep_the_last_good_sync_and_not_stamp_observed_generation() {
        let good = after_sync(
            &FerrVaultSecretStatus::default(),
            synced(None),
            Some(1),
            Timestamp::UNIX_EPOCH,
        );
        let failed = after_failure(
            &good,
            Reason::Unreachable,
            "down".into(),
            Some(2),
            Timestamp::UNIX_EPOCH,
        );
        assert_eq!(failed.synced_keys, good.synced_keys);
        assert_eq!(failed.last_synced_at, good.last_synced_at);
        assert_eq!(failed.observed_generation, Some(1));
        let ready = &failed.conditions[0];
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("False", "Unreachable")
        );
        assert_eq!(ready.observed_generation, Some(2));
    }

    #[test]
    fn synced_keys_should_list_a_bounded_number_of_keys_and_the_message_count_them_all() {
        let many: Vec<String> = (0..5000).map(|i| format!("K{i:05}")).collect();
        let status = after_sync(
            &FerrVaultSecretStatus::default(),
            SyncedState {
                synced_keys: many.clone(),
                ..synced(None)
            },
            Some(1),
            Timestamp::UNIX_EPOCH,
        );
        assert_eq!(status.synced_keys, many[..MAX_LISTED_SYNCED_KEYS]);
        assert_eq!(status.conditions[0].message, "5000 key(s) synced into app");
    }

    #[test]
    fn rollout_condition_should_follow_the_rollout_and_go_with_its_targets() {
        let failed = after_sync(
            &FerrVaultSecretStatus::default(),
            synced(Some(RolloutState::Failed("Deployment \"web\" not found".into()))),
            Some(1),
            Timestamp::UNIX_EPOCH,
        );
        let rollout = failed
            .conditions
            .iter()
            .find(|c| c.type_ == "RolloutRestarted")
            .unwrap();
        assert_eq!(
            (rollout.status.as_str(), rollout.reason.as_str()),
            ("False", "RolloutFailed")
        );
        let deferred = after_sync(
            &failed,
            synced(Some(RolloutState::Deferred("later".into()))),
            Some(1),
            Timestamp::UNIX_EPOCH,
        );
        let rollout = deferred
            .conditions
            .iter()
            .find(|c| c.type_ == "RolloutRestarted")
            .unwrap();
        assert_eq!(
            (
                rollout.status.as_str(),
                rollout.reason.as_str(),
                rollout.message.as_str()
            ),
            ("False", "RolloutDeferred", "later")
        );
        let done = after_sync(
            &deferred,
            synced(Some(RolloutState::UpToDate)),
            Some(1),
            Timestamp::UNIX_EPOCH,
        );
        let rollout = done
            .conditions
            .iter()
            .find(|c| c.type_ == "RolloutRestarted")
            .unwrap();
        assert_eq!(rollout.reason, "UpToDate");
        let without = after_sync(&done, synced(None), Some(1), Timestamp::UNIX_EPOCH);
        assert!(without.conditions.iter().all(|c| c.type_ != "RolloutRestarted"));
    }
}
