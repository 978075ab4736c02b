//! Whether a sync of a FerrVaultSecret is due, why, and when the next one is: the operator's own
//! rule ([`explain`]) applied to what the plugin read, with the conditions it found listed. This
//! is the only file that calls the operator's scheduling rules.
//!
//! # Guarantees
//! - The verdict is [`explain`]'s; the reasons listed only name which of its conditions failed.
//! - `status` reads the object alone (inputs and target taken as recorded); `explain` passes
//!   [`Seen`], what the cluster shows now. The connection is not read: its `spec.suspend` and
//!   force-sync count as unset.

use std::time::Duration;

use ferrvault_operator::{
    DEFAULT_MIN_REFRESH_INTERVAL,
    api::FerrVaultSecret,
    api::{DEFAULT_REFRESH_INTERVAL, FerrVaultSecretStatus},
    rules::{
        self, ConnectionSeen, Explanation, Quiet, Schedule, Trigger, explain, floor_interval,
        parse_go_duration, resolve_refresh_interval, synced_now,
    },
};
use jiff::{SignedDuration, Timestamp};

use crate::{inputs::InputChange, object::SecretView};

/// The operator settings the rule reads (flags of the operator, not of the object).
#[derive(Debug, Clone, Copy)]
pub struct RuleSettings {
    /// The operator's `--min-refresh-interval`.
    pub min_refresh_interval: Duration,
}

impl Default for RuleSettings {
    fn default() -> Self {
        Self {
            min_refresh_interval: DEFAULT_MIN_REFRESH_INTERVAL,
        }
    }
}

/// What the cluster shows now besides the object; `None` fields could not be read (taken as
/// recorded).
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// The inputs now, as `status.observedInputs` records them, and how they differ from it.
    pub inputs: Option<(String, Vec<InputChange>)>,
    /// The target Secret's `resourceVersion` now (`Some(None)`: it does not exist).
    pub target_version: Option<Option<String>>,
}

/// Why a sync is due now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Because {
    /// The object does not match its type (stored past the CRD schema): `InvalidSpec`.
    InvalidSpec(String),
    /// `spec.refreshInterval` does not parse: `InvalidRefreshInterval`.
    InvalidInterval(String),
    /// `ferrvault.com/force-sync` holds a value no pass synced for yet.
    ForceSync(String),
    /// No successful sync yet.
    NeverSynced,
    /// The last pass did not sync this generation, or a rollout restart is still due.
    NotSyncedHere,
    /// The connection, its token or CA bundle Secret changed since the last sync (empty: the
    /// last sync recorded no inputs, as an operator before `status.observedInputs` did).
    InputsChanged(Vec<InputChange>),
    /// The target Secret changed (or is gone) since the last sync left it.
    TargetChanged {
        /// The version the last sync left.
        recorded: Option<String>,
        /// The version now; `None`: the target does not exist.
        now: Option<String>,
    },
    /// The refresh is due.
    RefreshDue,
}

/// When the next sync is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Due {
    /// `spec.suspend`: nothing syncs until it is resumed.
    Suspended,
    /// Now, for these reasons.
    Now(Vec<Because>),
    /// Nothing is due; the next refresh is then.
    At(Timestamp),
    /// Nothing is due, and no refresh is scheduled (`0s`, or a policy without a timer).
    Never,
}

/// The interval the operator uses for an object.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// `spec.refreshInterval`.
    pub requested: Duration,
    /// What the operator uses: the requested one under `--min-refresh-interval`; zero when the
    /// policy has no timer.
    pub effective: Duration,
    /// The wave factor of its (namespace, connection, project, vault).
    pub wave: f64,
}

/// The verdict on one object.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// When the next sync is.
    pub due: Due,
    /// Its interval; `None` when the spec cannot say (invalid).
    pub interval: Option<Interval>,
}

