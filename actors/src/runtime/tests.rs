use std::time::Duration;

use super::fixtures::{FakeLeadership, FakeWatch, FakeWatchMsg, Running, quick_builder};
use super::*;
use crate::{
    reconciler::Outcome,
    test_support::{Scripted, Step, eventually},
};

const MS: fn(u64) -> Duration = Duration::from_millis;
const HANG: Duration = Duration::from_secs(20);

fn done_quickly() -> std::sync::Arc<Scripted> {
    Scripted::new(|_, _, _| Step::Return(MS(2), Outcome::done()))
}

/// A runtime reconciling with `rec` over a fake watch "Things", its builder adjusted by `tune`.
fn start_watching(
    rec: std::sync::Arc<Scripted>,
    tune: impl FnOnce(RuntimeBuilder) -> RuntimeBuilder,
) -> (Running, FakeWatch) {
    let watch = FakeWatch::named("Things");
    let w = watch.clone();
    let running = Running::start(|r| tune(quick_builder(rec, r).watch(Box::new(w))));
    (running, watch)
}

/// [`start_watching`], once the watch delivered the key `first`.
async fn start_with_first_key(
    rec: std::sync::Arc<Scripted>,
    first: &str,
    tune: impl FnOnce(RuntimeBuilder) -> RuntimeBuilder,
) -> (Running, FakeWatch) {
    let (running, watch) = start_watching(rec, tune);
    eventually(HANG, "the watcher started", || watch.emit(first)).await;
    (running, watch)
}

/// [`start_watching`] with a fake election, once this replica won it.
async fn start_leading(
    rec: std::sync::Arc<Scripted>,
    tune: impl FnOnce(RuntimeBuilder) -> RuntimeBuilder,
) -> (Running, FakeWatch, FakeLeadership) {
    let leadership = FakeLeadership::default();
    let l = leadership.clone();
    let (running, watch) = start_watching(rec, |b| {
        tune(b).leader_election(LeaderElection::Enabled(std::sync::Arc::new(l)))
    });
    eventually(HANG, "leadership spawned", || leadership.hooks_ready()).await;
    leadership.lead().await;
    (running, watch, leadership)
}

/// Emit `k2` until the controllers reconcile it: after a hand-over the new watcher's first list
/// would resend everything, so emulate that until the new queue is up.
async fn runs_again(watch: &FakeWatch, rec: &Scripted, what: &str) {
    eventually(HANG, what, || {
        watch.emit("k2");
        rec.calls_of("k2") >= 1
    })
    .await;
}

