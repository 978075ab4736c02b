//! client-go leader-election decisions as pure functions: given the observed Lease, the local
//! time, our identity and the timings, say whether to create, acquire, renew, wait or step down.
//!
//! Nothing here does I/O or reads a clock: the leadership actor passes `now` in, so every rule is
//! tested with plain values.
//!
//! # Guarantees (the client-go rules this module encodes)
//! - Expiry of another holder's lease is judged by **our local observation time**: a lease is
//!   valid until `observed_at + leaseDurationSeconds`, where `observed_at` is when we first saw the
//!   current record (holder, times, duration, transitions). The holder's `renewTime` is never
//!   compared with our wall clock, so clock skew between replicas cannot shorten a lease.
//! - We never overwrite a valid lease held by someone else; every write goes through the
//!   Lease's `resourceVersion` (the actor's job), so two candidates racing for an expired lease
//!   cannot both win.
//! - A leader that has not renewed successfully for `renew_deadline` steps down. Because
//!   `renew_deadline + retry_period ≤ lease_duration` and others start their expiry clock no
//!   earlier than our last successful write, we stop writing (the fence, [`crate::fence`])
//!   and leading before anyone else may take over.

use std::time::{Duration, SystemTime};

use jiff::Timestamp;
use k8s_openapi::{api::coordination::v1::LeaseSpec, apimachinery::pkg::apis::meta::v1::MicroTime};
use tokio::time::Instant;

use crate::seams::{LeaseStatus, Role};

/// client-go's `JitterFactor`: the renew deadline must leave room for this many retry periods.
const JITTER_FACTOR: f64 = 1.2;

/// The three leader-election durations (client-go names and defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timings {
    /// How long a lease lasts without renewal, as seen by the other candidates (whole seconds:
    /// the Lease stores `leaseDurationSeconds`).
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before it gives up leading.
    pub renew_deadline: Duration,
    /// How often candidates try to acquire and the leader renews.
    pub retry_period: Duration,
}

/// Why a set of [`Timings`] is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TimingsError {
    /// `lease_duration` is zero or not a whole number of seconds.
    #[error("lease duration must be a whole, positive number of seconds")]
    LeaseDurationNotWholeSeconds,
    /// `lease_duration <= renew_deadline`: a stale leader could still lead after others take over.
    #[error("lease duration must be greater than the renew deadline")]
    LeaseNotLongerThanRenewDeadline,
    /// `renew_deadline <= 1.2 × retry_period`: the leader would get at most one renew attempt.
    #[error("renew deadline must be greater than 1.2 × the retry period")]
    RenewDeadlineTooShort,
    /// `retry_period` is zero.
    #[error("retry period must be positive")]
    RetryPeriodZero,
    /// `renew_deadline + retry_period > lease_duration`: the write fence closes at the renew
    /// deadline and needs a retry period of margin before another replica may acquire.
    #[error(
        "renew deadline + retry period must not exceed the lease duration: writes stop at the renew \
         deadline, and the margin up to the lease duration must cover one retry period before \
         another replica may take over"
    )]
    NoFencingMargin,
}

impl Timings {
    /// client-go's defaults: lease 15s, renew deadline 10s, retry 2s.
    pub const DEFAULT: Self = Self {
        lease_duration: Duration::from_secs(15),
        renew_deadline: Duration::from_secs(10),
        retry_period: Duration::from_secs(2),
    };

