//! The ClusterFerrVaultSecret reconciler (issue 37): one FerrVaultSecret spec fanned out to the
//! namespaces it selects, through the FerrVaultSecret's own steps — its cluster connection check
//! (`cluster_connection.rs`), reveal (`reveal.rs`), payload (`payload.rs`: transforms, template,
//! size) and target write (`target.rs`) — so there is one sync, seen from many namespaces.
//!
//! One pass: the shared [`prologue`](super::super::prologue) (read from the watch's store,
//! finalizer, invalid spec) → suspended? (its status only) → the refresh interval → the fan-out
//! (`fan_out.rs`; its reveals and copies, a bounded number at a time, `provision.rs`) → the
//! status and `ferrvault_cluster_secret_targets{name,state}` (`status.rs`) → its Events
//! (`events.rs`).
//! Deletion: every copy deleted, or under `target.deletionPolicy: Retain` unlabelled, then the
//! finalizer released.
//! Under `--shards N > 1` every replica reconciles every cluster secret: each writes the copies
//! of its own shards' namespaces, the holder of the empty namespace's shard writes the status
//! and the finalizer (`shard.rs`, `part_pass.rs`), releasing it once no other shard's copy is
//! left.
//!
//! # Guarantees
//! - See `fan_out.rs` (what is selected, read and written) and `copies.rs` (which Secrets may be
//!   written or deleted).
//! - `spec.secretSpec.suspend: true`: `Suspended=True`, no FerrVault request, no write, no timer.
//! - A namespace created or relabelled into the selection is provisioned at that event: the
//!   Namespace watch enqueues every cluster secret (`watch/cluster.rs`).
//! - A copy someone else deletes or edits (its data too, under our content-hash annotation) is
//!   written again at that event: the Secret watch marks it changed and enqueues the cluster
//!   secret its UID label names (`watch/mod.rs`), and the pass reveals for that namespace (one
//!   reveal: values are not kept), reads the copy and rewrites it.
//! - No value reaches a log line, an Event, a status or an error.
//!
//! # Caveats
//! - An edit made while the operator was down is not seen as one (a re-list does not compare
//!   data): it is healed at the next refresh or force-sync.
//! - A copy whose target name changed (an edit of `secretSpec.target.name`) stays under its old
//!   name, labelled: delete it by hand.

mod copies;
mod events;
mod fan_out;
mod part_pass;
mod provision;
mod shard;
mod status;

use std::{sync::Arc, time::Duration};

use controller_actors::{ObjectKey, Outcome, ReconcileContext, Reconciler};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::{Api, ResourceExt};
use tracing::{Instrument, info, info_span, warn};

use self::{
    copies::LetGo,
    fan_out::{fan_out, is_due, own_copies, source_moved},
    shard::BEHIND_RECHECK,
};
pub(crate) use self::{
    shard::Part,
    status::{TargetsGauge, register_targets_gauge},
};
use super::failure::Stop;
use crate::{
    api::{ClusterFerrVaultSecret, DeletionPolicy, Lenient, RefreshPolicy, names::CLUSTER_SECRET_FINALIZER},
    reconcile::{
        context::Context,
        prologue::{self, Start},
        read::Reads,
        rules::{
            schedule::{
                duration_floor::floor_interval,
                requeue::{RequeueCase, requeue_after, resolve_refresh_interval},
            },
            status::cluster_secret_status::FanOut,
        },
        write::{KubeAction, KubeFailure, invalid_spec},
    },
};

/// The controller name of ClusterFerrVaultSecret keys.
pub(crate) const CLUSTER_SECRET_CONTROLLER: &str = "clusterferrvaultsecret";

/// The key of ClusterFerrVaultSecret `name` (cluster-scoped: no namespace).
pub(crate) fn cluster_secret_key(name: &str) -> ObjectKey {
    ObjectKey {
        controller: CLUSTER_SECRET_CONTROLLER,
        namespace: None,
        name: name.to_owned(),
    }
}

