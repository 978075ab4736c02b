//! The Events of a ClusterFerrVaultSecret's pass, through the publisher every FerrVaultSecret uses
//! ([`EventSink`](crate::reconcile::report::EventSink)): `Synced` when the pass wrote the
//! copies anew, a `SyncFailed` Warning for each failed namespace.
//!
//! # Guarantees
//! - `Synced` (Normal) only when the pass revealed and the content or the provisioned namespaces
//!   changed: a refresh writing the same content to the same namespaces is not news, as for a
//!   FerrVaultSecret.
//! - One `SyncFailed` Warning per failed namespace, for the first
//!   [`MAX_FAILED_NAMESPACES`] (sorted) as the status lists them; its note starts with the
//!   reason and names the namespace. The publisher's ledger folds a repeat into its Event's
//!   series and bounds the Event writes per object.
//! - Notes hold names, counts, reasons, the keyed content hash and the status's failure messages:
//!   never a value or a token.
//! - The object is cluster-scoped: its Events live in namespace `default`, where Kubernetes puts
//!   those of cluster-scoped objects, and are published only when the operator watches `default`
//!   (always, unless `--watch-namespace` lists namespaces without it): its RBAC grants Events in
//!   the watched namespaces only.

use kube::Resource;

use crate::{
    api::{ClusterFerrVaultSecret, ClusterFerrVaultSecretStatus, MAX_FAILED_NAMESPACES},
    reconcile::{
        context::Context,
        read::Reads,
        report::{CLUSTER_SCOPED_EVENTS_NAMESPACE, EventKind},
        rules::status::cluster_secret_status::{CopyState, FanOut},
    },
};

/// Publishes the Events of `pass` over `cr`, whose status before the pass was `previous`, when
/// the operator watches (so may write Events in) [`CLUSTER_SCOPED_EVENTS_NAMESPACE`].
pub(super) fn publish(
    (ctx, reads): (&Context, &Reads),
    cr: &ClusterFerrVaultSecret,
    pass: &FanOut,
    previous: &ClusterFerrVaultSecretStatus,
) {
    if !reads
        .stores
        .secret_metadata
        .covers(CLUSTER_SCOPED_EVENTS_NAMESPACE)
    {
        return;
    }
    let regarding = cr.object_ref(&());
    let (provisioned, failed) = pass.counts();
    let news = pass.content_hash != previous.content_hash || provisioned != previous.provisioned;
    if pass.synced && news {
        let hash = pass.content_hash.as_deref().unwrap_or_default();
        let note = format!(
            "{provisioned} of {} selected namespaces hold the current copy (content {hash})",
            provisioned + failed
        );
        ctx.events.publish(&regarding, EventKind::Synced, note);
    }
    let failures = pass.copies.iter().filter_map(|(namespace, state)| match state {
        CopyState::Failed { reason, message } => Some((namespace, reason, message)),
        CopyState::Provisioned => None,
    });
    for (namespace, reason, message) in failures.take(MAX_FAILED_NAMESPACES) {
        let note = format!("{reason}: namespace {namespace}: {message}");
        ctx.events.publish(&regarding, EventKind::SyncFailed, note);
    }
}
