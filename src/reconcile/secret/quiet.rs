//! How a pass that syncs nothing ends: nothing due (a resume's status caught up, the clamp
//! condition corrected, the next refresh scheduled), suspended (the `Suspended` condition, no timer), or a `CreatedOnce`
//! target kept (`Ready=True/TargetKept`, no timer unless a restart still due for it was deferred
//! again or failed: then it is retried as a sync's would be).

use std::time::Duration;

use controller_actors::Outcome;
use jiff::Timestamp;
use kube::{Api, Resource, ResourceExt};

use super::{due, failure::Held, interval::correct_clamp, reconciler::SecretReconciler, status};
use crate::{
    api::{FerrVaultSecret, FerrVaultSecretStatus, Lenient, Reason},
    reconcile::{
        report::SyncTimer,
        rules::{
            schedule::{explain::Quiet, requeue::MIN_REQUEUE, spec_digest::spec_digest},
            status::{
                refresh_control::{kept, resumed, suspend},
                secret_status::RolloutState,
            },
        },
        write::{KubeAction, KubeFailure},
    },
};

impl SecretReconciler {
    /// A pass with nothing due (`why`), next due after `next_in`, refreshing every `refresh`.
    pub(super) async fn quiet(
        &self,
        api: &Api<Lenient<FerrVaultSecret>>,
        cr: &FerrVaultSecret,
        previous: &FerrVaultSecretStatus,
        (why, next_in): (Quiet, Option<Duration>),
        refresh: Duration,
        timer: &mut SyncTimer<'_>,
    ) -> Result<Outcome, KubeFailure> {
        let held = match why {
            Quiet::Suspended => Held::Suspended(Reason::Suspended),
            Quiet::ConnectionSuspended => Held::Suspended(Reason::ConnectionSuspended),
            Quiet::TargetKept | Quiet::OnChange | Quiet::RefreshDisabled | Quiet::RefreshNotDue => {
                let ctx = &self.ctx;
                let current = resumed(previous, cr.meta().generation);
                let written = self.reads.secrets.written();
                correct_clamp(&ctx.settings, (api, written), cr, (previous, current)).await?;
                self.mark_synced(cr, previous, refresh);
                timer.succeed();
                return Ok(due::refresh_in(next_in));
            }
        };
        self.hold(api, cr, previous, held, timer).await
    }

    /// A pass that syncs nothing because of `held`: its status, no timer (a change of the
    /// object, its connection or its target enqueues it).
    pub(super) async fn hold(
        &self,
        api: &Api<Lenient<FerrVaultSecret>>,
        cr: &FerrVaultSecret,
        previous: &FerrVaultSecretStatus,
        held: Held,
        timer: &mut SyncTimer<'_>,
    ) -> Result<Outcome, KubeFailure> {
        let (generation, now) = (cr.meta().generation, Timestamp::now());
        let mut outcome = Outcome::done();
        let (status, reason) = match held {
            Held::Suspended(reason) => {
                let mut status = previous.clone();
                suspend(&mut status.conditions, reason, generation, now);
                (status, reason)
            }
            Held::Kept {
                target,
                version,
                force_sync,
                rollout,
            } => {
                let (state, due_in, last_rollout_hash) = match rollout.map(|r| *r) {
                    Some(r) => (Some(r.state), r.due_in, r.last_rollout_hash),
                    None => (None, None, previous.last_rollout_hash.clone()),
                };
                outcome = after_kept_rollout(state.as_ref(), due_in);
                let mut status = kept(previous, (&target, version), (force_sync, state), generation, now);
                status.observed_spec_digest = Some(spec_digest(&cr.spec));
                status.last_rollout_hash = last_rollout_hash;
                (status, Reason::TargetKept)
            }
        };
        status::write(
            (api, self.reads.secrets.written()),
            &cr.name_any(),
            previous,
            &status,
        )
        .await
        .map_err(KubeFailure::during(KubeAction::WriteStatus(reason.as_str())))?;
        self.mark_synced(cr, previous, Duration::ZERO);
        timer.succeed();
        Ok(outcome)
    }

    /// The last-sync series from status, with `refresh` (0 while nothing refreshes on a timer,
    /// which the staleness alert skips).
    fn mark_synced(&self, cr: &FerrVaultSecret, previous: &FerrVaultSecretStatus, refresh: Duration) {
        let Some(synced_at) = &previous.last_synced_at else {
            return;
        };
        self.ctx.metrics.mark_synced(
            &cr.namespace().unwrap_or_default(),
            &cr.name_any(),
            refresh,
            synced_at.0,
        );
    }
}

/// The outcome of a pass that kept a `CreatedOnce` target after retrying a restart still due for
/// it (`state`, `None`: none was due): retried with backoff when it failed, when the floor allows
/// when it deferred it again, else no timer (only a change makes a kept target's pass due).
fn after_kept_rollout(state: Option<&RolloutState>, due_in: Option<Duration>) -> Outcome {
    match (state, due_in) {
        (Some(RolloutState::Failed(error)), _) => Outcome::Error {
            reason: Reason::RolloutFailed.as_str(),
            message: format!("rollout restart: {error}"),
        },
        (_, Some(due)) => Outcome::RequeueAfter(due.max(MIN_REQUEUE)),
        (Some(RolloutState::UpToDate | RolloutState::Deferred(_)) | None, None) => Outcome::done(),
    }
}
