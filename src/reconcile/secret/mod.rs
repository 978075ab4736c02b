//! The FerrVaultSecret reconciler (reference §3.2, without the defects of §8).
//!
//! One pass: the shared [`prologue`] (read the CR as [`Lenient`] from its watch's store,
//! finalizer added then the same pass continues, or pre-delete cleanup; an object that does not
//! match its type stops here with `InvalidSpec`, see [`invalid_spec`]) → refresh interval →
//! nothing due? (`due.rs`: then only the next refresh is scheduled) → the sync, step by step
//! (`sync.rs`) → status.
//!
//! # Guarantees
//! - A pass with nothing due ([`freshness`](super::rules::freshness): synced at this generation,
//!   inputs and target unchanged, refresh not due) makes no FerrVault request, no write and no
//!   read beyond the watches' stores: a restart or failover costs nothing per object. A target
//!   edited or deleted, or a connection, token or content-hash key changed, even while no
//!   operator ran, is synced at once.
//! - An unchanged refresh reads only the stores (no GET) and writes only the status.
//! - Refreshes are scheduled from `lastSyncedAt` with a wave factor fixed per (namespace,
//!   connection, vault), so FerrVaultSecrets synced together refresh together and share one
//!   reveal (see [`FerrVault::reveal_in_wave`](crate::ferrvault::FerrVault::reveal_in_wave)).
//! - A 429 (or running out of deadline while waiting for the credential's budget) writes no
//!   status and returns [`Outcome::RateLimited`].
//! - A target it may not write (not created by it nor handed over to it, controlled by another
//!   owner, read by a connection, or of a type Kubernetes turns into credentials) is refused
//!   before anything is revealed, with its own reason and no timer: the watches retry it when
//!   the objects involved change.
//! - Any failure before the write leaves the target as it was: workloads keep the last good
//!   values. Status says why (Ready=False, a fixed [`Reason`]) and the key is retried on a
//!   timer even with `refreshInterval: 0s`.
//! - An object stored without schema validation (a field of the wrong type, or over a size
//!   bound of [`spec_bounds`](super::rules::spec_bounds)) is reported alone:
//!   Ready=False/`InvalidSpec`, no timer, nothing revealed, and its deletion is never blocked.
//! - No value or token reaches a log line, an Event, a status message or an error: values
//!   only travel from the reveal into the target's `data`.
//! - `spec.refreshInterval` below `--min-refresh-interval` is used at that minimum (refreshes,
//!   retries, the refresh metric), and `RefreshIntervalClamped=True/BelowMinimum` says so on
//!   every status written; the condition goes when the interval is no longer clamped (a pass with
//!   nothing due corrects it too, after the minimum changed).
//! - A pass with something due asks its namespace's write budget first
//!   ([`WriteBudget::hold_back`](super::write::WriteBudget::hold_back)): while it is
//!   spent, the pass reveals and writes nothing and is requeued for its slot.
//!
//! # Layout
//! `due.rs` (the pass with nothing due, and the refresh schedule), `sync.rs` (the sync, one
//! function per step), `access.rs` (may the target be written),
//! `interval.rs` (the refresh interval under the operator's floor, and its condition),
//! `reveal.rs` (connection, credential, reveal), `target.rs` (the target Secret), `rollout.rs`
//! (workload restarts), `status.rs` (the status write; what it says is [`secret_status`]),
//! `failure.rs` (early stops and their requeue).

mod access;
mod due;
mod failure;
mod interval;
mod recorded_inputs;
mod reveal;
mod rollout;
mod status;
mod sync;
pub(crate) mod target;

use std::{sync::Arc, time::Duration};

use controller_actors::{ObjectKey, Outcome, ReconcileContext, Reconciler, WatchStore};
use jiff::Timestamp;
use kube::{Api, Resource, ResourceExt};
use tracing::{Instrument, debug, info, info_span, warn};

use self::{
    failure::{Failure, Stop, requeue},
    interval::{correct_clamp, refresh_interval, with_clamp},
    sync::Synced,
};
use super::{
    context::Context,
    prologue::{self, Start},
    read::{Reads, Stores},
    report::{EventKind, SyncTimer},
    rules::{
        freshness::Schedule,
        guards::{MIN_REQUEUE, RequeueCase},
        messages,
        secret_status::{self, RolloutState},
    },
    settings::SECRET_CONTROLLER,
    write::{KubeAction, KubeFailure, invalid_spec},
};
use crate::api::{
    FerrVaultConnection, FerrVaultSecret, FerrVaultSecretStatus, Lenient, Reason, names::SECRET_FINALIZER,
};

/// Reconciles one FerrVaultSecret: judge the target, reveal, transform, guard, write the target,
/// restart workloads.
pub struct SecretReconciler {
    ctx: Arc<Context>,
    reads: Arc<Reads>,
}

impl SecretReconciler {
    /// A reconciler over the shared context that reads only `connections` (a store of every
    /// FerrVaultConnection it may see) from a watch, and everything else from the API server:
    /// for a driver without the operator's watches, such as a plain `kube_runtime::Controller`.
    /// Such a reconciler never finds a pass with nothing due.
    pub fn new(ctx: Arc<Context>, connections: WatchStore<Lenient<FerrVaultConnection>>) -> Self {
        let reads = Arc::new(Reads::new(
            ctx.client.clone(),
            Stores::only_connections(connections),
            &ctx.settings,
        ));
        Self::reading(ctx, reads)
    }

