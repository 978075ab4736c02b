//! Whether a FerrVaultSecret pass has anything to do, and when its next refresh is due: the rule
//! that lets a restart or a failover with nothing due cost no FerrVault request and no write (as
//! External Secrets' refresh check does), and what keeps it correct.
//!
//! # The rule
//! A pass syncs unless all of these hold; then it only schedules the key for its due time:
//! - **The last sync succeeded at this generation**: `Ready=True/Synced` observed at
//!   `metadata.generation`, `status.observedGeneration` equal, and no `RolloutRestarted=False`
//!   (a failed or deferred restart is still due). A later generation whose spec differs only in
//!   `spec.suspend` (`status.observedSpecDigest` matches) counts as this one, so a resume with
//!   nothing else changed syncs nothing ([`synced_now`](super::spec_digest::synced_now)).
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

use super::requeue::MIN_REQUEUE;
use crate::{
    api::{
        ConditionStatus, ConditionType, FerrVaultConnectionStatus, FerrVaultSecret, FerrVaultSecretStatus,
        Reason, RefreshPolicy,
    },
    reconcile::rules::status::conditions::find_condition,
};

/// How far a wave's refresh may move from the interval: ±10%, the runtime's per-key jitter.
pub const WAVE_SPREAD: f64 = 0.1;

/// When one FerrVaultSecret refreshes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    /// The refresh interval; zero disables refreshes.
    pub interval: Duration,
    /// The wave factor of its (namespace, connection, vault), see [`wave_factor`].
    pub wave: f64,
}

impl Schedule {
    /// When `cr` refreshes, with its `interval` as the operator uses it (resolved and floored):
    /// its wave is its namespace, connection, project and vault (the FerrVaultSecrets one reveal
    /// can serve). Under a `refreshPolicy` other than `Periodic` it never refreshes on a timer:
    /// the interval is zero (so no refresh is scheduled, and the refresh-interval gauge says 0,
    /// which the staleness alert skips).
    pub fn of(cr: &FerrVaultSecret, interval: Duration) -> Self {
        let interval = match cr.spec.policy() {
            RefreshPolicy::Periodic => interval,
            RefreshPolicy::OnChange | RefreshPolicy::CreatedOnce => Duration::ZERO,
        };
        let group = format!(
            "{}/{}/{}/{}",
            cr.metadata.namespace.as_deref().unwrap_or_default(),
            cr.spec.connection_ref.name,
            cr.spec.project.as_deref().unwrap_or_default(),
            cr.spec.vault
        );
        Self {
            interval,
            wave: wave_factor(&group),
        }
    }

    /// The delay to the next refresh after a sync that just completed; `None` when refreshes
    /// are disabled.
    pub fn after_sync(&self) -> Option<Duration> {
        (!self.interval.is_zero()).then(|| self.interval.mul_f64(self.wave).max(MIN_REQUEUE))
    }

    /// The delay from `now` to the refresh of a sync completed at `synced_at`: `Some(ZERO)` when
    /// it is due (or due within [`MIN_REQUEUE`]), `None` when refreshes are disabled.
    pub fn remaining(&self, synced_at: Timestamp, now: Timestamp) -> Option<Duration> {
        let every = self.after_sync()?;
        let since = Duration::try_from(now.duration_since(synced_at)).unwrap_or(Duration::ZERO);
        let left = every.saturating_sub(since);
        Some(if left < MIN_REQUEUE { Duration::ZERO } else { left })
    }
}

/// The wave factor of `group` (the FerrVaultSecret's namespace, connection and vault), in
/// `[1 - WAVE_SPREAD, 1 + WAVE_SPREAD)`: the same for every FerrVaultSecret of the group, in
/// every process (a SHA-256 of the group, not a per-process hash).
pub fn wave_factor(group: &str) -> f64 {
    let digest = Sha256::digest(group.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    let unit = (u64::from_be_bytes(first) >> 11) as f64 / (1u64 << 53) as f64;
    1.0 - WAVE_SPREAD + 2.0 * WAVE_SPREAD * unit
}

/// The first condition of the rule, which `status` alone decides (so a pass it rules out need not
/// wait for any store): the last sync succeeded at `generation` (`Ready=True/Synced`, or
/// `Ready=True/TargetKept` for a `CreatedOnce` target) and no restart is still due.
pub(crate) fn synced_here(status: &FerrVaultSecretStatus, generation: Option<i64>) -> bool {
    let ready_here = find_condition(&status.conditions, ConditionType::Ready).is_some_and(|ready| {
        ready.status == ConditionStatus::True.as_str()
            && is_settled_reason(&ready.reason)
            && ready.observed_generation == generation
    }) && status.observed_generation == generation;
    let rollout_pending = find_condition(&status.conditions, ConditionType::RolloutRestarted)
        .is_some_and(|c| c.status != ConditionStatus::True.as_str());
    ready_here && !rollout_pending
}

/// Whether `reason` on a `Ready=True` condition means the target is as this object wants it:
/// `Synced`, or `TargetKept` (a `CreatedOnce` target that exists).
pub(crate) fn is_settled_reason(reason: &str) -> bool {
    reason == Reason::Synced.as_str() || reason == Reason::TargetKept.as_str()
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