/// Reconciles one ClusterFerrVaultSecret.
pub(crate) struct ClusterSecretReconciler {
    /// What the reconcilers share.
    ctx: Arc<Context>,
    /// The watches' stores.
    reads: Arc<Reads>,
    /// `ferrvault_cluster_secret_targets`.
    gauge: TargetsGauge,
    /// The status each cluster secret's last pass wrote.
    written: status::LastWritten,
    /// Which copies this replica writes, and whether it writes the object (`shard.rs`).
    part: Part,
}

impl ClusterSecretReconciler {
    /// The reconciler over the shared context, reading `reads`, setting `gauge`, doing `part`
    /// of every fan-out.
    pub(crate) fn new(ctx: Arc<Context>, reads: Arc<Reads>, gauge: TargetsGauge, part: Part) -> Self {
        Self {
            ctx,
            reads,
            gauge,
            written: status::LastWritten::default(),
            part,
        }
    }

    async fn run(&self, name: &str, rc: &ReconcileContext) -> Result<Outcome, KubeFailure> {
        let (ctx, reads) = (&*self.ctx, &*self.reads);
        let stores = &reads.stores;
        let listed = async {
            stores.cluster_connections.wait_until_listed().await?;
            stores.namespaces.wait_until_listed().await?;
            stores.secret_metadata.wait_until_listed().await
        };
        if let Err(e) = listed.await {
            return Ok(Outcome::Error {
                reason: "ClusterStoresUnavailable",
                message: e.to_string(),
            });
        }
        if !self.part.owns_object() {
            return self.run_part(name, rc).await;
        }
        let api: Api<Lenient<ClusterFerrVaultSecret>> = Api::all(ctx.client.clone());
        let objects = &reads.cluster_secrets;
        let start = prologue::start(
            objects,
            &api,
            ("ClusterFerrVaultSecret", "", name),
            CLUSTER_SECRET_FINALIZER,
        )
        .await?;
        let cr = match start {
            Start::Valid(cr) => self.written.newest(cr),
            Start::Gone => {
                status::forget(&self.gauge, name);
                return Ok(Outcome::done());
            }
            Start::Deleting(object) => {
                self.written.forget(&object.uid().unwrap_or_default());
                if let Some(cr) = object.valid() {
                    let how = self.let_go_of_own_copies(cr).await?;
                    info!(?how, "let go of every copy");
                    if self.part.is_sharded() && self.elsewhere(cr).await?.any_left(&self.part) {
                        // The other shards' holders let go of theirs at the same event.
                        return Ok(Outcome::done_refresh_in(BEHIND_RECHECK));
                    }
                }
                status::forget(&self.gauge, name);
                prologue::release(ctx, &api, &object, CLUSTER_SECRET_FINALIZER).await?;
                return Ok(Outcome::done());
            }
            Start::Invalid(invalid) => {
                invalid_spec::report(ctx, (&api, objects.written()), &invalid).await?;
                return Ok(Outcome::done());
            }
        };
        let now = Timestamp::now();
        if cr.spec.secret_spec.is_suspended() {
            status::suspended((&api, objects.written()), &cr, now).await?;
            return Ok(Outcome::done());
        }
        let (interval, mut pass, elsewhere) = match self.pass(&cr, rc, now).await? {
            Ok(done) => done,
            Err(outcome) => return Ok(outcome),
        };
        let ours = pass.clone();
        let behind = self.learn_elsewhere(&cr, &mut pass, &elsewhere).await?;
        let written = status::record((&api, objects.written()), &self.gauge, &cr, &pass, now).await?;
        self.written.remember(&cr, &written);
        // This replica's own copies only: another shard's copy still on its way is no Event.
        events::publish((ctx, reads), &cr, &ours, &cr.status.clone().unwrap_or_default());
        let outcome = next(&cr, &pass, interval, written.last_synced_at.as_ref(), now);
        Ok(if behind {
            Outcome::done_refresh_in(BEHIND_RECHECK)
        } else {
            outcome
        })
    }

    /// Deletes (or under `deletionPolicy: Retain` unlabels) every copy of `cr` this replica
    /// writes; how.
    ///
    /// # Errors
    /// A delete or unlabel failed.
    async fn let_go_of_own_copies(&self, cr: &ClusterFerrVaultSecret) -> Result<LetGo, KubeFailure> {
        let how = match cr.spec.secret_spec.deletion_policy() {
            DeletionPolicy::Retain => LetGo::Unlabel,
            DeletionPolicy::Delete => LetGo::Delete,
        };
        for copy in own_copies(&self.reads, cr, &self.part) {
            copies::let_go(&self.ctx, &copy, how)
                .await
                .map_err(KubeFailure::during(KubeAction::WriteTarget))?;
        }
        Ok(how)
    }

