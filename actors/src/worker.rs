//! A worker: runs one reconcile at a time, in a task it owns, under a deadline.
//!
//! Receives [`WorkerMsg::Run`] from its work queue (its supervisor). Sends nothing itself: the
//! job's [`DoneGuard`] reports the end of the run straight to the queue (through the
//! [`DoneSink`] seam).
//!
//! # Guarantees
//! - The queue hears exactly one `Done` per dispatched run: with the outcome, `TimedOut` at
//!   the deadline (the reconcile future is dropped and its cancellation token cancelled),
//!   `Aborted(Fenced)` when the write fence lapses first (same cancellation: this replica can
//!   no longer prove it leads, see [`crate::fence`]), or `Aborted` when the run panics, its
//!   task is aborted, its worker is killed, or the `Run` message is dropped unread with a dead
//!   mailbox.
//! - The reconcile never runs inside `handle`, so the worker's mailbox stays responsive and a
//!   kill takes effect even when the reconcile blocks.
//!
//! # Failure
//! Dropping the worker's state (kill, panic, stop) cancels the token and aborts the task. The
//! work queue replaces killed or failed workers (see `work_queue/pool.rs`).

use std::{sync::Arc, time::Duration};

use ractor::ActorProcessingErr;
use tokio::{task::AbortHandle, time::Instant};
use tokio_util::sync::{CancellationToken, DropGuard};
use tracing::Instrument;

use crate::{
    fence::Fence,
    key::ObjectKey,
    mailbox::CountedRef,
    queue_state::{AbortCause, Finish},
    reconciler::{ReconcileContext, SharedReconciler},
    seams::DoneSink,
    spawn::RuntimeActor,
};

/// Messages to a worker.
pub(crate) enum WorkerMsg {
    /// From the work queue: reconcile `job.key` now (the queue only sends this to an idle worker).
    Run(Job),
}

/// One dispatched run of one key.
pub(crate) struct Job {
    /// The key to reconcile.
    pub key: ObjectKey,
    /// Failures in a row before this attempt.
    pub attempt: u32,
    /// Reports the end of this run to the queue, whatever happens.
    pub guard: DoneGuard,
}

/// Reports `Done` for one run to the work queue exactly once: explicitly with
/// [`DoneGuard::complete`], or on drop with `Aborted` (panicking → `Panicked`, else `Killed` once
/// the run started, `Lost` before).
pub(crate) struct DoneGuard {
    run: u64,
    key: Option<ObjectKey>,
    started: bool,
    queue: Arc<dyn DoneSink>,
}

impl DoneGuard {
    /// A guard for run `run` of `key`, reporting to `queue`.
    pub(crate) fn new(run: u64, key: ObjectKey, queue: Arc<dyn DoneSink>) -> Self {
        Self {
            run,
            key: Some(key),
            started: false,
            queue,
        }
    }

    /// Report `finish` and disarm.
    pub(crate) fn complete(mut self, finish: Finish) {
        self.report(finish);
    }

    fn report(&mut self, finish: Finish) {
        if let Some(key) = self.key.take() {
            self.queue.done(self.run, key, finish);
        }
    }
}

impl Drop for DoneGuard {
    fn drop(&mut self) {
        let cause = match (std::thread::panicking(), self.started) {
            (true, _) => AbortCause::Panicked,
            (false, true) => AbortCause::Killed,
            (false, false) => AbortCause::Lost,
        };
        self.report(Finish::Aborted(cause));
    }
}

/// Worker configuration.
pub(crate) struct WorkerArgs {
    /// The controller's reconciler.
    pub reconciler: SharedReconciler,
    /// `--reconcile-timeout`.
    pub timeout: Duration,
    /// Runs are cancelled when it lapses.
    pub fence: Fence,
}

/// Worker state.
pub(crate) struct WorkerState {
    args: WorkerArgs,
    /// The current (or last) run: dropping it aborts the task and cancels its token.
    current: Option<RunningTask>,
}

/// Owns a running reconcile task: drop aborts it and cancels its token.
struct RunningTask {
    abort: AbortHandle,
    _cancel: DropGuard,
}

impl Drop for RunningTask {
    fn drop(&mut self) {
        self.abort.abort();
    }
}

/// The worker actor.
pub(crate) struct Worker;

impl RuntimeActor for Worker {
    type Msg = WorkerMsg;
    type State = WorkerState;
    type Arguments = WorkerArgs;

    async fn pre_start(
        &self,
        _: CountedRef<WorkerMsg>,
        args: WorkerArgs,
    ) -> Result<WorkerState, ActorProcessingErr> {
        Ok(WorkerState { args, current: None })
    }

    async fn handle(
        &self,
        _: CountedRef<WorkerMsg>,
        msg: WorkerMsg,
        state: &mut WorkerState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            WorkerMsg::Run(job) => state.start(job),
        }
        Ok(())
    }
}

// === impl WorkerState ===

impl WorkerState {
    fn start(&mut self, mut job: Job) {
        job.guard.started = true;
        let token = CancellationToken::new();
        let deadline = Instant::now() + self.args.timeout;
        let ctx = ReconcileContext {
            deadline,
            cancel: token.clone(),
            attempt: job.attempt,
        };
        // controller-runtime's reconcile log context: every line of this run carries these keys.
        let span = tracing::info_span!(
            "reconcile",
            controller = job.key.controller,
            namespace = job.key.namespace.as_deref().unwrap_or_default(),
            name = %job.key.name,
            reconcileID = %uuid::Uuid::new_v4(),
        );
        let reconcile = self.args.reconciler.clone().reconcile_boxed(job.key, ctx);
        let lapsed = self.args.fence.lapsed();
        let guard = job.guard;
        let task_token = token.clone();
        let task = tokio::spawn(
            async move {
                let finish = tokio::select! {
                    biased;
                    outcome = reconcile => Finish::Reconciled(outcome),
                    () = tokio::time::sleep_until(deadline) => {
                        task_token.cancel();
                        Finish::TimedOut
                    }
                    () = lapsed => {
                        task_token.cancel();
                        Finish::Aborted(AbortCause::Fenced)
                    }
                };
                guard.complete(finish);
            }
            .instrument(span),
        );
        self.current = Some(RunningTask {
            abort: task.abort_handle(),
            _cancel: token.drop_guard(),
        });
    }
}

#[cfg(test)]
mod tests;
