//! What "healthy" means (pure: inputs and `now` in, verdict out).
//!
//! Liveness fails only when the process is alive but cannot make progress on work it owns:
//! - the verdict is stale (the health actor stopped evaluating: the actor system is wedged) —
//!   checked by the reader, [`Verdict::liveness_at`];
//! - this replica leads, work is due (a key ready, or a delayed key overdue) and nothing
//!   completed for `stall_threshold` since that work became due;
//! - a worker is stuck and could not be replaced;
//! - the supervisor escalated.
//!
//! It never fails a standby, an idle queue, or a queue whose keys all wait for a later refresh.
//! Readiness: leader → every watch has synced (its current incarnation completed its initial
//! list once; a later stream error does not unsync it, see [`WatchState::synced`]);
//! standby → ready (it only watches the lease).

use std::{collections::BTreeMap, time::Duration};

use serde::Serialize;
use tokio::time::Instant;

use crate::{queue_view::QueueStats, seams::Role, watch_state::WatchState};

/// Health settings.
#[derive(Clone, Debug)]
pub(crate) struct HealthConfig {
    /// `--stall-threshold`: how long due work may go without any completion.
    pub stall_threshold: Duration,
    /// How often the health actor re-evaluates.
    pub probe_period: Duration,
    /// A verdict older than this means the actor system is wedged.
    pub stale_after: Duration,
}

/// One named check and its result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Check {
    /// `escalation`, `workers`, `progress`, `freshness`, `watches`, `role`.
    pub name: &'static str,
    /// Whether it passed.
    pub ok: bool,
    /// Why (always filled, for the probe body).
    pub detail: String,
}

/// Everything the rules look at.
#[derive(Debug)]
pub(crate) struct HealthInputs<'a> {
    /// This replica's role.
    pub role: Role,
    /// Each controller's queue figures.
    pub queues: &'a [(&'static str, QueueStats)],
    /// Why the supervisor escalated, if it did.
    pub escalation: Option<&'a str>,
    /// The watches this runtime runs while leading.
    pub expected_watches: &'a [String],
    /// Their latest states.
    pub watches: &'a BTreeMap<String, WatchState>,
}

/// A published evaluation.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Verdict {
    /// When it was computed.
    pub evaluated_at: Instant,
    /// The role at that time.
    pub role: Role,
    /// Liveness checks (all must pass).
    pub liveness: Vec<Check>,
    /// Readiness checks (all must pass).
    pub readiness: Vec<Check>,
}

/// What a probe answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeReport {
    /// 200 or 503.
    pub ok: bool,
    /// One line per check: `ok <name>: <detail>` or `FAIL <name>: <detail>`.
    pub body: String,
    /// The checks themselves, for handlers that answer per check (controller-runtime's
    /// `/healthz/<check>`, `?exclude=<check>`).
    pub checks: Vec<Check>,
}

impl Verdict {
    /// The verdict before the first evaluation: live (not yet stale), not ready.
    pub(crate) fn initial(now: Instant) -> Self {
        let starting = Check {
            name: "startup",
            ok: false,
            detail: "runtime starting".into(),
        };
        Self {
            evaluated_at: now,
            role: Role::Standby,
            liveness: Vec::new(),
            readiness: vec![starting],
        }
    }

    /// Liveness as seen at `now`, adding the freshness check.
    pub(crate) fn liveness_at(&self, now: Instant, stale_after: Duration) -> ProbeReport {
        let age = now.saturating_duration_since(self.evaluated_at);
        let fresh = Check {
            name: "freshness",
            ok: age <= stale_after,
            detail: format!(
                "verdict is {:.1}s old (limit {:.1}s){}",
                age.as_secs_f64(),
                stale_after.as_secs_f64(),
                if age <= stale_after {
                    ""
                } else {
                    ": the actor system is wedged"
                }
            ),
        };
        report(std::iter::once(&fresh).chain(&self.liveness))
    }

    /// Readiness, with the role.
    pub(crate) fn readiness(&self) -> ProbeReport {
        let role = Check {
            name: "role",
            ok: true,
            detail: format!("{:?}", self.role).to_lowercase(),
        };
        report(std::iter::once(&role).chain(&self.readiness))
    }
}

