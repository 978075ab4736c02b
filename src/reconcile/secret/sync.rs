//! One sync of a valid FerrVaultSecret, up to (not including) its status write, one function per
//! step, each returning a typed result or the [`Stop`] that ends the pass:
//!
//! [`read_target`] (the store's metadata when it shows the target as the last sync left it, or
//! its silence on a first sync, else a GET) → [`access::judge`] (ownership, refused types,
//! connections' Secrets: nothing is revealed for a refused target) → the connection and its
//! inputs' versions → reveal ([`reveal::reveal`]) → [`payload`] (transforms, size) →
//! [`guard_missing_keys`] → [`plan`] (keyed content hash, desired target; a target known only as
//! left is read before it is written) → [`record_pending_rollout`] → [`write_target`] →
//! [`announce`] → [`restart_workloads`].
//!
//! Any stop before [`write_target`] leaves the target as it was: workloads keep the last good
//! values. An unchanged refresh reads nothing but the stores and writes nothing but the status.

use std::time::Duration;

use controller_actors::ReconcileContext;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Resource, ResourceExt};
use tracing::{info, warn};

use super::{
    access,
    failure::{Failure, Stop},
    recorded_inputs::recorded_inputs,
    reveal, rollout, status,
    target::{self, KnownTarget},
};
use crate::{
    api::{FerrVaultSecret, FerrVaultSecretStatus, Lenient, Reason, Transform},
    ferrvault::{MissingKeys, Revealed},
    reconcile::{
        context::Context,
        read::Reads,
        report::EventKind,
        rules::{
            MAX_SECRET_BYTES, SecretData,
            content_hash::{ContentHashKey, content_hash, stamp, upgraded},
            guards::{MissingKeysDecision, RequeueCase, missing_keys_decision},
            messages, payload_bytes,
            rollout_rules::{last_rollout_hash_after, pending_rollout_hash, rollout_due},
            secret_data_from_strings,
            secret_status::{RolloutState, SyncedState},
            transforms::apply_transforms_owned,
        },
        write::{KubeAction, KubeFailure, kube_error_text},
    },
};

/// `Outcome::Error` reason while the content-hash key cannot be had.
const KEY_UNAVAILABLE: &str = "ContentHashKeyUnavailable";

/// `Outcome::Error` reason when the runtime shut down before the payload was computed.
const SHUTTING_DOWN: &str = "ShuttingDown";

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
}

/// The values to write: transformed, and the keys FerrVault did not have.
struct Payload {
    data: SecretData,
    missing: MissingKeys,
}

/// What the write will do.
struct Plan {
    /// The content hash of [`Payload::data`].
    hash: String,
    /// The content hash recorded on the target before this sync (a legacy unkeyed hash of the
    /// same content read as [`Plan::hash`]).
    previous_hash: Option<String>,
    /// `status.lastRolloutHash` as recorded, read the same way.
    last_rolled_out: Option<String>,
    /// The target as it must be.
    desired: Secret,
}

