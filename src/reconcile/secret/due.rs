//! Whether a pass is due, and why ([`explain`]): decided from the watches' stores alone, before
//! anything is read, revealed or written.

use std::time::{Duration, Instant};

use controller_actors::Outcome;
use jiff::Timestamp;
use kube::ResourceExt;

use super::{cluster_connection::stored_cluster_connection, target::KnownTarget, target_access};
use crate::{
    api::{ConnectionKind, FerrVaultConnection, FerrVaultSecret, FerrVaultSecretStatus},
    reconcile::{
        changes::followed_by,
        context::Context,
        read::{Reads, secret_inputs},
        rules::schedule::{
            explain::{ConnectionSeen, Explanation, Quiet, Seen, Trigger, explain, explain_early},
            freshness::Schedule,
            requeue::MIN_REQUEUE,
        },
        watch::HintMarks,
    },
};

/// What `connection` shows the rule (nothing when the store does not hold it yet: the sync reads
/// it and checks its suspension again).
pub(super) fn connection_seen(connection: Option<&FerrVaultConnection>) -> ConnectionSeen<'_> {
    connection.map_or_else(ConnectionSeen::default, |c| ConnectionSeen {
        suspended: c.spec.is_suspended(),
        forced: c.status.as_ref().and_then(|s| s.observed_force_sync.as_deref()),
    })
}

/// Whether and why the pass is due by the rule of [`explain`], with the target access still
/// holding for a target that is written; due whenever a store cannot tell (the sync reads and
/// reports: the trigger is then `inputs`).
///
/// A pass queued behind the sync that wrote the target can run before the Secret store shows
/// that write ([`OwnWrites::arriving`](crate::reconcile::read::OwnWrites::arriving)):
/// the target is then as left, and the pass looks again after [`MIN_REQUEUE`] to judge it
/// from the store, rather than syncing again (a GET, a reveal and a status write).
pub(super) async fn judge(
    ctx: &Context,
    reads: &Reads,
    cr: &FerrVaultSecret,
    previous: &FerrVaultSecretStatus,
    schedule: Schedule,
) -> Explanation {
    let explanation = judge_by_rule(ctx, reads, cr, previous, schedule).await;
    with_hint(&ctx.hints, cr, explanation)
}

/// `explanation`, or [`Trigger::Hint`] when it is quiet only because nothing is due yet and a
/// change hint marked `cr` (the sync takes the mark when it reveals). A suspended object, a kept
/// `CreatedOnce` target stay quiet, and keep the mark for when they are not.
fn with_hint(hints: &HintMarks, cr: &FerrVaultSecret, explanation: Explanation) -> Explanation {
    match explanation {
        Explanation::NotDue {
            why: Quiet::RefreshNotDue | Quiet::RefreshDisabled | Quiet::OnChange,
            ..
        } if hints.is_marked(&cr.namespace().unwrap_or_default(), &cr.name_any()) => {
            Explanation::Due(Trigger::Hint)
        }
        Explanation::NotDue { .. } | Explanation::Due(_) => explanation,
    }
}

/// [`judge`] by the rule of [`explain`] alone.
async fn judge_by_rule(
    ctx: &Context,
    reads: &Reads,
    cr: &FerrVaultSecret,
    previous: &FerrVaultSecretStatus,
    schedule: Schedule,
) -> Explanation {
    let stores = &reads.stores;
    let namespace = cr.namespace().unwrap_or_default();
    let stored_connection = stores.connections.get(&namespace, &cr.spec.connection_ref.name);
    let connection = stored_connection.as_ref().and_then(|c| c.valid());
    // A new or changed object syncs at once: it waits for no store's first list.
    if let Some(early) = explain_early(cr, previous, connection_seen(connection)) {
        return early;
    }
    judge_from_stores(ctx, reads, cr, previous, schedule)
        .await
        .unwrap_or(Explanation::Due(Trigger::Inputs))
}

/// [`judge`] once the stores have listed; `None` when a store cannot tell.
async fn judge_from_stores(
    ctx: &Context,
    reads: &Reads,
    cr: &FerrVaultSecret,
    previous: &FerrVaultSecretStatus,
    schedule: Schedule,
) -> Option<Explanation> {
    let stores = &reads.stores;
    stores.connections.wait_until_listed().await.ok()?;
    stores.secret_metadata.wait_until_listed().await.ok()?;
    let namespace = cr.namespace().unwrap_or_default();
    let connection = match cr.spec.connection_ref.kind {
        ConnectionKind::FerrVaultConnection => stores
            .connections
            .get(&namespace, &cr.spec.connection_ref.name)?
            .valid()?
            .clone(),
        ConnectionKind::ClusterFerrVaultConnection => {
            stores.cluster_connections.wait_until_listed().await.ok()?;
            stores.namespaces.wait_until_listed().await.ok()?;
            stored_cluster_connection(stores, cr)?
        }
    };
    let key = ctx.content_hash_key.get(&ctx.client).await.ok()?;
    let inputs = secret_inputs(&connection, stores, key);
    let target = cr.spec.target_name(&cr.name_any()).to_owned();
    let stored = stores.secret_meta(&namespace, &target);
    let stored = stored.as_ref().map(|s| &s.metadata);
    let stored_version = stored.and_then(|m| m.resource_version.as_deref());
    let recorded = previous.target_resource_version.as_deref();
    let arriving = stored_version != recorded
        && recorded.is_some_and(|v| ctx.own_writes.arriving(&namespace, &target, v, Instant::now()));
    let source = ctx
        .changes
        .listed_version(&followed_by(cr), cr.spec.selected_names());
    let seen = Seen {
        inputs: &inputs,
        target_version: if arriving { recorded } else { stored_version },
        source_version: source.as_deref(),
    };
    let explanation = explain(
        cr,
        previous,
        connection_seen(Some(&connection)),
        seen,
        schedule,
        Timestamp::now(),
    );
    let Explanation::NotDue { why, .. } = explanation else {
        return Some(explanation);
    };
    if arriving {
        return Some(Explanation::NotDue {
            why,
            next_in: Some(MIN_REQUEUE),
        });
    }
    if why != Quiet::TargetKept {
        // The rule checked the stored version against the recorded one. A kept target is never
        // written, so its access needs no judging.
        let as_left = KnownTarget::left(stored?, &cr.spec);
        target_access::judge(stores, cr, &target, as_left.secret())
            .await
            .ok()?;
    }
    Some(explanation)
}

/// The outcome of a pass that leaves the object synced: its next refresh exactly when due
/// (`None`: refreshes disabled, wait for a change). Exact, not jittered by the runtime: the wave
/// factor already spreads the waves of different vaults, and jitter would scatter a wave.
pub(super) fn refresh_in(next: Option<Duration>) -> Outcome {
    next.map_or_else(Outcome::done, Outcome::RequeueAfter)
}
