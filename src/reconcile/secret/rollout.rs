//! Rollout restarts of the workloads listed in `spec.rolloutRestart` (reference §3.5): the two
//! steps of a sync ([`record_pending_rollout`] before the target is written,
//! [`restart_workloads`] after), the retry of a restart still due for a kept `CreatedOnce`
//! target ([`retry_for_kept`]), and the restart of each workload.
//!
//! # Guarantees
//! - The hash the workloads must run is recorded in status before the target changes, so a
//!   crash between the write and the restart still restarts them on the next pass.
//! - Each workload is read uncached (`get`) and restarted by a JSON merge patch of its pod
//!   template's annotations only (`patch` RBAC; no full update).
//! - A workload whose per-CR annotation already records the content hash is skipped, so a retry
//!   restarts only the workloads that missed the rollout.
//! - Every workload is attempted even after a failure; the first failure is reported.
//! - A workload restarted less than the rollout floor ago is not patched: its restart is
//!   deferred and the report says until when (the earliest of all), so the pass is requeued then.
//! - After an immutable target was replaced, every workload the operator has not restarted since
//!   is restarted when the floor allows, also on a later pass (`status.targetReplacedAt`),
//!   even when the content hash did not change.
//! - A restart also removes the stamps on the workload no FerrVaultSecret of the namespace owns
//!   any more ([`stale_stamps`]), judged from the FerrVaultSecret store ([`listers_in`]); nothing
//!   is ever patched only to remove them (see [`rules::rollout`]).
//!
//! [`rules::rollout`]: crate::reconcile::rules::rollout

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api, Resource, ResourceExt,
    api::{ApiResource, DynamicObject, GroupVersionKind, Patch},
};
use tracing::warn;

use super::{
    failure::{KeptRollout, Stop},
    plan::Plan,
    status,
    target::recorded_hash,
};
use crate::{
    api::{
        ConditionStatus, ConditionType, FerrVaultSecret, FerrVaultSecretStatus, Lenient, RolloutTarget,
        WorkloadKind,
    },
    reconcile::{
        context::Context,
        read::{Reads, Scoped},
        report::EventKind,
        rules::{
            rollout::{
                RolloutListers, last_restart, last_rollout_hash_after, needs_restart_since_replace,
                pending_rollout_hash, restart_deferred_until, restart_patch, rollout_due, stale_stamps,
                workload_needs_restart,
            },
            status::{conditions::find_condition, messages, secret_status::RolloutState},
        },
        write::{KubeAction, KubeFailure, is_not_found, kube_error_text, patch_params},
    },
};

/// Records the hash the workloads must be restarted for *before* the target changes, so a crash
/// between the write and the restart still restarts them on the next pass; returns
/// `status.lastRolloutHash` as it now stands.
pub(super) async fn record_pending_rollout(
    ctx: &Context,
    reads: &Reads,
    cr: &FerrVaultSecret,
    previous: &FerrVaultSecretStatus,
    plan: &Plan,
) -> Result<Option<String>, Stop> {
    let recorded = plan.last_rolled_out.clone();
    let Some(pending) = pending_rollout_hash(
        !cr.spec.rollout_restart.is_empty(),
        recorded.as_deref(),
        plan.previous_hash.as_deref(),
        &plan.hash,
    ) else {
        return Ok(recorded);
    };
    let mut status = previous.clone();
    status.last_rollout_hash = Some(pending.clone());
    let api =
        Api::<Lenient<FerrVaultSecret>>::namespaced(ctx.client.clone(), &cr.namespace().unwrap_or_default());
    status::write((&api, reads.secrets.written()), &cr.name_any(), previous, &status)
        .await
        .map_err(KubeFailure::during(KubeAction::WriteStatus("pending rollout")))?;
    Ok(Some(pending))
}

/// The content a rollout restarts the workloads for, and what is recorded of earlier ones.
pub(super) struct RolloutFor<'a> {
    /// The content hash the workloads must run.
    pub(super) current: &'a str,
    /// The target's content hash before this pass (its annotation), when known.
    pub(super) previous: Option<&'a str>,
    /// `status.lastRolloutHash` as it now stands.
    pub(super) recorded: Option<&'a str>,
    /// When the immutable target was replaced, while some workload may not have restarted
    /// since: just now (this pass replaced it), or `status.targetReplacedAt` (a restart the
    /// rollout floor deferred, or one that failed).
    pub(super) replaced_at: Option<Timestamp>,
}

