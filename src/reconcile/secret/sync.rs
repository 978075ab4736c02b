//! One sync of a valid FerrVaultSecret, up to (not including) its status write, one function per
//! step, each returning a typed result or the [`Stop`] that ends the pass:
//!
//! [`read_target`] (the store's metadata when it shows the target as the last sync left it, or
//! its silence on a first sync, else a GET) → the connection (suspended: stop; a namespace a cluster
//! connection no longer allows: [`revocation::revoke`]) → a `CreatedOnce`
//! target that exists is kept unless forced (stop; a restart still due for it is retried,
//! [`rollout::retry_for_kept`]) → [`target_access::judge`] (ownership, refused
//! types, connections' Secrets: nothing is revealed for a refused target) → the inputs' versions
//! → reveal ([`reveal::reveal`]) → [`payload::payload`] (transforms, size) →
//! [`payload::guard_missing_keys`] → [`plan::plan`] (keyed content hash, desired target; a target
//! known only as left is read before it is written) → [`rollout::record_pending_rollout`] →
//! [`write_target`] → [`announce`] → [`rollout::restart_workloads`].
//!
//! Any stop before [`write_target`] leaves the target as it was: workloads keep the last good
//! values. An unchanged refresh reads nothing but the stores and writes nothing but the status.

use std::time::Duration;

use controller_actors::ReconcileContext;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Resource, ResourceExt};
use tracing::info;

use super::{
    failure::{Failure, Held, Stop},
    payload::{self, Payload, guard_missing_keys},
    plan::{self, Plan, content_hash_key},
    recorded_inputs::recorded_inputs,
    reveal::{self, Freshness},
    revocation,
    rollout::{self, RolloutFor},
    target::{self, KnownTarget, Write},
    target_access,
};
use crate::{
    api::{FerrVaultSecret, FerrVaultSecretStatus, Reason, RefreshPolicy},
    reconcile::{
        changes::followed_by,
        context::Context,
        read::Reads,
        rules::{
            content::{content_hash::ContentHashKey, target_shape::owned_keys},
            rollout::last_rollout_hash_after,
            schedule::{explain::Trigger, force_sync::force_token, requeue::RequeueCase},
            status::{
                messages,
                secret_status::{ForceSyncSeen, RolloutState, SyncedState},
            },
        },
        write::{KubeAction, KubeFailure, kube_error_text},
    },
};

/// What a sync that wrote (or confirmed) the target leaves for the status and the outcome.
pub(super) struct Synced {
    /// Someone else changed the target while we wrote it: look again soon.
    pub(super) look_again: bool,
    /// What the status records.
    pub(super) state: SyncedState,
    /// A workload restart failed (reported in status; the sync itself succeeded).
    pub(super) rollout_failed: bool,
    /// A restart deferred by the rollout floor is due after this long.
    pub(super) rollout_due_in: Option<Duration>,
    /// The `Synced` Event's note when the content changed: published after the status write,
    /// so `Ready` never waits for it (issue 39).
    pub(super) announcement: Option<String>,
}

