//! The pass with nothing due ([`freshness`]): decided from the watches' stores alone, before
//! anything is read, revealed or written.

use std::time::{Duration, Instant};

use controller_actors::Outcome;
use jiff::Timestamp;
use kube::{Resource, ResourceExt};

use super::{target::KnownTarget, target_access};
use crate::{
    api::{FerrVaultSecret, FerrVaultSecretStatus},
    reconcile::{
        context::Context,
        read::{Reads, secret_inputs},
        rules::schedule::{
            freshness::{self as freshness, Freshness, Observed, Schedule, wave_factor},
            requeue::MIN_REQUEUE,
        },
    },
};

/// When `cr` refreshes, with its resolved `refresh` interval: its wave is its namespace,
/// connection, project and vault (the FerrVaultSecrets one reveal can serve).
pub(super) fn schedule(cr: &FerrVaultSecret, refresh: Duration) -> Schedule {
    let group = format!(
        "{}/{}/{}/{}",
        cr.namespace().unwrap_or_default(),
        cr.spec.connection_ref.name,
        cr.spec.project.as_deref().unwrap_or_default(),
        cr.spec.vault
    );
    Schedule {
        interval: refresh,
        wave: wave_factor(&group),
    }
}

/// `Some(delay to the next refresh)` (itself `None` when refreshes are disabled) when the pass
/// has nothing to do by the rule of [`freshness`], and the target access still holds; `None`
/// when it must sync (including whenever a store cannot tell: the sync reads and reports).
///
/// A pass queued behind the sync that wrote the target can run before the Secret store shows
/// that write ([`OwnWrites::arriving`](crate::reconcile::read::OwnWrites::arriving)):
/// the target is then as left, and the pass looks again after [`MIN_REQUEUE`] to judge it
/// from the store, rather than syncing again (a GET, a reveal and a status write).
pub(super) async fn nothing_due(
    ctx: &Context,
    reads: &Reads,
    cr: &FerrVaultSecret,
    previous: &FerrVaultSecretStatus,
    schedule: Schedule,
) -> Option<Option<Duration>> {
    // A new or changed object syncs at once: it waits for no store's first list.
    if !freshness::synced_here(previous, cr.meta().generation) {
        return None;
    }
    let stores = &reads.stores;
    stores.connections.wait_until_listed().await.ok()?;
    stores.secret_metadata.wait_until_listed().await.ok()?;
    let namespace = cr.namespace().unwrap_or_default();
    let connection = stores.connections.get(&namespace, &cr.spec.connection_ref.name)?;
    let key = ctx.content_hash_key.get(&ctx.client).await.ok()?;
    let inputs = secret_inputs(connection.valid()?, stores, key);
    let target = cr.spec.target_name(&cr.name_any()).to_owned();
    let stored = stores.secret_meta(&namespace, &target);
    let stored = stored.as_ref().map(|s| &s.metadata);
    let stored_version = stored.and_then(|m| m.resource_version.as_deref());
    let recorded = previous.target_resource_version.as_deref();
    let arriving = stored_version != recorded
        && recorded.is_some_and(|v| ctx.own_writes.arriving(&namespace, &target, v, Instant::now()));
    let observed = Observed {
        generation: cr.meta().generation,
        inputs: &inputs,
        target_version: if arriving { recorded } else { stored_version },
    };
    let Freshness::UpToDate(next) = freshness::freshness(previous, observed, schedule, Timestamp::now())
    else {
        return None;
    };
    if arriving {
        return Some(Some(MIN_REQUEUE));
    }
    // The rule checked the stored version against the recorded one.
    let as_left = KnownTarget::left(stored?, cr.spec.target_type());
    target_access::judge(&stores.connections, cr, &target, as_left.secret())
        .await
        .ok()?;
    Some(next)
}

/// The outcome of a pass that leaves the object synced: its next refresh exactly when due
/// (`None`: refreshes disabled, wait for a change). Exact, not jittered by the runtime: the wave
/// factor already spreads the waves of different vaults, and jitter would scatter a wave.
pub(super) fn refresh_in(next: Option<Duration>) -> Outcome {
    next.map_or_else(Outcome::done, Outcome::RequeueAfter)
}