/// Restarts the workloads of `spec.rolloutRestart` that do not run this content yet, when a
/// rollout is due and the rollout floor allows it; after a replacement of an immutable target
/// (`replaced_at`), also every workload not restarted since, whatever the content hash says.
/// `None` without rollout targets; else how the rollout ended and, when the floor deferred a
/// restart, how long until it is due. A deferred or failed restart after a replacement stays
/// due: the caller records `replaced_at` (`status.targetReplacedAt`) until one ends
/// [`RolloutState::UpToDate`].
pub(super) async fn restart_workloads(
    ctx: &Context,
    reads: &Reads,
    cr: &FerrVaultSecret,
    rollout: RolloutFor<'_>,
) -> Option<(RolloutState, Option<Duration>)> {
    if cr.spec.rollout_restart.is_empty() {
        return None;
    }
    if rollout.replaced_at.is_none() && !rollout_due(rollout.recorded, rollout.previous, rollout.current) {
        return Some((RolloutState::UpToDate, None));
    }
    let (namespace, uid) = (cr.namespace().unwrap_or_default(), cr.uid().unwrap_or_default());
    let floor = ctx.settings.rollout_floor;
    let request = Rollout {
        namespace: &namespace,
        cr_uid: &uid,
        content_hash: rollout.current,
        replaced_at: rollout.replaced_at,
        floor,
        secrets: &reads.stores.secrets,
    };
    let report = restart_each(&ctx.client, &request, &cr.spec.rollout_restart).await;
    let reference = cr.object_ref(&());
    for workload in &report.restarted {
        let short = &rollout.current[..rollout.current.len().min(12)];
        let note = format!("restarted {workload} for content hash {short}");
        ctx.events.publish(&reference, EventKind::RolloutTriggered, note);
    }
    let due_in = report
        .deferred_until
        .map(|until| Duration::try_from(until.duration_since(Timestamp::now())).unwrap_or_default());
    if let Some(error) = report.first_error {
        warn!(error = %error, "rollout restart failed, will retry");
        ctx.events
            .publish(&reference, EventKind::RolloutFailed, error.clone());
        return Some((RolloutState::Failed(error), due_in));
    }
    Some(match report.deferred_until {
        Some(until) => (
            RolloutState::Deferred(messages::rollout_deferred(until, floor)),
            due_in,
        ),
        None => (RolloutState::UpToDate, None),
    })
}

/// Retries a restart still due (`RolloutRestarted` not `True`) for a `CreatedOnce` target that
/// `existing` keeps, for the content it holds (its content-hash annotation), as a sync would for
/// any other target; `None` when none is due, or without rollout targets.
pub(super) async fn retry_for_kept(
    ctx: &Context,
    reads: &Reads,
    cr: &FerrVaultSecret,
    previous: &FerrVaultSecretStatus,
    existing: &Secret,
) -> Option<KeptRollout> {
    let pending = find_condition(&previous.conditions, ConditionType::RolloutRestarted)
        .is_some_and(|c| c.status != ConditionStatus::True.as_str());
    if !pending {
        return None;
    }
    let current = recorded_hash(Some(existing))?;
    let recorded = previous.last_rollout_hash.as_deref();
    let rollout_for = RolloutFor {
        current: &current,
        previous: None,
        recorded,
        replaced_at: previous.target_replaced_at.as_ref().map(|t| t.0),
    };
    let (state, due_in) = restart_workloads(ctx, reads, cr, rollout_for).await?;
    let still_pending = matches!(state, RolloutState::Failed(_)) || due_in.is_some();
    Some(KeptRollout {
        last_rollout_hash: last_rollout_hash_after(true, still_pending, recorded, &current),
        state,
        due_in,
    })
}

/// What a rollout pass did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct RolloutReport {
    /// `Kind/name` of each workload restarted in this pass.
    pub restarted: Vec<String>,
    /// The first failure, for the `RolloutRestarted` condition (names only).
    pub first_error: Option<String>,
    /// The earliest end of a deferral by the rollout floor, if a restart was deferred.
    pub deferred_until: Option<Timestamp>,
}