/// The verdict on `view` at `now`, with what the cluster shows (`seen`) when it was read.
pub fn judge(view: &SecretView, seen: Option<&Seen>, settings: RuleSettings, now: Timestamp) -> Verdict {
    let Some(cr) = view.valid() else {
        let problem = match &view.object {
            ferrvault_operator::api::Lenient::Invalid(invalid) => invalid.problem.to_string(),
            ferrvault_operator::api::Lenient::Valid(_) => String::new(),
        };
        return Verdict {
            due: Due::Now(vec![Because::InvalidSpec(problem)]),
            interval: None,
        };
    };
    let default = parse_go_duration(DEFAULT_REFRESH_INTERVAL).expect("the CRD default parses");
    let requested = match resolve_refresh_interval(&cr.spec.refresh_interval, default) {
        Ok(requested) => requested,
        Err(error) => {
            return Verdict {
                due: Due::Now(vec![Because::InvalidInterval(error.to_string())]),
                interval: None,
            };
        }
    };
    let schedule = Schedule::of(
        cr,
        floor_interval(requested, settings.min_refresh_interval).effective,
    );
    let interval = Interval {
        requested,
        effective: schedule.interval,
        wave: schedule.wave,
    };
    let due = due(view, cr, seen, schedule, now);
    Verdict {
        due,
        interval: Some(interval),
    }
}

/// [`Verdict::due`] of a valid object: the operator's own rule ([`explain`]), with the reasons
/// it found listed.
fn due(
    view: &SecretView,
    cr: &FerrVaultSecret,
    seen: Option<&Seen>,
    schedule: Schedule,
    now: Timestamp,
) -> Due {
    let status = view.status();
    let recorded_inputs = status.observed_inputs.clone().unwrap_or_default();
    let recorded_target = status.target_resource_version.clone();
    let inputs = seen.and_then(|s| s.inputs.clone());
    let target = seen.and_then(|s| s.target_version.clone());
    let observed = rules::Seen {
        inputs: inputs
            .as_ref()
            .map_or(recorded_inputs.as_str(), |(now, _)| now.as_str()),
        target_version: target
            .as_ref()
            .map_or(recorded_target.as_deref(), Option::as_deref),
        // The plugin does not ask FerrVault's `list`: the recorded versions count as current.
        source_version: None,
    };
    // The plugin does not read the connection: its suspension and force-sync count as unset.
    let rule = explain(cr, &status, ConnectionSeen::default(), observed, schedule, now);
    let mut because = Vec::new();
    if view.controls.force_sync_pending() {
        because.push(Because::ForceSync(
            view.controls.force_sync.clone().unwrap_or_default(),
        ));
    }
    if status.last_synced_at.is_none() {
        because.push(Because::NeverSynced);
    } else if !synced_now(cr, &status) {
        because.push(Because::NotSyncedHere);
    }
    match (&inputs, &status.observed_inputs) {
        (Some((_, changes)), _) if !changes.is_empty() => {
            because.push(Because::InputsChanged(changes.clone()))
        }
        (None, None) if status.last_synced_at.is_some() => because.push(Because::InputsChanged(Vec::new())),
        _ => {}
    }
    if let Some(now_version) = target.filter(|v| v.is_none() || *v != recorded_target) {
        because.push(Because::TargetChanged {
            recorded: recorded_target,
            now: now_version,
        });
    }
    match rule {
        Explanation::Due(Trigger::Refresh) if because.is_empty() => Due::Now(vec![Because::RefreshDue]),
        Explanation::Due(_) => Due::Now(because),
        Explanation::NotDue {
            why: Quiet::Suspended | Quiet::ConnectionSuspended,
            ..
        } => Due::Suspended,
        Explanation::NotDue {
            next_in: Some(left), ..
        } => Due::At(next_refresh(&status, schedule, now, left)),
        Explanation::NotDue { next_in: None, .. } => Due::Never,
    }
}

/// When the refresh the rule found `left` away from `now` is: `lastSyncedAt` + the wave's
/// interval (the time the rule measured to), so it reads the same whenever it is asked.
fn next_refresh(
    status: &FerrVaultSecretStatus,
    schedule: Schedule,
    now: Timestamp,
    left: Duration,
) -> Timestamp {
    let add = |from: Timestamp, span: Duration| {
        SignedDuration::try_from(span)
            .ok()
            .and_then(|s| from.checked_add(s).ok())
    };
    match (status.last_synced_at.as_ref(), schedule.after_sync()) {
        (Some(synced), Some(every)) => add(synced.0, every),
        _ => add(now, left),
    }
    .unwrap_or(Timestamp::MAX)
}

#[cfg(test)]
mod tests;