/// Syncs `cr` (with `previous`, its status as read) before the reconcile's deadline, reading
/// through `reads`; due because of `trigger` (a forced sync reads FerrVault fresh and may
/// overwrite a `CreatedOnce` target).
///
/// # Errors
/// The [`Stop`] of the first step that ended the pass; [`Stop::Quiet`] when its connection is
/// suspended or a `CreatedOnce` target exists (nothing revealed, nothing written).
pub(super) async fn sync(
    ctx: &Context,
    reads: &Reads,
    cr: &FerrVaultSecret,
    previous: &FerrVaultSecretStatus,
    (rc, trigger): (&ReconcileContext, Trigger),
) -> Result<Synced, Stop> {
    let forced = trigger == Trigger::Force;
    let target_name = cr
        .spec
        .target_name(&cr.metadata.name.clone().unwrap_or_default())
        .to_owned();
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &cr.namespace().unwrap_or_default());
    let target = read_target(reads, (&secrets, &target_name), cr, previous, rc.attempt).await?;
    let connection = match reveal::connection(ctx, reads, cr).await {
        Err(Stop::Fail(refused)) if refused.reason == Reason::ConnectionNotAllowed => {
            target_access::judge(&reads.stores, cr, &target_name, target.secret()).await?;
            revocation::revoke(reads, cr, &secrets, &target).await?;
            return Err(Stop::Fail(refused));
        }
        connection => connection?,
    };
    let force_sync = ForceSyncSeen {
        own: force_token(cr.metadata.annotations.as_ref()),
        connection: connection
            .status
            .as_ref()
            .and_then(|s| s.observed_force_sync.clone()),
    };
    if connection.spec.is_suspended() {
        return Err(Stop::Quiet(Held::Suspended(Reason::ConnectionSuspended)));
    }
    if let (RefreshPolicy::CreatedOnce, false, Some(existing)) = (cr.spec.policy(), forced, target.secret()) {
        target_access::judge_kept(&reads.stores, cr, &target_name, existing).await?;
        let rollout = rollout::retry_for_kept(ctx, reads, cr, previous, existing).await;
        return Err(Stop::Quiet(Held::Kept {
            target: target_name,
            version: target.version(),
            force_sync,
            rollout: rollout.map(Box::new),
        }));
    }
    target_access::judge(&reads.stores, cr, &target_name, target.secret()).await?;
    let key = content_hash_key(ctx).await?;
    let inputs = recorded_inputs(&ctx.client, &reads.stores, &connection, key).await;
    let freshness = match trigger {
        // A moved version is read fresh: a wave's kept answer may predate it.
        Trigger::Force | Trigger::Source => Freshness::Now,
        // The hint says the value changed since any kept answer: read since the hints were
        // gathered (the mark is taken only now, so a pass that stops earlier leaves it).
        Trigger::Hint => ctx
            .hints
            .take(&cr.namespace().unwrap_or_default(), &cr.name_any())
            .map_or(Freshness::Now, Freshness::Since),
        Trigger::Refresh | Trigger::Spec | Trigger::Inputs | Trigger::Drift => Freshness::Wave,
    };
    let revealed = reveal::reveal(ctx, reads, cr, &connection, (rc.deadline, freshness)).await?;
    let followed = followed_by(cr);
    let selected = cr.spec.selected_names();
    let source_version = ctx.changes.recorded_version(&followed, selected, &revealed);
    let payload = payload::payload(cr, revealed, &target_name).await?;
    let (target, plan) = settle_target(
        reads,
        (&secrets, &target_name),
        cr,
        previous,
        target,
        &payload,
        key,
    )
    .await?;
    let write = target::write_for(&target, &plan.desired, &cr.spec).map_err(|_| {
        Failure::new(
            Reason::TargetImmutable,
            messages::target_immutable(&target_name),
            RequeueCase::Failed,
        )
    })?;
    let recorded = rollout::record_pending_rollout(ctx, reads, cr, previous, &plan).await?;
    let (look_again, target_version) = write_target(ctx, &secrets, write, &target, &plan.desired).await?;
    if trigger == Trigger::Source {
        ctx.changes.observe_arrival(&followed, selected);
    }
    let announcement = announce(cr, &payload, &plan, &target_name);
    let replaced_now = matches!(write, Some(Write::Replace { restart: true, .. }));
    let replaced_at = if replaced_now {
        Some(Timestamp::now())
    } else {
        previous.target_replaced_at.as_ref().map(|t| t.0)
    };
    let rollout_for = RolloutFor {
        current: &plan.hash,
        previous: plan.previous_hash.as_deref(),
        recorded: recorded.as_deref(),
        replaced_at,
    };
    let rollout = rollout::restart_workloads(ctx, reads, cr, rollout_for).await;
    let rollout_failed = matches!(rollout, Some((RolloutState::Failed(_), _)));
    let rollout_due_in = rollout.as_ref().and_then(|(_, due)| *due);
    let has_rollout = rollout.is_some();
    let pending = rollout_failed || rollout_due_in.is_some();
    let shape = cr.spec.target_metadata();
    Ok(Synced {
        look_again,
        state: SyncedState {
            synced_keys: payload.data.keys().cloned().collect(),
            owned_labels: owned_keys(&shape.labels),
            owned_annotations: owned_keys(&shape.annotations),
            missing_keys: payload.missing,
            target: target_name,
            last_rollout_hash: last_rollout_hash_after(has_rollout, pending, recorded.as_deref(), &plan.hash),
            rollout: rollout.map(|(state, _)| state),
            target_resource_version: target_version,
            target_replaced_at: replaced_at.filter(|_| pending),
            observed_inputs: inputs,
            force_sync,
            source_version,
        },
        rollout_failed,
        rollout_due_in,
        announcement,
    })
}