/// What a rollout pass asks of every workload.
pub(super) struct Rollout<'a> {
    /// The FerrVaultSecret's namespace (the workloads').
    pub namespace: &'a str,
    /// The FerrVaultSecret's UID (its per-CR pod-template annotation).
    pub cr_uid: &'a str,
    /// The content hash the workloads must run.
    pub content_hash: &'a str,
    /// When the immutable target was replaced: restart even a workload whose stamp records the
    /// hash, unless the operator restarted it since.
    pub replaced_at: Option<Timestamp>,
    /// The least time between two restarts of one workload.
    pub floor: Duration,
    /// The FerrVaultSecret store: which FerrVaultSecrets of the namespace restart which
    /// workloads ([`listers_in`]), read only for a workload another one stamped.
    pub secrets: &'a Scoped<Lenient<FerrVaultSecret>>,
}

/// Which FerrVaultSecrets of `namespace` restart which workloads, from the FerrVaultSecret
/// store; [`RolloutListers::unknown`] while the store does not hold the namespace, listed.
pub(super) fn listers_in(store: &Scoped<Lenient<FerrVaultSecret>>, namespace: &str) -> RolloutListers {
    let Some(scope) = store.of(namespace).filter(|scope| scope.is_listed()) else {
        return RolloutListers::unknown();
    };
    let mut listers = RolloutListers::default();
    for object in scope.in_namespace(namespace) {
        let Some(uid) = object.meta().uid.as_deref() else {
            continue;
        };
        match object.valid() {
            Some(cr) => listers.add(uid, &cr.spec.rollout_restart),
            None => listers.add_unreadable(uid),
        }
    }
    listers
}

/// What happened to one workload.
enum Restart {
    Done,
    NotNeeded,
    Deferred(Timestamp),
}

fn api_for(client: &kube::Client, namespace: &str, kind: WorkloadKind) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("apps", "v1", kind.as_str());
    Api::namespaced_with(client.clone(), namespace, &ApiResource::from_gvk(&gvk))
}

/// Restarts every workload of `targets` that does not run the content yet, unless the floor
/// defers it.
async fn restart_each(
    client: &kube::Client,
    rollout: &Rollout<'_>,
    targets: &[RolloutTarget],
) -> RolloutReport {
    let mut report = RolloutReport::default();
    for target in targets {
        let workload = format!("{}/{}", target.kind.as_str(), target.name);
        match restart_one(client, rollout, target).await {
            Ok(Restart::Done) => {
                tracing::info!(workload, "rollout triggered");
                report.restarted.push(workload);
            }
            Ok(Restart::NotNeeded) => {}
            Ok(Restart::Deferred(until)) => {
                tracing::info!(workload, %until, "rollout deferred by the rollout floor");
                report.deferred_until = Some(report.deferred_until.map_or(until, |t| t.min(until)));
            }
            Err(why) => {
                tracing::warn!(workload, error = %why, "rollout patch failed");
                report.first_error.get_or_insert(why);
            }
        }
    }
    report
}

/// Restarts one workload if needed and the floor allows it.
async fn restart_one(
    client: &kube::Client,
    rollout: &Rollout<'_>,
    target: &RolloutTarget,
) -> Result<Restart, String> {
    let api = api_for(client, rollout.namespace, target.kind);
    let workload = format!("{} {:?}", target.kind.as_str(), target.name);
    let object = api.get(&target.name).await.map_err(|e| {
        if is_not_found(&e) {
            format!("{workload} not found")
        } else {
            format!("read {workload}: {}", kube_error_text(&e))
        }
    })?;
    let annotations = object
        .data
        .pointer("/spec/template/metadata/annotations")
        .and_then(|a| serde_json::from_value(a.clone()).ok());
    let needed = workload_needs_restart(annotations.as_ref(), rollout.cr_uid, rollout.content_hash)
        || needs_restart_since_replace(annotations.as_ref(), rollout.replaced_at);
    if !needed {
        return Ok(Restart::NotNeeded);
    }
    let now = Timestamp::now();
    if let Some(until) = restart_deferred_until(last_restart(annotations.as_ref()), now, rollout.floor) {
        return Ok(Restart::Deferred(until));
    }
    let stale = stale_stamps(
        annotations.as_ref(),
        (target.kind, &target.name),
        rollout.cr_uid,
        || listers_in(rollout.secrets, rollout.namespace),
    );
    let patch = restart_patch(rollout.cr_uid, rollout.content_hash, now, &stale);
    api.patch(&target.name, &patch_params(), &Patch::Merge(&patch))
        .await
        .map_err(|e| format!("patch {workload}: {}", kube_error_text(&e)))?;
    Ok(Restart::Done)
}