    /// This replica's part of the fan-out of a valid, unsuspended `cr`, with its refresh
    /// interval and the selected namespaces other replicas write; or the outcome that ends the
    /// pass.
    ///
    /// # Errors
    /// A Kubernetes failure.
    async fn pass(
        &self,
        cr: &ClusterFerrVaultSecret,
        rc: &ReconcileContext,
        now: Timestamp,
    ) -> Result<Result<(Duration, FanOut, Vec<String>), Outcome>, KubeFailure> {
        let (ctx, reads) = (&*self.ctx, &*self.reads);
        let settings = &ctx.settings;
        let interval = match resolve_refresh_interval(
            &cr.spec.secret_spec.refresh_interval,
            settings.default_refresh_interval,
        ) {
            Ok(requested) => floor_interval(requested, settings.min_refresh_interval).effective,
            Err(e) => {
                warn!(error = %e, "refreshInterval does not parse");
                return Ok(Err(Outcome::done()));
            }
        };
        let due = is_due(cr, interval, now) || source_moved(ctx, cr);
        Ok(match fan_out(ctx, reads, cr, (rc, due), &self.part).await {
            Ok((pass, elsewhere)) => Ok((interval, pass, elsewhere)),
            Err(Stop::RateLimited(retry_after)) => Err(Outcome::RateLimited { retry_after }),
            Err(Stop::Kube(failure)) => return Err(failure),
            Err(Stop::Unavailable { reason, message }) => Err(Outcome::Error { reason, message }),
            Err(Stop::Fail(f)) => Err(Outcome::Error {
                reason: f.reason.as_str(),
                message: f.message,
            }),
            Err(Stop::Quiet(_)) => Err(Outcome::done()),
        })
    }
}

/// When to come back after `pass` of `cr`: the retry of failed namespaces or the refresh
/// (copies last synced at `last`), the earlier one; none under other refresh policies.
fn next(
    cr: &ClusterFerrVaultSecret,
    pass: &FanOut,
    interval: Duration,
    last: Option<&Time>,
    now: Timestamp,
) -> Outcome {
    let (_, failed) = pass.counts();
    let retry = (failed > 0)
        .then(|| requeue_after(RequeueCase::Failed, interval))
        .flatten();
    let refresh = (cr.spec.secret_spec.policy() == RefreshPolicy::Periodic && !interval.is_zero())
        .then(|| refresh_in(last, interval, now));
    match retry.into_iter().chain(refresh).min() {
        Some(after) => Outcome::done_refresh_in(after.max(Duration::from_secs(1))),
        None => Outcome::done(),
    }
}

/// How long until the refresh of copies last synced at `last` (now when never).
fn refresh_in(last: Option<&Time>, interval: Duration, now: Timestamp) -> Duration {
    let Some(last) = last else {
        return Duration::ZERO;
    };
    let elapsed = now.duration_since(last.0).unsigned_abs();
    interval.saturating_sub(elapsed)
}

impl Reconciler for ClusterSecretReconciler {
    async fn reconcile(&self, key: &ObjectKey, rc: &ReconcileContext) -> Outcome {
        let span = info_span!("reconcile", clusterferrvaultsecret = %key.name);
        async { self.run(&key.name, rc).await.unwrap_or_else(Outcome::from) }
            .instrument(span)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_secret_key_should_fall_in_the_cluster_bucket_of_the_fair_share() {
        // A FerrVaultSecret on a cluster connection keeps its own namespace's key (watch/cluster.rs);
        // a cluster secret, an admin's object, shares the cluster-scoped bucket with the cluster
        // connections, which holds at most its share of the workers.
        let key = cluster_secret_key("shared");
        assert_eq!(
            (key.controller, key.namespace.as_deref()),
            (CLUSTER_SECRET_CONTROLLER, None)
        );
    }
}