    /// Check client-go's constraints between the three durations, and the write fence's:
    /// `renew_deadline + retry_period ≤ lease_duration` (the bound is stated in
    /// `fence.rs`: writes stop at the renew deadline after the last successful renewal,
    /// nobody else may acquire before the lease duration after it, and the margin between the
    /// two covers a write already on the wire and the leadership actor's next tick).
    ///
    /// # Errors
    /// The first constraint violated, as a [`TimingsError`].
    pub fn validate(&self) -> Result<(), TimingsError> {
        if self.lease_duration.is_zero() || self.lease_duration.subsec_nanos() != 0 {
            return Err(TimingsError::LeaseDurationNotWholeSeconds);
        }
        if self.retry_period.is_zero() {
            return Err(TimingsError::RetryPeriodZero);
        }
        if self.lease_duration <= self.renew_deadline {
            return Err(TimingsError::LeaseNotLongerThanRenewDeadline);
        }
        if self.renew_deadline.as_secs_f64() <= JITTER_FACTOR * self.retry_period.as_secs_f64() {
            return Err(TimingsError::RenewDeadlineTooShort);
        }
        if self.renew_deadline + self.retry_period > self.lease_duration {
            return Err(TimingsError::NoFencingMargin);
        }
        Ok(())
    }

    /// The deadline for one Lease API call (GET, create or replace): long enough for a slow API
    /// server, short enough that a renew deadline spans at least two attempts.
    pub fn api_timeout(&self) -> Duration {
        self.retry_period.max(self.renew_deadline / 2)
    }
}

impl Default for Timings {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The leader-election fields of a Lease (what client-go calls a `LeaderElectionRecord`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LeaseRecord {
    /// Who holds the lease; `None` (or an empty string in the API) means nobody.
    pub holder: Option<String>,
    /// `leaseDurationSeconds`.
    pub lease_duration: Duration,
    /// When the current holder acquired it.
    pub acquire_time: Option<Timestamp>,
    /// When the current holder last renewed it (informational: expiry uses local observation).
    pub renew_time: Option<Timestamp>,
    /// How many times the lease changed hands.
    pub transitions: i32,
}

impl LeaseRecord {
    /// Read the record from a Lease spec (a missing spec reads as a free lease).
    pub(crate) fn from_spec(spec: Option<&LeaseSpec>) -> Self {
        let spec = spec.cloned().unwrap_or_default();
        Self {
            holder: spec.holder_identity.filter(|h| !h.is_empty()),
            lease_duration: Duration::from_secs(spec.lease_duration_seconds.unwrap_or(0).max(0) as u64),
            acquire_time: spec.acquire_time.map(|t| t.0),
            renew_time: spec.renew_time.map(|t| t.0),
            transitions: spec.lease_transitions.unwrap_or(0),
        }
    }

    /// Write the record into `spec`, leaving fields we do not own (strategy, preferred holder).
    pub(crate) fn write_to(&self, spec: &mut LeaseSpec) {
        spec.holder_identity = Some(self.holder.clone().unwrap_or_default());
        spec.lease_duration_seconds = Some(i32::try_from(self.lease_duration.as_secs()).unwrap_or(i32::MAX));
        spec.acquire_time = self.acquire_time.map(MicroTime);
        spec.renew_time = self.renew_time.map(MicroTime);
        spec.lease_transitions = Some(self.transitions);
    }

    /// Whether `identity` is the recorded holder.
    pub(crate) fn is_held_by(&self, identity: &str) -> bool {
        self.holder.as_deref() == Some(identity)
    }
}

/// A record together with the local time we first saw it (client-go's `observedTime`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Observed {
    /// The record as last read or written.
    pub record: LeaseRecord,
    /// When we first saw this exact record (local monotonic clock).
    pub observed_at: Instant,
}

impl Observed {
    /// Record that we read `record` at `now`: the observation time restarts only when the
    /// record changed, so a holder that stops renewing expires `lease_duration` after we first
    /// saw its last renewal.
    pub(crate) fn update(previous: Option<Self>, record: LeaseRecord, now: Instant) -> Self {
        match previous {
            Some(prev) if prev.record == record => prev,
            Some(_) | None => Self {
                record,
                observed_at: now,
            },
        }
    }

    /// When the recorded holder's lease runs out unless it is renewed.
    pub(crate) fn expires_at(&self) -> Instant {
        self.observed_at + self.record.lease_duration
    }