/// The target as this pass knows it: as the last sync left it when the Secret store shows the
/// version that sync recorded at this generation, absent when the listed store shows none and
/// this object never recorded writing one (a first sync: no read, and its create cannot
/// overwrite), else read with a GET. A retry (`attempt` > 0) never trusts the store's silence:
/// a create refused because the Secret exists after all is retried against the real one.
async fn read_target(
    reads: &Reads,
    (secrets, target): (&Api<Secret>, &str),
    cr: &FerrVaultSecret,
    previous: &FerrVaultSecretStatus,
    attempt: u32,
) -> Result<KnownTarget, Stop> {
    let namespace = cr.namespace().unwrap_or_default();
    let stores = &reads.stores;
    let stored = stores.secret_meta(&namespace, target);
    let as_left = KnownTarget::as_left(
        stored.as_ref().map(|s| &s.metadata),
        previous,
        cr.meta().generation,
        &cr.spec,
    );
    if let Some(known) = as_left {
        return Ok(known);
    }
    // Our own last write may not have reached the store yet: only a status without one trusts
    // the store's silence.
    let unlisted = attempt == 0
        && stored.is_none()
        && previous.target_resource_version.is_none()
        && stores.secret_metadata.covers(&namespace)
        && stores.secret_metadata.is_listed();
    if unlisted {
        return Ok(KnownTarget::Unlisted);
    }
    Ok(KnownTarget::Read(get_target(secrets, target).await?))
}

/// The missing-keys guard, then the plan. A target known only as the last sync left it is read
/// when it must be written (the write needs its whole content and the version it is computed
/// from), judged again and planned again.
async fn settle_target(
    reads: &Reads,
    (secrets, target): (&Api<Secret>, &str),
    cr: &FerrVaultSecret,
    previous: &FerrVaultSecretStatus,
    known: KnownTarget,
    payload: &Payload,
    key: &ContentHashKey,
) -> Result<(KnownTarget, Plan), Stop> {
    guard_missing_keys(payload, known.secret(), target)?;
    let planned = plan::plan(cr, previous, &known, target, &payload.data, key);
    if !matches!(known, KnownTarget::AsLeft(_)) || !target::needs_write(&known, &planned.desired) {
        return Ok((known, planned));
    }
    let read = KnownTarget::Read(get_target(secrets, target).await?);
    target_access::judge(&reads.stores, cr, target, read.secret()).await?;
    guard_missing_keys(payload, read.secret(), target)?;
    let planned = plan::plan(cr, previous, &read, target, &payload.data, key);
    Ok((read, planned))
}

/// The target as the API server has it now, if it exists.
async fn get_target(secrets: &Api<Secret>, target: &str) -> Result<Option<Secret>, Stop> {
    secrets.get_opt(target).await.map_err(|e| {
        Failure::new(
            Reason::SecretReadFailed,
            format!("read Secret {target}: {}", kube_error_text(&e)),
            RequeueCase::Failed,
        )
        .into()
    })
}

/// Makes `write` (none when the target is as `desired` already); returns whether someone else
/// changed it while we wrote (then the pass looks again soon) and the target's version after
/// this step (written, or as it was found).
async fn write_target(
    ctx: &Context,
    secrets: &Api<Secret>,
    write: Option<Write<'_>>,
    known: &KnownTarget,
    desired: &Secret,
) -> Result<(bool, Option<String>), Stop> {
    let Some(write) = write else {
        return Ok((false, known.version()));
    };
    let (namespace, name) = (desired.namespace().unwrap_or_default(), desired.name_any());
    ctx.own_writes.begin(&namespace, &name);
    let result = target::write(secrets, write, desired).await;
    let version = result
        .as_ref()
        .ok()
        .and_then(|written| written.metadata.resource_version.clone());
    let look_again = ctx.own_writes.finish(&namespace, &name, version.as_deref());
    match result {
        Ok(_) => Ok((look_again, version)),
        Err(error) => {
            let failure = KubeFailure::new(KubeAction::WriteTarget, error);
            if failure.is_conflict() {
                // Someone else wrote it since we read it: retried with backoff, not a failure.
                Err(Stop::Kube(failure))
            } else {
                Err(Failure::new(
                    Reason::SecretWriteFailed,
                    format!("write Secret {name}: {}", kube_error_text(&failure.source)),
                    RequeueCase::Failed,
                )
                .into())
            }
        }
    }
}

/// Logs the sync and, when the content changed, returns the `Synced` Event's note (hash prefix
/// only) for [`SecretReconciler::finish`](super::reconciler::SecretReconciler) to publish after
/// the status.
fn announce(cr: &FerrVaultSecret, payload: &Payload, plan: &Plan, target: &str) -> Option<String> {
    let content_changed = plan.previous_hash.as_deref() != Some(plan.hash.as_str());
    info!(
        target = %target,
        keys = payload.data.len(),
        missing = payload.missing.total(),
        transforms = cr.spec.transforms.len(),
        content_changed,
        "synced secret"
    );
    content_changed.then(|| {
        format!(
            "{} (content hash {})",
            messages::synced(payload.data.len(), target),
            plan.short_hash()
        )
    })
}
