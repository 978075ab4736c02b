use std::time::Duration;

use tokio::sync::mpsc;

use super::*;
use crate::{
    directory::ActorKind,
    reconciler::Outcome,
    test_support::{Scripted, Step, key, open_fence, spawner},
};

/// Stands in for the work queue: forwards every `Done` to the test.
impl DoneSink for mpsc::UnboundedSender<(u64, Finish)> {
    fn done(&self, run: u64, _: ObjectKey, finish: Finish) {
        // The test may have finished reading.
        let _ = self.send((run, finish));
    }
}

fn recorder() -> (Arc<dyn DoneSink>, mpsc::UnboundedReceiver<(u64, Finish)>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Arc::new(tx), rx)
}

async fn next_done(rx: &mut mpsc::UnboundedReceiver<(u64, Finish)>) -> (u64, Finish) {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("a Done arrived (likely lost otherwise)")
        .expect("recorder alive")
}

async fn worker(rec: Arc<Scripted>, timeout: Duration, fence: Fence) -> CountedRef<WorkerMsg> {
    let args = WorkerArgs {
        reconciler: rec,
        timeout,
        fence,
    };
    let (spawner, _, _) = spawner();
    spawner
        .spawn("test/worker-0", ActorKind::Worker, Worker, args)
        .await
        .expect("worker spawns")
}

#[tokio::test]
async fn done_guard_should_report_a_lost_dispatch_when_dropped_unstarted() {
    let (queue, mut rx) = recorder();
    drop(Job {
        key: key("a"),
        attempt: 0,
        guard: DoneGuard::new(7, key("a"), queue),
    });
    assert_eq!(next_done(&mut rx).await, (7, Finish::Aborted(AbortCause::Lost)));
}

#[tokio::test]
async fn done_guard_should_report_once_when_completed() {
    let (queue, mut rx) = recorder();
    DoneGuard::new(1, key("a"), queue.clone()).complete(Finish::TimedOut);
    DoneGuard::new(2, key("b"), queue).complete(Finish::Reconciled(Outcome::done()));
    assert_eq!(next_done(&mut rx).await, (1, Finish::TimedOut));
    assert_eq!(next_done(&mut rx).await, (2, Finish::Reconciled(Outcome::done())));
    assert!(
        rx.try_recv().is_err(),
        "no second report from the disarmed guards"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_should_report_killed_when_killed_mid_reconcile() {
    let (queue, mut rx) = recorder();
    let rec = Scripted::new(|_, _, _| Step::IgnoreCancel(Duration::from_secs(60)));
    let w = worker(rec.clone(), Duration::from_secs(60), open_fence()).await;
    w.cast(WorkerMsg::Run(Job {
        key: key("a"),
        attempt: 0,
        guard: DoneGuard::new(3, key("a"), queue),
    }))
    .expect("worker alive");
    crate::test_support::eventually(Duration::from_secs(10), "the reconcile started", || {
        rec.calls_of("a") == 1
    })
    .await;
    w.cell().kill();
    assert_eq!(next_done(&mut rx).await, (3, Finish::Aborted(AbortCause::Killed)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_should_report_a_panicking_reconcile() {
    let (queue, mut rx) = recorder();
    let w = worker(
        Scripted::new(|_, _, _| Step::Panic),
        Duration::from_secs(60),
        open_fence(),
    )
    .await;
    w.cast(WorkerMsg::Run(Job {
        key: key("a"),
        attempt: 0,
        guard: DoneGuard::new(4, key("a"), queue),
    }))
    .expect("worker alive");
    assert_eq!(
        next_done(&mut rx).await,
        (4, Finish::Aborted(AbortCause::Panicked))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_should_cancel_the_token_and_report_a_timeout_at_the_deadline() {
    let (queue, mut rx) = recorder();
    let token = Arc::new(std::sync::Mutex::new(None));
    let seen = token.clone();
    let rec = Scripted::new(move |_, _, ctx| {
        *seen.lock().unwrap() = Some(ctx.cancel.clone());
        Step::IgnoreCancel(Duration::from_secs(60))
    });
    let w = worker(rec, Duration::from_millis(100), open_fence()).await;
    w.cast(WorkerMsg::Run(Job {
        key: key("a"),
        attempt: 2,
        guard: DoneGuard::new(5, key("a"), queue),
    }))
    .expect("worker alive");
    assert_eq!(next_done(&mut rx).await, (5, Finish::TimedOut));
    let token = token.lock().unwrap().clone().expect("the reconcile ran");
    assert!(
        token.is_cancelled(),
        "the context's token is cancelled at the deadline"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_should_cancel_the_token_and_report_fenced_when_the_fence_lapses() {
    let (queue, mut rx) = recorder();
    let token = Arc::new(std::sync::Mutex::new(None));
    let seen = token.clone();
    let rec = Scripted::new(move |_, _, ctx| {
        *seen.lock().unwrap() = Some(ctx.cancel.clone());
        Step::IgnoreCancel(Duration::from_secs(60))
    });
    let fence = Fence::new();
    let lapses_at = Instant::now() + Duration::from_millis(300);
    fence.extend_to(lapses_at);
    let w = worker(rec, Duration::from_secs(60), fence).await;
    w.cast(WorkerMsg::Run(Job {
        key: key("a"),
        attempt: 0,
        guard: DoneGuard::new(6, key("a"), queue),
    }))
    .expect("worker alive");
    assert_eq!(next_done(&mut rx).await, (6, Finish::Aborted(AbortCause::Fenced)));
    assert!(
        Instant::now() >= lapses_at,
        "cancelled at the fence's instant, not before"
    );
    let token = token.lock().unwrap().clone().expect("the reconcile ran");
    assert!(
        token.is_cancelled(),
        "the context's token is cancelled when this replica can no longer prove it leads"
    );
}