fn report<'a>(checks: impl Iterator<Item = &'a Check>) -> ProbeReport {
    let mut ok = true;
    let mut body = String::new();
    let checks: Vec<Check> = checks.cloned().collect();
    for c in &checks {
        ok &= c.ok;
        body.push_str(if c.ok { "ok " } else { "FAIL " });
        body.push_str(c.name);
        body.push_str(": ");
        body.push_str(&c.detail);
        body.push('\n');
    }
    ProbeReport { ok, body, checks }
}

/// Evaluate the rules at `now`.
pub(crate) fn evaluate(inputs: &HealthInputs<'_>, config: &HealthConfig, now: Instant) -> Verdict {
    let escalation = match inputs.escalation {
        Some(why) => Check {
            name: "escalation",
            ok: false,
            detail: format!("supervisor escalated: {why}"),
        },
        None => Check {
            name: "escalation",
            ok: true,
            detail: "none".into(),
        },
    };
    let stuck: Vec<&str> = inputs
        .queues
        .iter()
        .flat_map(|(_, q)| q.unreplaceable.iter().map(String::as_str))
        .collect();
    let workers = Check {
        name: "workers",
        ok: stuck.is_empty(),
        detail: if stuck.is_empty() {
            "no unreplaceable stuck worker".into()
        } else {
            stuck.join("; ")
        },
    };
    let progress = match inputs.role {
        Role::Standby => Check {
            name: "progress",
            ok: true,
            detail: "standby: no work owned".into(),
        },
        Role::Leader => progress(inputs.queues, config.stall_threshold, now),
    };
    let readiness = match inputs.role {
        Role::Standby => vec![Check {
            name: "watches",
            ok: true,
            detail: "standby: watching the lease".into(),
        }],
        Role::Leader => vec![watches_synced(inputs.expected_watches, inputs.watches)],
    };
    let not_escalated = Check {
        name: "escalation",
        ok: inputs.escalation.is_none(),
        detail: escalation.detail.clone(),
    };
    let mut readiness = readiness;
    readiness.push(not_escalated);
    Verdict {
        evaluated_at: now,
        role: inputs.role,
        liveness: vec![escalation, workers, progress],
        readiness,
    }
}

fn progress(queues: &[(&'static str, QueueStats)], threshold: Duration, now: Instant) -> Check {
    let mut stalled = Vec::new();
    let mut fine = Vec::new();
    for (name, q) in queues.iter().filter(|(_, q)| q.active) {
        let overdue_since = q.next_due.filter(|due| *due <= now);
        let due_since = [q.oldest_ready_since, overdue_since].into_iter().flatten().min();
        let Some(due_since) = due_since else {
            fine.push(format!("{name}: nothing due"));
            continue;
        };
        let baseline = [Some(due_since), q.last_completed_at, Some(q.started_at)]
            .into_iter()
            .flatten()
            .max();
        let quiet = now.saturating_duration_since(baseline.unwrap_or(now));
        if quiet >= threshold {
            stalled.push(format!(
                "{name}: {} ready, work due for {:.0}s and nothing completed for {:.1}s (threshold {:.1}s)",
                q.depth,
                now.saturating_duration_since(due_since).as_secs_f64(),
                quiet.as_secs_f64(),
                threshold.as_secs_f64()
            ));
        } else {
            fine.push(format!(
                "{name}: {} ready, last progress {:.1}s ago",
                q.depth,
                quiet.as_secs_f64()
            ));
        }
    }
    match (stalled.is_empty(), fine.is_empty()) {
        (true, true) => Check {
            name: "progress",
            ok: true,
            detail: "leader: no controller running yet".into(),
        },
        (true, false) => Check {
            name: "progress",
            ok: true,
            detail: fine.join("; "),
        },
        (false, _) => Check {
            name: "progress",
            ok: false,
            detail: stalled.join("; "),
        },
    }
}

fn watches_synced(expected: &[String], states: &BTreeMap<String, WatchState>) -> Check {
    let pending: Vec<&str> = expected
        .iter()
        .filter(|name| !states.get(*name).is_some_and(|s| s.synced))
        .map(String::as_str)
        .collect();
    if pending.is_empty() {
        Check {
            name: "watches",
            ok: true,
            detail: format!("{} watches synced", expected.len()),
        }
    } else {
        Check {
            name: "watches",
            ok: false,
            detail: format!("not synced: {}", pending.join(", ")),
        }
    }
}

#[cfg(test)]
mod tests;