/// Check liveness every 50ms for `span`; fail on the first 503 with its body.
async fn stays_live(running: &Running, span: Duration, what: &str) {
    let end = tokio::time::Instant::now() + span;
    while tokio::time::Instant::now() < end {
        let live = running.health.liveness();
        assert!(live.ok, "{what}: liveness failed:\n{}", live.body);
        tokio::time::sleep(MS(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn runtime_should_reconcile_watched_keys_and_show_them_in_tree_and_metrics() {
    let rec = done_quickly();
    let (running, watch) = start_with_first_key(rec.clone(), "a", |b| b).await;
    for i in 0..10 {
        watch.emit(&format!("k{i}"));
    }
    eventually(HANG, "every watched key was reconciled", || {
        let idle = running
            .queues
            .stats("test")
            .is_some_and(|s| s.processing == 0 && s.depth == 0);
        idle && (0..10).all(|i| rec.calls_of(&format!("k{i}")) == 1) && rec.calls_of("a") == 1
    })
    .await;
    eventually(HANG, "readiness reports a synced leader", || {
        running.health.readiness().ok
    })
    .await;
    assert!(running.health.readiness().body.contains("ok role: leader"));
    let text = running.tree.to_text();
    for node in [
        "supervisor [supervisor]",
        "health [health]",
        "controllers [controllers]",
        "test/queue [work_queue]",
        "test/worker-1 [worker]",
        "Things [watcher]",
    ] {
        assert!(text.contains(node), "tree lacks {node}:\n{text}");
    }
    assert!(text.contains("synced=true connected=true"), "{text}");
    let json = running.tree.to_json();
    assert_eq!(json["name"], "supervisor");
    assert_eq!(
        json["children"][0]["parent"], json["id"],
        "children name their parent"
    );
    eventually(HANG, "the health tick refreshed the gauges", || {
        let m = running.metrics_text();
        m.contains("leader_election_master_status{name=\"disabled\"} 1")
            && m.contains("actor_mailbox_handled_messages{actor=\"test/queue\"}")
    })
    .await;
    let keys = running
        .queues
        .keys("test")
        .await
        .expect("the queue answers while leading");
    assert!(keys.is_empty(), "healthy idle keys are forgotten: {keys:?}");
    running.shutdown().await.expect("graceful shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn standby_should_stay_live_while_another_replica_leads() {
    let leadership = FakeLeadership::default();
    let l = leadership.clone();
    let running = Running::start(|r| {
        quick_builder(done_quickly(), r).leader_election(LeaderElection::Enabled(std::sync::Arc::new(l)))
    });
    stays_live(&running, Duration::from_secs(3), "standby").await;
    let ready = running.health.readiness();
    assert!(
        ready.ok && ready.body.contains("ok role: standby"),
        "{}",
        ready.body
    );
    assert!(
        running.tree.to_text().lines().all(|l| !l.contains("controllers")),
        "no controllers while standby"
    );
    running.shutdown().await.expect("graceful shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn idle_leader_should_stay_live() {
    let running = Running::start(|r| quick_builder(done_quickly(), r));
    stays_live(&running, Duration::from_secs(3), "idle leader").await;
    running.shutdown().await.expect("graceful shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leader_with_only_slow_refresh_objects_should_stay_live() {
    let rec =
        Scripted::new(|_, _, _| Step::Return(MS(1), Outcome::done_refresh_in(Duration::from_secs(3600))));
    let (running, watch) = start_with_first_key(rec.clone(), "k0", |b| b).await;
    for i in 1..20 {
        watch.emit(&format!("k{i}"));
    }
    eventually(HANG, "all keys reconciled once", || rec.total_calls() == 20).await;
    stays_live(&running, Duration::from_secs(3), "only hourly refreshes pending").await;
    let stats = running.queues.stats("test").expect("queue");
    assert_eq!((stats.depth, stats.delayed), (0, 20));
    running.shutdown().await.expect("graceful shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leader_with_due_work_and_no_progress_should_fail_within_threshold_plus_a_probe_period() {
    // One worker held by a reconcile that never ends before its (long) deadline; a second key waits.
    let rec = Scripted::new(|_, _, _| Step::IgnoreCancel(Duration::from_secs(3600)));
    let (running, watch) = start_with_first_key(rec.clone(), "hog", |b| {
        b.max_concurrent_reconciles(1)
            .reconcile_timeout(Duration::from_secs(3600))
    })
    .await;
    eventually(HANG, "the first key holds the only worker", || {
        rec.calls_of("hog") == 1
    })
    .await;
    watch.emit("waiting");
    let due_at = tokio::time::Instant::now();
    eventually(HANG, "liveness failed", || !running.health.liveness().ok).await;
    let took = due_at.elapsed();
    assert!(
        // threshold + one probe period, plus slack for polling and a loaded machine.
        took <= Duration::from_millis(1000 + 100 + 500),
        "failed after {took:?}, want ≤ threshold + probe"
    );
    assert!(took >= Duration::from_millis(900), "failed too early: {took:?}");
    let body = running.health.liveness().body;
    assert!(body.contains("FAIL progress: test: 1 ready"), "{body}");
    running.shutdown().await.expect("graceful shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cpu_saturated_but_progressing_pool_should_stay_live() {
    let rec = Scripted::new(|_, _, _| Step::Block(MS(40)));
    let (running, watch) = start_with_first_key(rec.clone(), "k0", |b| b).await;
    let end = tokio::time::Instant::now() + Duration::from_secs(3);
    let mut i = 0;
    while tokio::time::Instant::now() < end {
        for _ in 0..20 {
            i += 1;
            watch.emit(&format!("k{}", i % 200));
        }
        let live = running.health.liveness();
        assert!(live.ok, "saturated pool: {}", live.body);
        tokio::time::sleep(MS(50)).await;
    }
    assert!(
        running.queues.stats("test").expect("queue").depth > 0,
        "the pool really was saturated"
    );
    running.shutdown().await.expect("graceful shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn a_reconcile_ignoring_cancellation_should_be_recovered_while_health_stays_live() {
    let rec = Scripted::new(|name, attempt, _| match (name, attempt) {
        ("stuck", 0) => Step::Block(Duration::from_secs(3)), // 10x the 300ms deadline
        _ => Step::Return(MS(5), Outcome::done()),
    });
    let (running, watch) = start_with_first_key(rec.clone(), "stuck", |b| b).await;
    let mut round = 0;
    while rec.calls_of("stuck") < 2 {
        round += 1;
        watch.emit(&format!("other{round}"));
        let live = running.health.liveness();
        assert!(
            live.ok,
            "health must stay live while recovery works:\n{}",
            live.body
        );
        tokio::time::sleep(MS(100)).await;
        assert!(round < 100, "the stuck key was never retried");
    }
    assert!(
        rec.calls_of(&format!("other{}", round - 5)) == 1,
        "other keys kept completing"
    );
    let text = running.tree.to_text();
    assert!(
        text.contains("restarts=1 last=\"stuck on test:ns/stuck"),
        "{text}"
    );
    assert!(
        running
            .metrics_text()
            .contains("actor_restarts_total{actor=\"test/worker-")
    );
    running.shutdown().await.expect("graceful shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn health_should_fail_with_a_reason_when_a_stuck_worker_cannot_be_replaced() {
    let rec = Scripted::new(|_, _, _| Step::Block(Duration::from_secs(4)));
    let (running, _watch) =
        start_with_first_key(rec.clone(), "stuck", |b| b.max_abandoned_reconciles(0)).await;
    eventually(HANG, "liveness failed", || !running.health.liveness().ok).await;
    let body = running.health.liveness().body;
    assert!(
        body.contains("FAIL workers: test/worker-") && body.contains("stuck on test:ns/stuck"),
        "{body}"
    );
    assert!(body.contains("not replaced"), "{body}");
    running.shutdown().await.expect("graceful shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn panics_in_a_reconcile_and_in_a_watcher_should_be_survived_and_counted() {
    let rec = Scripted::new(|name, attempt, _| match (name, attempt) {
        ("boom", 0) => Step::Panic,
        _ => Step::Return(MS(1), Outcome::done()),
    });
    let (running, watch) = start_with_first_key(rec.clone(), "boom", |b| b).await;
    eventually(HANG, "the panicking key was retried", || {
        rec.calls_of("boom") == 2
    })
    .await;
    let first = watch.actor.lock().unwrap().clone().expect("watcher");
    first.cast(FakeWatchMsg::Panic).expect("watcher alive");
    eventually(HANG, "the watcher was restarted", || {
        watch
            .actor
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(|a| a.cell().get_id() != first.cell().get_id())
    })
    .await;
    watch.emit("after");
    eventually(HANG, "keys flow through the new watcher", || {
        rec.calls_of("after") == 1
    })
    .await;
    let text = running.tree.to_text();
    assert!(
        text.contains("Things [watcher]") && text.contains("fake watcher panicked"),
        "{text}"
    );
    assert!(text.contains("reconcile of test:ns/boom panicked"), "{text}");
    let metrics = running.metrics_text();
    assert!(
        metrics.contains("actor_restarts_total{actor=\"Things\"} 1"),
        "{metrics}"
    );
    assert!(running.health.liveness().ok);
    running.shutdown().await.expect("graceful shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_restart_storm_should_escalate_and_end_run_with_an_error() {
    let watch = FakeWatch {
        fail_on_start: true,
        ..FakeWatch::named("Broken")
    };
    let running = Running::start(|r| {
        quick_builder(done_quickly(), r)
            .watch(Box::new(watch))
            .restart_policy(crate::restart_policy::RestartPolicy {
                max_restarts: 3,
                window: Duration::from_secs(30),
                backoff_base: MS(10),
                backoff_max: MS(50),
            })
    });
    let health = running.health.clone();
    let mut running = running;
    let result = tokio::time::timeout(HANG, &mut running.run)
        .await
        .expect("run ended (likely deadlocked)")
        .expect("no panic");
    let Err(err @ RuntimeError::Escalated(_)) = result else {
        panic!("expected escalation, got {result:?}");
    };
    assert_eq!(err.exit_code(), 3);
    assert!(
        err.to_string()
            .contains("4 restarts within 30s (limit 3): Broken×4"),
        "{err}"
    );
    let live = health.liveness();
    assert!(
        !live.ok && live.body.contains("FAIL escalation: supervisor escalated"),
        "{}",
        live.body
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shutdown_should_let_in_flight_reconciles_finish() {
    let rec = Scripted::new(|_, _, _| Step::Return(MS(250), Outcome::done()));
    let (running, _watch) = start_with_first_key(rec.clone(), "slow", |b| {
        b.reconcile_timeout(Duration::from_secs(5))
    })
    .await;
    eventually(HANG, "the reconcile started", || rec.calls_of("slow") == 1).await;
    let stats = running.queues.clone();
    running.shutdown().await.expect("graceful shutdown");
    assert_eq!(*rec.overlap.lock().unwrap(), None);
    let s = stats.stats("test").expect("queue");
    assert!(!s.active, "the queue stopped");
    assert!(rec.calls.lock().unwrap().len() == 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn losing_leadership_should_stop_the_controllers_before_the_hook_returns() {
    let rec = Scripted::new(|_, _, _| Step::Return(MS(300), Outcome::done()));
    let (running, watch, leadership) =
        start_leading(rec.clone(), |b| b.reconcile_timeout(Duration::from_secs(5))).await;
    eventually(HANG, "the watcher started", || watch.emit("k")).await;
    eventually(HANG, "the reconcile started", || rec.calls_of("k") == 1).await;
    leadership.lose().await;
    let s = running.queues.stats("test").expect("queue");
    assert!(!s.active, "the queue stopped before stopped_leading returned");
    assert_eq!(s.counters.completed, 0, "stats reset");
    assert!(
        running.tree.to_text().lines().all(|l| !l.contains("controllers")),
        "{}",
        running.tree.to_text()
    );
    assert!(running.queues.keys("test").await.is_none());
    eventually(HANG, "the standby verdict", || {
        running.health.readiness().body.contains("role: standby")
    })
    .await;
    leadership.lead().await;
    runs_again(&watch, &rec, "leading again runs keys").await;
    running.shutdown().await.expect("graceful shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leadership_regained_while_stopping_should_restart_the_controllers_without_counting_a_failure() {
    let rec = Scripted::new(|_, _, _| Step::Return(MS(300), Outcome::done()));
    let (running, watch, leadership) =
        start_leading(rec.clone(), |b| b.reconcile_timeout(Duration::from_secs(5))).await;
    eventually(HANG, "the watcher started", || watch.emit("k")).await;
    eventually(HANG, "the reconcile started", || rec.calls_of("k") == 1).await;
    // Lose (the subtree drains the 300ms reconcile) and win again before it has stopped.
    let relead = leadership.clone();
    let (_, ()) = tokio::join!(leadership.lose(), async move {
        tokio::time::sleep(MS(50)).await;
        relead.lead().await;
    });
    runs_again(&watch, &rec, "the controllers run again").await;
    let text = running.tree.to_text();
    assert!(
        text.contains("controllers [controllers]") && !text.contains("restarts="),
        "{text}"
    );
    running.shutdown().await.expect("graceful shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_leadership_actor_should_stop_the_controllers_and_be_restarted() {
    let rec = done_quickly();
    let (running, watch, leadership) = start_leading(rec.clone(), |b| b).await;
    eventually(HANG, "the watcher started", || watch.emit("k")).await;
    eventually(HANG, "keys run while leading", || rec.calls_of("k") == 1).await;
    let first = leadership.cell.lock().unwrap().clone().expect("leadership actor");
    first.kill();
    eventually(HANG, "a new leadership actor", || {
        leadership
            .cell
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(|c| c.get_id() != first.get_id())
    })
    .await;
    eventually(HANG, "the controllers stopped and the role is standby", || {
        running.lease.borrow().role == Role::Standby
            && running
                .tree
                .to_text()
                .lines()
                .all(|l| !l.contains("controllers ["))
    })
    .await;
    let text = running.tree.to_text();
    assert!(
        text.contains("leadership [leadership]") && text.contains("restarts=1 last=\"killed\""),
        "{text}"
    );
    leadership.lead().await;
    runs_again(&watch, &rec, "leading again runs keys").await;
    running.shutdown().await.expect("graceful shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn only_keys_should_drop_the_keys_it_refuses_whoever_enqueues_them() {
    let rec = done_quickly();
    let (running, watch) = start_with_first_key(rec.clone(), "kept", |b| {
        b.only_keys(|key| !key.name.starts_with("other"))
    })
    .await;
    watch.emit("other-watched");
    running
        .queues
        .enqueue(ObjectKey::namespaced("test", "ns", "other-handle"), Cause::Event);
    watch.emit("kept-after");
    eventually(HANG, "the kept keys ran", || {
        rec.calls_of("kept") == 1 && rec.calls_of("kept-after") == 1
    })
    .await;
    assert_eq!(
        (rec.calls_of("other-watched"), rec.calls_of("other-handle")),
        (0, 0),
        "refused keys must never be queued"
    );
    let stats = running.queues.stats("test").expect("the test queue");
    assert_eq!(stats.depth + stats.delayed + stats.processing, 0, "{stats:?}");
}
