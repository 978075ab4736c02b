//! Is a pass of a FerrVaultSecret due, why, and when is the next one: the one rule the
//! reconciler acts on and `kubectl ferrvault explain` prints (issue 36 points 1-3). Pure: the
//! object, its status, what the stores show, `now` and the schedule in; an [`Explanation`] out.
//!
//! # The rule, in order (the first that applies decides)
//! 1. `spec.suspend: true` → not due, [`Quiet::Suspended`], no timer.
//! 2. Its connection has `spec.suspend: true` → not due, [`Quiet::ConnectionSuspended`].
//! 3. Forced → due, [`Trigger::Force`]: the `ferrvault.com/force-sync` annotation (see
//!    [`force_token`](super::force_sync::force_token)) differs from `status.observedForceSync`,
//!    or the connection's `status.observedForceSync` differs from the one this object recorded
//!    (after this object's first pass). Under every policy, `refreshInterval: 0s` included.
//! 4. `refreshPolicy: CreatedOnce`: the target exists → not due ([`Quiet::TargetKept`]) once
//!    a pass recorded it at this generation, else due ([`Trigger::Spec`]: the pass records it,
//!    keeps the target and reveals nothing); the target is missing → due ([`Trigger::Drift`]
//!    after a sync, [`Trigger::Spec`] before).
//! 5. The rule of [`freshness`](super::freshness) ([`Trigger::Spec`]: never synced, or not at
//!    this generation nor at one differing only in `spec.suspend`; [`Trigger::Refresh`]: the last pass at this generation failed, so this is
//!    its retry; [`Trigger::Inputs`]; [`Trigger::Drift`]).
//! 6. Under a connection with `changeDetection.mode: Versions` whose `list` answered: the hash
//!    of the selection's versions there differs from `status.observedSourceVersion` → due,
//!    [`Trigger::Source`] (under `OnChange` too: a new value upstream is a change).
//! 7. `refreshPolicy: OnChange` → not due, [`Quiet::OnChange`], no timer.
//! 8. `Periodic` (or unset): the refresh is due → [`Trigger::Refresh`]; else not due until
//!    `lastSyncedAt` + interval × wave factor ([`Quiet::RefreshNotDue`]), or never with
//!    `refreshInterval: 0s` ([`Quiet::RefreshDisabled`]).
//!
//! # Guarantees
//! - Nothing but the force-sync annotation of all labels and annotations changes the answer.
//! - A suspended object (or connection) is never due, whatever else is; a forced one always is
//!   otherwise, whatever its policy.

use std::time::Duration;

use jiff::Timestamp;

use super::{force_sync::force_token, freshness::Schedule, spec_digest::synced_now};
use crate::{
    api::{ConditionStatus, ConditionType, FerrVaultSecret, FerrVaultSecretStatus, RefreshPolicy},
    reconcile::rules::status::conditions::find_condition,
};

/// Why a pass is due: the label `trigger` of `ferrvault_secret_sync_trigger_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Trigger {
    /// The force-sync annotation, on the object or on its connection.
    Force,
    /// The refresh interval elapsed (or a failed pass is retried).
    Refresh,
    /// The spec changed (a new generation), or the object never synced.
    Spec,
    /// An input changed: the connection, its token or CA Secret, the content-hash key.
    Inputs,
    /// The target was edited or deleted since the last sync.
    Drift,
    /// A selected name's version moved, appeared or disappeared in the connection's `list`
    /// (`changeDetection.mode: Versions`).
    Source,
    /// A signed change hint named its vault (`POST /hooks/ferrvault`) while it was otherwise
    /// quiet; the pass reads FerrVault fresh, like a forced one.
    Hint,
}

impl Trigger {
    /// Every trigger, for metric pre-registration.
    pub const ALL: [Trigger; 7] = [
        Self::Force,
        Self::Refresh,
        Self::Spec,
        Self::Inputs,
        Self::Drift,
        Self::Source,
        Self::Hint,
    ];

    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Force => "force",
            Self::Refresh => "refresh",
            Self::Spec => "spec",
            Self::Inputs => "inputs",
            Self::Drift => "drift",
            Self::Source => "source",
            Self::Hint => "hint",
        }
    }
}

/// Why no pass is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quiet {
    /// `spec.suspend: true`.
    Suspended,
    /// The connection has `spec.suspend: true`.
    ConnectionSuspended,
    /// `CreatedOnce` and the target exists: it is never overwritten.
    TargetKept,
    /// `OnChange`, and nothing changed.
    OnChange,
    /// Synced, nothing changed, and `refreshInterval: 0s`.
    RefreshDisabled,
    /// Synced, nothing changed; the refresh comes later.
    RefreshNotDue,
}

/// The rule's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Explanation {
    /// Sync now, because of this.
    Due(Trigger),
    /// Nothing to do now.
    NotDue {
        /// Why.
        why: Quiet,
        /// When the next pass is due from now (`None`: only a change makes one due).
        next_in: Option<Duration>,
    },
}

impl Explanation {
    /// Not due, with no timer.
    const fn quiet(why: Quiet) -> Self {
        Self::NotDue { why, next_in: None }
    }

    /// When the next pass is due: `now` when due now, `None` when only a change makes it due.
    pub fn next_due_at(&self, now: Timestamp) -> Option<Timestamp> {
        match self {
            Self::Due(_) => Some(now),
            Self::NotDue { next_in, .. } => next_in.and_then(|d| now.checked_add(d).ok()),
        }
    }
}

