//! How a pass that reached the sync ends: the status after a write or a failure, the metrics,
//! the Events (after the status, handed to the sink's background writes: `Ready` waits for
//! none), and the outcome (the next refresh, a retry, or a timer for a deferred restart).

use std::time::Duration;

use controller_actors::Outcome;
use jiff::Timestamp;
use kube::{Api, Resource, ResourceExt};
use tracing::warn;

use super::{
    due,
    failure::{Failure, requeue},
    interval::with_clamp,
    reconciler::SecretReconciler,
    status,
    sync::Synced,
};
use crate::{
    api::{FerrVaultSecret, FerrVaultSecretStatus, Lenient, Reason},
    reconcile::{
        report::{EventKind, SyncTimer},
        rules::{
            schedule::{
                explain::Trigger,
                freshness::Schedule,
                requeue::{MIN_REQUEUE, RequeueCase},
                spec_digest::spec_digest,
            },
            status::{
                messages,
                secret_status::{self, RolloutState},
            },
        },
        write::{KubeAction, KubeFailure},
    },
};

impl SecretReconciler {
    /// Status after a write, metrics and the outcome.
    pub(super) async fn finish(
        &self,
        api: &Api<Lenient<FerrVaultSecret>>,
        cr: &FerrVaultSecret,
        previous: &FerrVaultSecretStatus,
        (synced, trigger): (Synced, Trigger),
        schedule: Schedule,
        timer: &mut SyncTimer<'_>,
    ) -> Result<Outcome, KubeFailure> {
        let ctx = &self.ctx;
        let refresh = schedule.interval;
        let (namespace, name) = (cr.namespace().unwrap_or_default(), cr.name_any());
        let missing = (!synced.state.missing_keys.is_empty()).then(|| synced.state.missing_keys.clone());
        let rollout_error = match &synced.state.rollout {
            Some(RolloutState::Failed(error)) => error.clone(),
            _ => String::new(),
        };
        let now = Timestamp::now();
        let mut status = secret_status::after_sync(previous, synced.state, cr.meta().generation, now);
        status.observed_spec_digest = Some(spec_digest(&cr.spec));
        let status = with_clamp(&ctx.settings, cr, status, now);
        status::write((api, self.reads.secrets.written()), &name, previous, &status)
            .await
            .map_err(KubeFailure::during(KubeAction::WriteStatus("")))?;
        if let Some(note) = synced.announcement {
            ctx.events.publish(&cr.object_ref(&()), EventKind::Synced, note);
        }
        if missing.is_none() {
            ctx.metrics.mark_synced(&namespace, &name, refresh, now);
        }
        ctx.metrics.count_sync_trigger(trigger);
        if trigger == Trigger::Force {
            let note = format!(
                "forced by ferrvault.com/force-sync: FerrVault read fresh, Secret {} {}",
                status_target(cr),
                if missing.is_none() {
                    "synced"
                } else {
                    "has missing keys"
                }
            );
            ctx.events
                .publish(&cr.object_ref(&()), EventKind::ForcedSync, note);
        }
        if synced.rollout_failed {
            ctx.metrics.count_sync_error(Reason::RolloutFailed);
            return Ok(Outcome::Error {
                reason: Reason::RolloutFailed.as_str(),
                message: format!("rollout restart: {rollout_error}"),
            });
        }
        if let Some(missing) = missing {
            ctx.metrics.count_sync_error(Reason::MissingKeys);
            let note = format!("{}: {}", Reason::MissingKeys, messages::missing_keys(&missing));
            ctx.events
                .publish(&cr.object_ref(&()), EventKind::SyncFailed, note);
            return Ok(requeue(RequeueCase::KeysMissing, refresh));
        }
        timer.succeed();
        if synced.look_again {
            return Ok(Outcome::RequeueAfter(MIN_REQUEUE));
        }
        // A deferred restart is retried when due, unless a refresh comes first (and rechecks).
        match synced.rollout_due_in {
            Some(due) if refresh.is_zero() || due < refresh => {
                Ok(Outcome::RequeueAfter(due.max(MIN_REQUEUE)))
            }
            _ => Ok(due::refresh_in(schedule.after_sync())),
        }
    }

    /// A reported failure: count it, Ready=False in status, a (deduplicated) Event, a timer.
    pub(super) async fn fail(
        &self,
        api: &Api<Lenient<FerrVaultSecret>>,
        cr: &FerrVaultSecret,
        previous: &FerrVaultSecretStatus,
        failure: Failure,
        refresh: Duration,
    ) -> Result<Outcome, KubeFailure> {
        let ctx = &self.ctx;
        warn!(reason = %failure.reason, error = %failure.message, "sync failed");
        ctx.metrics.count_sync_error(failure.reason);
        let generation = cr.meta().generation;
        let now = Timestamp::now();
        let status =
            secret_status::after_failure(previous, failure.reason, failure.message.clone(), generation, now);
        let mut status = with_clamp(&ctx.settings, cr, status, now);
        if let Some(missing) = failure.missing {
            status.missing_keys = messages::missing_keys_list(&missing);
            status.observed_generation = generation;
            status.observed_spec_digest = Some(spec_digest(&cr.spec));
        }
        status::write(
            (api, self.reads.secrets.written()),
            &cr.name_any(),
            previous,
            &status,
        )
        .await
        .map_err(KubeFailure::during(KubeAction::WriteStatus(
            failure.reason.as_str(),
        )))?;
        let note = format!("{}: {}", failure.reason, failure.message);
        ctx.events
            .publish(&cr.object_ref(&()), EventKind::SyncFailed, note);
        Ok(requeue(failure.case, refresh))
    }
}

/// The target's name, as an Event names it.
fn status_target(cr: &FerrVaultSecret) -> String {
    cr.spec.target_name(&cr.name_any()).to_owned()
}