    /// Whether someone holds the lease and it has not run out at `now`.
    pub(crate) fn is_valid_at(&self, now: Instant) -> bool {
        self.record.holder.is_some() && self.expires_at() > now
    }
}

/// What to do after reading the Lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// No Lease exists: create one naming us (a conflict means another candidate won).
    Create(LeaseRecord),
    /// Replace the observed Lease (at its resourceVersion) with `record`.
    Write {
        /// The record to write.
        record: LeaseRecord,
        /// `true` when taking a free or expired lease, `false` when renewing our own.
        acquiring: bool,
    },
    /// Another candidate holds a valid lease: try again after a retry period.
    Wait {
        /// The current holder.
        holder: String,
        /// When its lease runs out unless renewed.
        expires_at: Instant,
    },
    /// We lead, but the Lease names someone else: stop leading at once.
    Lost {
        /// The holder recorded in the Lease.
        holder: String,
    },
}

/// Decide the next step from the Lease we just read (`None`: it does not exist).
///
/// `leading` says whether this replica currently runs its controllers; `wall_now` is what we
/// write into `renewTime`/`acquireTime`.
pub(crate) fn decide(
    observed: Option<&Observed>,
    me: &str,
    leading: bool,
    now: Instant,
    wall_now: Timestamp,
    timings: &Timings,
) -> Decision {
    let Some(observed) = observed else {
        return Decision::Create(LeaseRecord {
            holder: Some(me.to_owned()),
            lease_duration: timings.lease_duration,
            acquire_time: Some(wall_now),
            renew_time: Some(wall_now),
            transitions: 0,
        });
    };
    let current = &observed.record;
    if current.is_held_by(me) {
        return Decision::Write {
            record: LeaseRecord {
                renew_time: Some(wall_now),
                lease_duration: timings.lease_duration,
                ..current.clone()
            },
            acquiring: false,
        };
    }
    match (&current.holder, leading) {
        (Some(holder), true) => Decision::Lost {
            holder: holder.clone(),
        },
        (Some(holder), false) if observed.is_valid_at(now) => Decision::Wait {
            holder: holder.clone(),
            expires_at: observed.expires_at(),
        },
        (Some(_), false) | (None, _) => Decision::Write {
            record: LeaseRecord {
                holder: Some(me.to_owned()),
                lease_duration: timings.lease_duration,
                acquire_time: Some(wall_now),
                renew_time: Some(wall_now),
                transitions: current.transitions.saturating_add(1),
            },
            acquiring: true,
        },
    }
}

/// Whether a leader whose last successful renew *started* at `last_renewed_at` must step down.
pub(crate) fn renew_deadline_passed(last_renewed_at: Instant, now: Instant, timings: &Timings) -> bool {
    now >= last_renewed_at + timings.renew_deadline
}

/// The record a leader writes when it lets go (client-go's `ReleaseOnCancel`): no holder, a
/// one-second duration and `renewTime` now, so any candidate may acquire at its next retry.
pub(crate) fn released(current: &LeaseRecord, wall_now: Timestamp) -> LeaseRecord {
    LeaseRecord {
        holder: None,
        lease_duration: Duration::from_secs(1),
        acquire_time: Some(wall_now),
        renew_time: Some(wall_now),
        transitions: current.transitions,
    }
}

/// What to publish: our role and what we know of the Lease. `expires_at` maps the local
/// expiry instant onto the wall clock (`wall_now` is the wall time at `now`).
pub(crate) fn status(
    observed: Option<&Observed>,
    role: Role,
    me: &str,
    now: Instant,
    wall_now: SystemTime,
    timings: &Timings,
) -> LeaseStatus {
    let holder = observed.and_then(|o| o.record.holder.clone());
    let expires_at = observed
        .filter(|o| o.record.holder.is_some())
        .map(|o| wall_now + o.expires_at().saturating_duration_since(now));
    LeaseStatus {
        role,
        identity: me.to_owned(),
        holder,
        expires_at,
        lease_duration: timings.lease_duration,
        transitions: observed.map_or(0, |o| o.record.transitions),
        shards: None,
    }
}

#[cfg(test)]
mod tests;
