//! [`SecretReconciler`]: one pass over one FerrVaultSecret, from the shared prologue to the
//! sync and how it ends (`finish.rs`); the steps are the sibling files (see [`secret`](super)).

use std::{sync::Arc, time::Duration};

use controller_actors::{ObjectKey, Outcome, ReconcileContext, Reconciler, WatchStore};
use kube::Api;
use tracing::{Instrument, debug, info, info_span, warn};

use super::{
    due,
    failure::{Failure, Stop},
    interval::refresh_interval,
    retain::retain_target,
    sync,
};
use crate::{
    api::{FerrVaultConnection, FerrVaultSecret, Lenient, Reason, names::SECRET_FINALIZER},
    reconcile::{
        context::Context,
        prologue::{self, Start},
        read::{Reads, Stores},
        report::SyncTimer,
        rules::{
            schedule::{explain::Explanation, freshness::Schedule, requeue::RequeueCase},
            status::messages,
        },
        settings::SECRET_CONTROLLER,
        write::{KubeFailure, invalid_spec},
    },
};

/// Reconciles one FerrVaultSecret: judge the target, reveal, transform, guard, write the target,
/// restart workloads.
pub struct SecretReconciler {
    /// What both reconcilers share.
    pub(super) ctx: Arc<Context>,
    /// Where this one reads the cluster.
    pub(super) reads: Arc<Reads>,
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
                if let Some(cr) = object.valid() {
                    retain_target(ctx, cr).await?;
                }
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
        let interval = match refresh_interval(&ctx.settings, &cr) {
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
        let schedule = Schedule::of(&cr, interval);
        let refresh = schedule.interval;
        let trigger = match due::judge(ctx, &self.reads, &cr, &previous, schedule).await {
            Explanation::Due(trigger) => trigger,
            Explanation::NotDue { why, next_in } => {
                debug!(?why, ?next_in, "nothing due");
                return self
                    .quiet(&api, &cr, &previous, (why, next_in), refresh, timer)
                    .await;
            }
        };
        if let Some(held_back) = ctx.writes.hold_back(&namespace, SECRET_CONTROLLER) {
            return Ok(held_back);
        }
        match sync::sync(ctx, &self.reads, &cr, &previous, (rc, trigger)).await {
            Ok(synced) => {
                self.finish(&api, &cr, &previous, (synced, trigger), schedule, timer)
                    .await
            }
            Err(Stop::Quiet(quiet)) => self.hold(&api, &cr, &previous, quiet, timer).await,
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
