//! Whether a FerrVaultSecret pass has anything to do, and when its next refresh is due: the rule
//! that lets a restart or a failover with nothing due cost no FerrVault request and no write (as
//! External Secrets' refresh check does), and what keeps it correct.
//!
//! # The rule
//! A pass syncs unless all of these hold; then it only schedules the key for its due time:
//! - **The last sync succeeded at this generation**: `Ready=True/Synced` observed at
//!   `metadata.generation`, `status.observedGeneration` equal, and no `RolloutRestarted=False`
//!   (a failed or deferred restart is still due).
//! - **Its inputs are unchanged**: `status.observedInputs` equals the versions the stores show
//!   now (the connection's UID, generation and Ready status, its token and CA Secrets'
//!   `resourceVersion`s, the content-hash key's identifier). A connection edited, recreated or
//!   turned (un)reachable, a token rotated or the key replaced syncs at once, whether it
//!   happened while the operator ran or while it was down. A connection's first probe finding
//!   it reachable changes nothing: not probed yet counts as reachable (see
//!   [`ready_for_dependants`](crate::reconcile::read::ready_for_dependants)), so the objects
//!   synced before it stay in their wave.
//! - **The target is as the last sync left it**: the Secret store shows it at
//!   `status.targetResourceVersion`. Every write to a Secret, by anyone, gives it a new version
//!   and a deleted one has none, so a target edited or deleted (even while no operator ran) is
//!   healed at once. (Right after our own write the store may not show it yet: the caller
//!   passes the recorded version then, and looks again once the store has it.)
//! - **The refresh is not due**: `lastSyncedAt` + the interval × the wave factor is at least
//!   [`MIN_REQUEUE`] away (a refresh due sooner is done now).
//!
//! The caller also judges the target access again (no read, no request), so a target a
//! connection started to read is refused at once rather than at the next refresh.
//!
//! A FerrVaultConnection's probe follows the same idea ([`probe_not_due`]): found reachable at
//! this generation, token and CA Secrets unchanged, next probe not due.
//!
//! # Refresh waves
//! The next refresh is `lastSyncedAt + interval × wave factor`. The factor is fixed per
//! (namespace, connection, vault) within ±[`WAVE_SPREAD`], instead of drawn for each key at each
//! refresh: FerrVaultSecrets synced together keep refreshing together, so one FerrVault request
//! serves their whole wave, while the waves of different vaults stay spread.

use std::time::Duration;

use jiff::Timestamp;
use sha2::{Digest, Sha256};

use crate::reconcile::rules::status::conditions::find_condition;

use super::requeue::MIN_REQUEUE;
use crate::api::{ConditionStatus, ConditionType, FerrVaultConnectionStatus, FerrVaultSecretStatus, Reason};

/// How far a wave's refresh may move from the interval: ±10%, the runtime's per-key jitter.
pub const WAVE_SPREAD: f64 = 0.1;

/// When one FerrVaultSecret refreshes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Schedule {
    /// The refresh interval; zero disables refreshes.
    pub interval: Duration,
    /// The wave factor of its (namespace, connection, vault), see [`wave_factor`].
    pub wave: f64,
}

impl Schedule {
    /// The delay to the next refresh after a sync that just completed; `None` when refreshes
    /// are disabled.
    pub(crate) fn after_sync(&self) -> Option<Duration> {
        (!self.interval.is_zero()).then(|| self.interval.mul_f64(self.wave).max(MIN_REQUEUE))
    }

    /// The delay from `now` to the refresh of a sync completed at `synced_at`: `Some(ZERO)` when
    /// it is due (or due within [`MIN_REQUEUE`]), `None` when refreshes are disabled.
    pub(crate) fn remaining(&self, synced_at: Timestamp, now: Timestamp) -> Option<Duration> {
        let every = self.after_sync()?;
        let since = Duration::try_from(now.duration_since(synced_at)).unwrap_or(Duration::ZERO);
        let left = every.saturating_sub(since);
        Some(if left < MIN_REQUEUE { Duration::ZERO } else { left })
    }
}

