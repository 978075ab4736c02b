//! What a controller plugs into the runtime: a [`Reconciler`] and the [`Outcome`] it reports.
//!
//! The runtime calls `reconcile` for one key at a time per key (never two concurrent calls for
//! the same key), under a deadline carried by the [`ReconcileContext`].

use std::{future::Future, sync::Arc, time::Duration};

use futures::future::BoxFuture;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::key::ObjectKey;

/// What one reconcile of one key concluded; the work queue turns it into the key's next schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The object is in its desired state. Per-key backoff is forgotten. With `refresh_after`
    /// the key is reconciled again after that delay (jittered ±10%, `Refresh` lane), e.g.
    /// "done, refresh in 1h"; with `None` it waits for the next watch event.
    Done {
        /// When to look again even without a change.
        refresh_after: Option<Duration>,
    },
    /// Not finished, nothing failed: run again after this delay (`Refresh` lane, no backoff).
    RequeueAfter(Duration),
    /// Failed: retried with per-key exponential backoff (`Changed` lane).
    Error {
        /// A fixed, bounded reason (metric label, condition reason). Never an object name.
        reason: &'static str,
        /// Human-readable detail; must not contain secret values.
        message: String,
    },
    /// A server throttled us: retried on the separate rate-limited backoff path
    /// (5s doubling to 5m, jittered over its lower half), but never before `retry_after`.
    RateLimited {
        /// The server's `Retry-After`, if it sent one.
        retry_after: Option<Duration>,
    },
}

impl Outcome {
    /// Done, wait for the next change.
    pub fn done() -> Self {
        Outcome::Done { refresh_after: None }
    }

    /// Done, and look again after `interval` even without a change.
    pub fn done_refresh_in(interval: Duration) -> Self {
        Outcome::Done {
            refresh_after: Some(interval),
        }
    }

    /// The controller-runtime `result` label of `controller_runtime_reconcile_total`: a done
    /// reconcile with a timed refresh is `requeue_after`, as a Go reconciler returning
    /// `RequeueAfter` is; a throttled one is retried on the rate-limited path, `requeue`.
    pub fn result_label(&self) -> &'static str {
        match self {
            Outcome::Done { refresh_after: None } => "success",
            Outcome::Done {
                refresh_after: Some(_),
            }
            | Outcome::RequeueAfter(_) => "requeue_after",
            Outcome::Error { .. } => "error",
            Outcome::RateLimited { .. } => "requeue",
        }
    }
}

/// What a reconcile gets besides its key.
///
/// # Guarantees
/// `cancel` is cancelled when `deadline` passes (and on shutdown); a reconcile that ignores it
/// is dropped at its next await point, and one that blocks past the deadline plus grace has its
/// worker killed and replaced.
#[derive(Clone, Debug)]
pub struct ReconcileContext {
    /// When the runtime gives up on this reconcile (`--reconcile-timeout` after its start).
    pub deadline: Instant,
    /// Cancelled at the deadline or on shutdown; long calls should select on it.
    pub cancel: CancellationToken,
    /// How many times in a row this key failed before this attempt (0 on a first attempt).
    pub attempt: u32,
}

/// A controller's reconcile logic. Implement with `async fn reconcile(...) -> Outcome`.
///
/// # Guarantees
/// Never called twice concurrently for the same key. A panic is caught: the key is retried with
/// backoff and the worker is restarted (counted in the tree and metrics).
pub trait Reconciler: Send + Sync + 'static {
    /// Bring the object named by `key` to its desired state.
    fn reconcile(&self, key: &ObjectKey, ctx: &ReconcileContext) -> impl Future<Output = Outcome> + Send;
}

/// Object-safe form of [`Reconciler`] (implemented for every `Reconciler`), so controllers of
/// different types share one runtime.
pub(crate) trait DynReconciler: Send + Sync + 'static {
    /// `reconcile`, boxed and owning its arguments.
    fn reconcile_boxed(self: Arc<Self>, key: ObjectKey, ctx: ReconcileContext)
    -> BoxFuture<'static, Outcome>;
}

impl<R: Reconciler> DynReconciler for R {
    fn reconcile_boxed(
        self: Arc<Self>,
        key: ObjectKey,
        ctx: ReconcileContext,
    ) -> BoxFuture<'static, Outcome> {
        Box::pin(async move { self.reconcile(&key, &ctx).await })
    }
}

/// A shared, type-erased reconciler.
pub(crate) type SharedReconciler = Arc<dyn DynReconciler>;