/// What the FerrVaultSecret's connection shows (its store's copy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnectionSeen<'a> {
    /// Its `spec.suspend` is `true`.
    pub suspended: bool,
    /// Its `status.observedForceSync`.
    pub forced: Option<&'a str>,
}

/// What the stores show now besides the connection, to compare with what the last sync recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen<'a> {
    /// The inputs' versions, as `status.observedInputs` records them (the plugin, which cannot
    /// compute them, passes the recorded ones: "unchanged").
    pub inputs: &'a str,
    /// The target's `resourceVersion`; `None` when it does not exist.
    pub target_version: Option<&'a str>,
    /// The hash of the selection's versions in the connection's latest `list` (see
    /// `status.observedSourceVersion`); `None` when its connection does not follow versions or
    /// its `list` has not answered (the plugin passes the recorded one: "unchanged").
    pub source_version: Option<&'a str>,
}

/// Steps 1-3 of the rule, which the object, its status and its connection decide alone (so a
/// pass they decide need not wait for any other store); `None` when the rest of the rule decides.
pub fn explain_early(
    cr: &FerrVaultSecret,
    status: &FerrVaultSecretStatus,
    connection: ConnectionSeen<'_>,
) -> Option<Explanation> {
    if cr.spec.is_suspended() {
        return Some(Explanation::quiet(Quiet::Suspended));
    }
    if connection.suspended {
        return Some(Explanation::quiet(Quiet::ConnectionSuspended));
    }
    if is_forced(cr, status, connection) {
        return Some(Explanation::Due(Trigger::Force));
    }
    let generation = cr.metadata.generation;
    let created_once = cr.spec.policy() == RefreshPolicy::CreatedOnce;
    (!created_once && !synced_now(cr, status))
        .then_some(Explanation::Due(not_synced_here(status, generation)))
}

/// The rule of the module for `cr`, its `status`, its `connection` and what the stores show
/// (`seen`), on `schedule` at `now`.
pub fn explain(
    cr: &FerrVaultSecret,
    status: &FerrVaultSecretStatus,
    connection: ConnectionSeen<'_>,
    seen: Seen<'_>,
    schedule: Schedule,
    now: Timestamp,
) -> Explanation {
    if let Some(early) = explain_early(cr, status, connection) {
        return early;
    }
    let generation = cr.metadata.generation;
    let ever_synced = status.last_synced_at.is_some();
    match (cr.spec.policy(), seen.target_version) {
        (RefreshPolicy::CreatedOnce, Some(_)) if synced_now(cr, status) => {
            return Explanation::quiet(Quiet::TargetKept);
        }
        (RefreshPolicy::CreatedOnce, Some(_)) => return Explanation::Due(Trigger::Spec),
        (RefreshPolicy::CreatedOnce, None) if ever_synced => return Explanation::Due(Trigger::Drift),
        (RefreshPolicy::CreatedOnce, None) => return Explanation::Due(Trigger::Spec),
        (RefreshPolicy::Periodic | RefreshPolicy::OnChange, _) => {}
    }
    let Some(synced_at) = status.last_synced_at.as_ref().map(|t| t.0) else {
        return Explanation::Due(Trigger::Spec);
    };
    if !synced_now(cr, status) {
        return Explanation::Due(not_synced_here(status, generation));
    }
    if status.observed_inputs.as_deref() != Some(seen.inputs) {
        return Explanation::Due(Trigger::Inputs);
    }
    if seen.target_version.is_none() || status.target_resource_version.as_deref() != seen.target_version {
        return Explanation::Due(Trigger::Drift);
    }
    if seen
        .source_version
        .is_some_and(|now| status.observed_source_version.as_deref() != Some(now))
    {
        return Explanation::Due(Trigger::Source);
    }
    if cr.spec.policy() == RefreshPolicy::OnChange {
        return Explanation::quiet(Quiet::OnChange);
    }
    match schedule.remaining(synced_at, now) {
        Some(Duration::ZERO) => Explanation::Due(Trigger::Refresh),
        Some(left) => Explanation::NotDue {
            why: Quiet::RefreshNotDue,
            next_in: Some(left),
        },
        None => Explanation::quiet(Quiet::RefreshDisabled),
    }
}

/// Whether `cr` is forced: its own annotation, or its connection's recorded force-sync, differs
/// from what its last sync recorded. A connection's counts only after this object's first pass
/// (a new object syncs anyway; a new `CreatedOnce` object must not overwrite on its account).
pub fn is_forced(
    cr: &FerrVaultSecret,
    status: &FerrVaultSecretStatus,
    connection: ConnectionSeen<'_>,
) -> bool {
    let own = force_token(cr.metadata.annotations.as_ref());
    let passed_before = find_condition(&status.conditions, ConditionType::Ready).is_some();
    let by_connection = passed_before
        && connection.forced.is_some()
        && status.observed_connection_force_sync.as_deref() != connection.forced;
    (own.is_some() && own != status.observed_force_sync) || by_connection
}

/// Why an object not synced at `generation` is due: its spec, unless its last pass ran at this
/// generation and failed (a retry).
fn not_synced_here(status: &FerrVaultSecretStatus, generation: Option<i64>) -> Trigger {
    let failed_here = find_condition(&status.conditions, ConditionType::Ready).is_some_and(|ready| {
        ready.observed_generation == generation && ready.status != ConditionStatus::True.as_str()
    });
    if failed_here || (status.observed_generation == generation && status.last_synced_at.is_some()) {
        Trigger::Refresh
    } else {
        Trigger::Spec
    }
}

#[cfg(test)]
mod tests;