    /// A reconciler over the shared context reading through `reads` (the operator's watches).
    pub fn reading(ctx: Arc<Context>, reads: Arc<Reads>) -> Self {
        Self { ctx, reads }
    }

    async fn run(
        &self,
        key: &ObjectKey,
        rc: &ReconcileContext,
        timer: &mut SyncTimer<'_>,
    ) -> Result<Outcome, KubeFailure> {
        let ctx = &self.ctx;
        let namespace = key.namespace.clone().unwrap_or_default();
        let api: Api<Lenient<FerrVaultSecret>> = Api::namespaced(ctx.client.clone(), &namespace);
        let objects = &self.reads.secrets;
        let cr = match prologue::start(
            objects,
            &api,
            ("FerrVaultSecret", &namespace, &key.name),
            SECRET_FINALIZER,
        )
        .await?
        {
            Start::Valid(cr) => cr,
            Start::Gone => {
                ctx.metrics.forget_secret(&namespace, &key.name);
                timer.succeed();
                return Ok(Outcome::done());
            }
            Start::Deleting(object) => {
                info!("running pre-delete cleanup");
                ctx.metrics.forget_secret(&namespace, &key.name);
                prologue::release(ctx, &api, &object, SECRET_FINALIZER).await?;
                timer.succeed();
                return Ok(Outcome::done());
            }
            Start::Invalid(invalid) => {
                ctx.metrics.count_sync_error(Reason::InvalidSpec);
                invalid_spec::report(ctx, (&api, objects.written()), &invalid).await?;
                return Ok(Outcome::done());
            }
        };
        let previous = cr.status.clone().unwrap_or_default();
        let refresh = match refresh_interval(&ctx.settings, &cr) {
            Ok(floored) => floored.effective,
            Err(e) => {
                let failure = Failure::new(
                    Reason::InvalidRefreshInterval,
                    messages::invalid_refresh_interval(&e.to_string()),
                    RequeueCase::InvalidSpec,
                );
                return self.fail(&api, &cr, &previous, failure, Duration::ZERO).await;
            }
        };
        let schedule = due::schedule(&cr, refresh);
        if let Some(next) = due::nothing_due(ctx, &self.reads, &cr, &previous, schedule).await {
            debug!(?next, "nothing due");
            correct_clamp(&ctx.settings, (&api, objects.written()), &cr, &previous).await?;
            if let Some(synced_at) = &previous.last_synced_at {
                ctx.metrics
                    .mark_synced(&namespace, &key.name, refresh, synced_at.0);
            }
            timer.succeed();
            return Ok(refresh_in(next));
        }
        if let Some(held_back) = ctx.writes.hold_back(&namespace, SECRET_CONTROLLER) {
            return Ok(held_back);
        }
        match sync::sync(ctx, &self.reads, &cr, &previous, rc).await {
            Ok(synced) => self.finish(&api, &cr, &previous, synced, schedule, timer).await,
            Err(Stop::Fail(failure)) => self.fail(&api, &cr, &previous, failure, refresh).await,
            Err(Stop::RateLimited(retry_after)) => {
                info!(?retry_after, "rate limited by the FerrVault API, backing off");
                ctx.metrics.count_sync_error(Reason::RateLimited);
                Ok(Outcome::RateLimited { retry_after })
            }
            Err(Stop::Kube(failure)) => Err(failure),
            Err(Stop::Unavailable { reason, message }) => {
                warn!(%message, "cannot sync yet");
                Ok(Outcome::Error { reason, message })
            }
        }
    }

    /// Status after a write, metrics and the outcome.
    async fn finish(
        &self,
        api: &Api<Lenient<FerrVaultSecret>>,
        cr: &FerrVaultSecret,
        previous: &FerrVaultSecretStatus,
        synced: Synced,
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
        let status = secret_status::after_sync(previous, synced.state, cr.meta().generation, now);
        let status = with_clamp(&ctx.settings, cr, status, now);
        status::write((api, self.reads.secrets.written()), &name, previous, &status)
            .await
            .map_err(KubeFailure::during(KubeAction::WriteStatus("")))?;
        if missing.is_none() {
            ctx.metrics.mark_synced(&namespace, &name, refresh, now);
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
                .publish(&cr.object_ref(&()), EventKind::SyncFailed, note)
                .await;
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
            _ => Ok(refresh_in(schedule.after_sync())),
        }
    }

    /// A reported failure: count it, Ready=False in status, a (deduplicated) Event, a timer.
    async fn fail(
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
            .publish(&cr.object_ref(&()), EventKind::SyncFailed, note)
            .await;
        Ok(requeue(failure.case, refresh))
    }
}

/// The outcome of a pass that leaves the object synced: its next refresh exactly when due
/// (`None`: refreshes disabled, wait for a change). Exact, not jittered by the runtime: the wave
/// factor already spreads the waves of different vaults, and jitter would scatter a wave.
fn refresh_in(next: Option<Duration>) -> Outcome {
    next.map_or_else(Outcome::done, Outcome::RequeueAfter)
}

impl Reconciler for SecretReconciler {
    async fn reconcile(&self, key: &ObjectKey, rc: &ReconcileContext) -> Outcome {
        let span = info_span!(
            "reconcile",
            ferrvaultsecret = %format!("{}/{}", key.namespace.as_deref().unwrap_or_default(), key.name)
        );
        let mut timer = SyncTimer::start(&self.ctx.metrics);
        async { self.run(key, rc, &mut timer).await.unwrap_or_else(Outcome::from) }
            .instrument(span)
            .await
    }
}