/// The wave factor of `group` (the FerrVaultSecret's namespace, connection and vault), in
/// `[1 - WAVE_SPREAD, 1 + WAVE_SPREAD)`: the same for every FerrVaultSecret of the group, in
/// every process (a SHA-256 of the group, not a per-process hash).
pub(crate) fn wave_factor(group: &str) -> f64 {
    let digest = Sha256::digest(group.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    let unit = (u64::from_be_bytes(first) >> 11) as f64 / (1u64 << 53) as f64;
    1.0 - WAVE_SPREAD + 2.0 * WAVE_SPREAD * unit
}

/// What the stores show now, to compare with what the last sync recorded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Observed<'a> {
    /// `metadata.generation`.
    pub generation: Option<i64>,
    /// The inputs' versions, as [`FerrVaultSecretStatus::observed_inputs`] records them.
    pub inputs: &'a str,
    /// The target's `resourceVersion` in the Secret store; `None` when the store does not hold it.
    pub target_version: Option<&'a str>,
}

/// Whether a pass must sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Freshness {
    /// Something is due: sync.
    Due,
    /// Nothing is due: the next refresh is in this long (`None`: refreshes are disabled).
    UpToDate(Option<Duration>),
}

/// The rule of the module, for `status` as read, what the stores show `now`, and `schedule`.
pub(crate) fn freshness(
    status: &FerrVaultSecretStatus,
    observed: Observed<'_>,
    schedule: Schedule,
    now: Timestamp,
) -> Freshness {
    let inputs_unchanged = status.observed_inputs.as_deref() == Some(observed.inputs);
    let target_as_left = observed.target_version.is_some()
        && status.target_resource_version.as_deref() == observed.target_version;
    let Some(synced_at) = status.last_synced_at.as_ref().map(|t| t.0) else {
        return Freshness::Due;
    };
    if !(synced_here(status, observed.generation) && inputs_unchanged && target_as_left) {
        return Freshness::Due;
    }
    match schedule.remaining(synced_at, now) {
        Some(Duration::ZERO) => Freshness::Due,
        next => Freshness::UpToDate(next),
    }
}

/// The first condition of the rule, which `status` alone decides (so a pass it rules out need not
/// wait for any store): the last sync succeeded at `generation` and no restart is still due.
pub(crate) fn synced_here(status: &FerrVaultSecretStatus, generation: Option<i64>) -> bool {
    let ready_here = find_condition(&status.conditions, ConditionType::Ready).is_some_and(|ready| {
        ready.status == ConditionStatus::True.as_str()
            && ready.reason == Reason::Synced.as_str()
            && ready.observed_generation == generation
    }) && status.observed_generation == generation;
    let rollout_pending = find_condition(&status.conditions, ConditionType::RolloutRestarted)
        .is_some_and(|c| c.status != ConditionStatus::True.as_str());
    ready_here && !rollout_pending
}

/// The first condition of [`probe_not_due`], which `status` alone decides: the last probe found
/// the connection reachable at `generation`.
pub(crate) fn reachable_here(status: &FerrVaultConnectionStatus, generation: Option<i64>) -> bool {
    find_condition(&status.conditions, ConditionType::Ready).is_some_and(|ready| {
        ready.status == ConditionStatus::True.as_str()
            && ready.reason == Reason::Reachable.as_str()
            && ready.observed_generation == generation
    })
}

/// When a FerrVaultConnection needs no probe: it was found reachable at this `generation`, the
/// `inputs` it reads (its token and CA Secrets' versions) are those of that probe, and the next
/// probe (`lastCheckedAt` + `every`) is at least [`MIN_REQUEUE`] away. Returns the delay to it;
/// `None` when a probe is due.
pub(crate) fn probe_not_due(
    status: &FerrVaultConnectionStatus,
    generation: Option<i64>,
    inputs: &str,
    every: Duration,
    now: Timestamp,
) -> Option<Duration> {
    if !reachable_here(status, generation) || status.observed_inputs.as_deref() != Some(inputs) {
        return None;
    }
    let checked_at = status.last_checked_at.as_ref()?.0;
    let since = Duration::try_from(now.duration_since(checked_at)).unwrap_or(Duration::ZERO);
    Some(every.saturating_sub(since)).filter(|left| *left >= MIN_REQUEUE)
}

#[cfg(test)]
mod tests;
