//! One connection's poller: a task that calls `GET /operator/secrets/list` once per interval
//! through the connection's credential (and so its limiter: it spends the token's one budget),
//! records the answer in the [`ChangeFeed`](super::ChangeFeed), and re-queues the
//! FerrVaultSecrets of the connection whose selection's versions moved (for a
//! ClusterFerrVaultConnection, those of every namespace using it, and its
//! ClusterFerrVaultSecrets: one `list` serves them all).
//!
//! Started by [`spawn`] (the connection reconciler, after [`Plan::Start`](super::Plan::Start));
//! aborted by the feed (spec change, suspend, deletion, loss of leadership).
//!
//! # Guarantees
//! - One `list` per interval, however many FerrVaultSecrets use the connection; a tick missed
//!   while waiting on the limiter is delayed, never made up in a burst.
//! - Only objects whose hash of selected versions differs from their
//!   `status.observedSourceVersion` are queued; nothing is revealed here.
//! - A 404/405 ends the poller (`record_unsupported`) and queues the connection once, for its
//!   condition; an answer over the decoder's bounds is refused and shown on the connection
//!   (`ResponseTooLarge`); any failure keeps the last answer and tries at the next tick.
//! - The connection is read from its store at each tick: a deleted one ends the poller.
//!
//! # Failure
//! A panic ends this task alone; the connection's next pass sees the record and keeps it
//! (`Plan::Keep`): such a poller is replaced on the next spec change or leadership term.

use std::{collections::BTreeSet, sync::Arc, time::Duration};

use controller_actors::ObjectKey;
use kube::ResourceExt;
use tokio::time::{Instant, MissedTickBehavior};
use tracing::{Instrument, info, info_span};

use super::{
    feed::{ConnectionId, PollSpec, Standing, followed_by},
    metrics::PollResult,
};
use crate::{
    api::{ConnectionKind, FerrVaultConnection, FerrVaultSecretSpec},
    ferrvault::{FerrVaultError, Inventory},
    reconcile::{
        connection::access,
        context::Context,
        read::Reads,
        rules::schedule::source_version::{concerns, listed_version},
        secret::{cluster_secret_key, stored_view},
        settings::SECRET_CONTROLLER,
    },
};

/// Bound of one `list` (as the probe's), waiting on the limiter included.
const LIST_TIMEOUT: Duration = Duration::from_secs(15);

/// Starts `id`'s poller with `spec` and records it in the feed; `own` is the connection's own
/// key, queued when its `ChangeDetection` condition must change.
pub(crate) fn spawn(
    ctx: &Arc<Context>,
    reads: &Arc<Reads>,
    (id, own): (ConnectionId, ObjectKey),
    spec: PollSpec,
) {
    let span = info_span!("change_detection", connection = %format!("{}/{}", id.0, id.1));
    let poller = run(ctx.clone(), reads.clone(), (id.clone(), own), spec.interval);
    let task = tokio::spawn(poller.instrument(span));
    ctx.changes.started(id, spec, task.abort_handle());
}

/// The poller's loop (see the module).
async fn run(ctx: Arc<Context>, reads: Arc<Reads>, (id, own): (ConnectionId, ObjectKey), interval: Duration) {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(connection) = followed_connection(&reads, &id) else {
            return;
        };
        match list(&ctx, &reads, &connection).await {
            Ok(inventory) => {
                let first = matches!(ctx.changes.standing(&id), Standing::Waiting | Standing::TooLarge);
                if let Some(changed) = ctx.changes.record(&id, inventory.entries) {
                    requeue(&ctx, &reads, &id, &changed);
                }
                if first {
                    ctx.changes.enqueue(own.clone());
                }
            }
            Err(Some(error)) if error.is_unsupported() => {
                info!("the server has no list: the connection polls");
                ctx.changes.record_unsupported(&id);
                ctx.changes.enqueue(own.clone());
                return;
            }
            Err(Some(error)) if error.is_response_too_large() => {
                info!("list answer over its bounds, refused; the last versions stay");
                if ctx.changes.record_too_large(&id) {
                    ctx.changes.enqueue(own.clone());
                }
            }
            Err(error) => {
                let reason = error.as_ref().map_or("access", FerrVaultError::reason);
                info!(reason, "list failed, the last versions stay");
                ctx.changes.metrics().count_poll(PollResult::Error);
            }
        }
    }
}

/// `id`'s connection as its users read through it: a FerrVaultConnection from its store, or a
/// ClusterFerrVaultConnection's view; `None` once it is gone or invalid.
fn followed_connection(reads: &Reads, id: &ConnectionId) -> Option<FerrVaultConnection> {
    if id.0.is_empty() {
        return stored_view(&reads.stores, &id.1);
    }
    let stored = reads.stores.connections.get(&id.0, &id.1)?;
    stored.valid().cloned()
}

/// One `list` through `connection`'s endpoint and credential; `Err(None)` when those cannot be
/// had (the connection's own pass reports why).
async fn list(
    ctx: &Context,
    reads: &Reads,
    connection: &FerrVaultConnection,
) -> Result<Inventory, Option<FerrVaultError>> {
    let deadline = Instant::now() + LIST_TIMEOUT;
    let endpoint = access::endpoint(&reads.values, &ctx.ferrvault, connection)
        .await
        .map_err(|_| None)?;
    let credential = access::credential(&reads.values, &ctx.ferrvault, connection, &endpoint, deadline)
        .await
        .map_err(|_| None)?;
    ctx.ferrvault
        .list(&endpoint, &credential, deadline)
        .await
        .map_err(Some)
}

/// Queues the FerrVaultSecrets and ClusterFerrVaultSecrets following `id` that `changed`
/// concerns and whose selection's versions differ from what their last sync recorded.
fn requeue(ctx: &Context, reads: &Reads, id: &ConnectionId, changed: &[String]) {
    let Some(listed) = ctx.changes.listed(id) else {
        return;
    };
    let changed: BTreeSet<&str> = changed.iter().map(String::as_str).collect();
    let moved = |spec: &FerrVaultSecretSpec, recorded: Option<&str>| {
        let selected = spec.selected_names();
        concerns(selected, &changed) && recorded != Some(listed_version(selected, &listed).as_str())
    };
    for object in reads.stores.secrets.state() {
        let Some(cr) = object.valid() else { continue };
        let recorded = cr
            .status
            .as_ref()
            .and_then(|s| s.observed_source_version.as_deref());
        if followed_by(cr) == *id && moved(&cr.spec, recorded) {
            let namespace = cr.namespace().unwrap_or_default();
            ctx.changes.enqueue(ObjectKey::namespaced(
                SECRET_CONTROLLER,
                &namespace,
                cr.name_any(),
            ));
        }
    }
    if !id.0.is_empty() {
        return;
    }
    for object in reads.stores.cluster_secrets.state() {
        let Some(cr) = object.valid() else { continue };
        let spec = &cr.spec.secret_spec;
        let ours = spec.connection_ref.kind == ConnectionKind::ClusterFerrVaultConnection
            && spec.connection_ref.name == id.1;
        let recorded = cr
            .status
            .as_ref()
            .and_then(|s| s.observed_source_version.as_deref());
        if ours && moved(spec, recorded) {
            ctx.changes.enqueue(cluster_secret_key(&cr.name_any()));
        }
    }
}