/// Syncs `cr` (with `previous`, its status as read) before the reconcile's deadline, reading
/// through `reads`.
///
/// # Errors
/// The [`Stop`] of the first step that ended the pass.
pub(super) async fn sync(
    ctx: &Context,
    reads: &Reads,
    cr: &FerrVaultSecret,
    previous: &FerrVaultSecretStatus,
    rc: &ReconcileContext,
) -> Result<Synced, Stop> {
    let target_name = cr
        .spec
        .target_name(&cr.metadata.name.clone().unwrap_or_default())
        .to_owned();
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &cr.namespace().unwrap_or_default());
    let target = read_target(reads, (&secrets, &target_name), cr, previous, rc.attempt).await?;
    access::judge(&reads.stores.connections, cr, &target_name, target.secret()).await?;
    let connection = reveal::connection(ctx, reads, cr).await?;
    let key = content_hash_key(ctx).await?;
    let inputs = recorded_inputs(&ctx.client, &reads.stores, &connection, key).await;
    let revealed = reveal::reveal(ctx, reads, cr, &connection, rc.deadline).await?;
    let payload = payload(cr, revealed, &target_name).await?;
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
    let recorded = record_pending_rollout(ctx, reads, cr, previous, &plan).await?;
    let (look_again, target_version) = write_target(ctx, &secrets, &target, &plan.desired).await?;
    announce(ctx, cr, &payload, &plan, &target_name).await;
    let rollout = restart_workloads(ctx, reads, cr, &plan, recorded.as_deref()).await;
    let rollout_failed = matches!(rollout, Some((RolloutState::Failed(_), _)));
    let rollout_due_in = rollout.as_ref().and_then(|(_, due)| *due);
    let has_rollout = rollout.is_some();
    let pending = rollout_failed || rollout_due_in.is_some();
    Ok(Synced {
        look_again,
        state: SyncedState {
            synced_keys: payload.data.keys().cloned().collect(),
            missing_keys: payload.missing,
            target: target_name,
            last_rollout_hash: last_rollout_hash_after(has_rollout, pending, recorded.as_deref(), &plan.hash),
            rollout: rollout.map(|(state, _)| state),
            target_resource_version: target_version,
            observed_inputs: inputs,
        },
        rollout_failed,
        rollout_due_in,
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
        cr.spec.target_type(),
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
    let planned = plan(cr, previous, &known, target, &payload.data, key);
    if !matches!(known, KnownTarget::AsLeft(_)) || !target::needs_write(&known, &planned.desired) {
        return Ok((known, planned));
    }
    let read = KnownTarget::Read(get_target(secrets, target).await?);
    access::judge(&reads.stores.connections, cr, target, read.secret()).await?;
    guard_missing_keys(payload, read.secret(), target)?;
    let planned = plan(cr, previous, &read, target, &payload.data, key);
    Ok((read, planned))
}

/// The revealed values through `spec.transforms`, no larger than a Secret may be, computed on a
/// blocking thread ([`tokio::task::spawn_blocking`]) rather than the async runtime's: the work
/// is bounded (no transform step builds more than [`MAX_SECRET_BYTES`], jsonExpand is capped,
/// the reveal has its own caps) but it is CPU work proportional to what a tenant's FerrVault
/// answers, so it never delays Lease renewal, probes or another tenant's reconcile.
///
/// The worst case the bounds allow (test `rules::transforms::tests::
/// the_worst_pipeline_the_bounds_allow_should_stay_bounded`: 32 `base64Decode` steps over a
/// 1 MiB content of 160,000 keys) took 0.85 s optimised (4.7 s in the test build) on a shared
/// 2-core machine under load. The content hashes [`plan`] computes from the result stay on the
/// runtime: bounded by the 1 MiB checked here, the same test's two (that content, and one 1 MiB
/// value) took 28 ms together, optimised and under the same load.
///
/// # Panics
/// Re-raises a panic of the computation, as if it had run inline.
async fn payload(cr: &FerrVaultSecret, revealed: Revealed, target: &str) -> Result<Payload, Stop> {
    let transforms = cr.spec.transforms.clone();
    let target = target.to_owned();
    let computed = tokio::task::spawn_blocking(move || transformed(revealed, &transforms, &target)).await;
    match computed {
        Ok(payload) => payload,
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        Err(_) => Err(Stop::Unavailable {
            reason: SHUTTING_DOWN,
            message: "the runtime shut down before the payload was computed".to_owned(),
        }),
    }
}

/// [`payload`]'s computation: transforms, then the size check.
fn transformed(revealed: Revealed, transforms: &[Transform], target: &str) -> Result<Payload, Stop> {
    let raw = secret_data_from_strings(revealed.secrets.into_iter().map(|(k, v)| (k, v.into_exposed())));
    let data = apply_transforms_owned(raw, transforms)
        .map_err(|e| Failure::new(e.reason(), e.to_string(), RequeueCase::Failed))?;
    let size = payload_bytes(&data);
    if size > MAX_SECRET_BYTES {
        return Err(Failure::new(
            Reason::SecretTooLarge,
            messages::secret_too_large(size, MAX_SECRET_BYTES, target),
            RequeueCase::Failed,
        )
        .into());
    }
    Ok(Payload {
        data,
        missing: revealed.missing,
    })
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

/// Missing keys never overwrite an existing target (reference §3.2 guard): the pass stops with
/// `MissingKeys` and the keys recorded.
fn guard_missing_keys(payload: &Payload, existing: Option<&Secret>, target: &str) -> Result<(), Stop> {
    if missing_keys_decision(payload.missing.names(), existing.is_some(), &payload.data)
        != MissingKeysDecision::LeaveTargetUnchanged
    {
        return Ok(());
    }
    let mut failure = Failure::new(
        Reason::MissingKeys,
        messages::missing_keys_target_unchanged(&payload.missing, target),
        RequeueCase::KeysMissing,
    );
    failure.missing = Some(payload.missing.clone());
    Err(failure.into())
}

/// The content-hash key (loaded on the first pass unless the process loaded it at start).
async fn content_hash_key(ctx: &Context) -> Result<&ContentHashKey, Stop> {
    ctx.content_hash_key
        .get(&ctx.client)
        .await
        .map_err(|e| Stop::Unavailable {
            reason: KEY_UNAVAILABLE,
            message: e.to_string(),
        })
}

/// The content hash and the target as it must be after this sync. Hashes recorded in an earlier
/// encoding of the same content are read as today's ([`upgraded`]), so an upgrade restarts
/// nothing; the target keeps a keyed stamp of an earlier encoding ([`stamp`]), so it rewrites
/// nothing either.
fn plan(
    cr: &FerrVaultSecret,
    previous: &FerrVaultSecretStatus,
    known: &KnownTarget,
    target: &str,
    data: &SecretData,
    key: &ContentHashKey,
) -> Plan {
    let existing = known.secret();
    let hash = content_hash(key, data);
    let recorded = target::recorded_hash(existing);
    let stamp = stamp(recorded.as_deref(), key, data, &hash);
    Plan {
        previous_hash: upgraded(recorded.as_deref(), key, data, &hash),
        last_rolled_out: upgraded(previous.last_rollout_hash.as_deref(), key, data, &hash),
        desired: target::desired_target(existing, cr, target, cr.spec.target_type(), data, &stamp),
        hash,
    }
}

/// Records the hash the workloads must be restarted for *before* the target changes, so a crash
/// between the write and the restart still restarts them on the next pass; returns
/// `status.lastRolloutHash` as it now stands.
async fn record_pending_rollout(
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

/// Writes the target when it differs from `desired`; returns whether someone else changed it
/// while we wrote (then the pass looks again soon) and the target's version after this step
/// (written, or as it was found).
async fn write_target(
    ctx: &Context,
    secrets: &Api<Secret>,
    known: &KnownTarget,
    desired: &Secret,
) -> Result<(bool, Option<String>), Stop> {
    if !target::needs_write(known, desired) {
        return Ok((false, known.version()));
    }
    let (namespace, name) = (desired.namespace().unwrap_or_default(), desired.name_any());
    ctx.own_writes.begin(&namespace, &name);
    let result = target::write(secrets, known.secret(), desired).await;
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

/// Logs the sync and, when the content changed, publishes a `Synced` Event (hash prefix only).
async fn announce(ctx: &Context, cr: &FerrVaultSecret, payload: &Payload, plan: &Plan, target: &str) {
    let content_changed = plan.previous_hash.as_deref() != Some(plan.hash.as_str());
    info!(
        target = %target,
        keys = payload.data.len(),
        missing = payload.missing.total(),
        transforms = cr.spec.transforms.len(),
        content_changed,
        "synced secret"
    );
    if content_changed {
        let note = format!(
            "{} (content hash {})",
            messages::synced(payload.data.len(), target),
            short(&plan.hash)
        );
        ctx.events
            .publish(&cr.object_ref(&()), EventKind::Synced, note)
            .await;
    }
}

/// Restarts the workloads of `spec.rolloutRestart` that do not run this content yet, when a
/// rollout is due and the rollout floor allows it. `None` without rollout targets; else how the
/// rollout ended and, when the floor deferred a restart, how long until it is due.
async fn restart_workloads(
    ctx: &Context,
    reads: &Reads,
    cr: &FerrVaultSecret,
    plan: &Plan,
    recorded: Option<&str>,
) -> Option<(RolloutState, Option<Duration>)> {
    if cr.spec.rollout_restart.is_empty() {
        return None;
    }
    if !rollout_due(recorded, plan.previous_hash.as_deref(), &plan.hash) {
        return Some((RolloutState::UpToDate, None));
    }
    let (namespace, uid) = (cr.namespace().unwrap_or_default(), cr.uid().unwrap_or_default());
    let floor = ctx.settings.rollout_floor;
    let request = rollout::Rollout {
        namespace: &namespace,
        cr_uid: &uid,
        content_hash: &plan.hash,
        floor,
        secrets: &reads.stores.secrets,
    };
    let report = rollout::restart_workloads(&ctx.client, &request, &cr.spec.rollout_restart).await;
    let reference = cr.object_ref(&());
    for workload in &report.restarted {
        let note = format!("restarted {workload} for content hash {}", short(&plan.hash));
        ctx.events
            .publish(&reference, EventKind::RolloutTriggered, note)
            .await;
    }
    let due_in = report
        .deferred_until
        .map(|until| Duration::try_from(until.duration_since(Timestamp::now())).unwrap_or_default());
    if let Some(error) = report.first_error {
        warn!(error = %error, "rollout restart failed, will retry");
        ctx.events
            .publish(&reference, EventKind::RolloutFailed, error.clone())
            .await;
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

/// The first 12 hex digits of a content hash, for Events.
fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

#[cfg(test)]
mod tests;
