use std::time::Duration;

use rand::RngExt;

use crate::{
    key::Cause,
    reconciler::Outcome,
    test_support::{QueueFixture, Scripted, Step, eventually, quick_config},
};

const MS: fn(u64) -> Duration = Duration::from_millis;
const HANG: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn work_queue_should_serialise_and_coalesce_a_thousand_events_for_ten_keys() {
    let rec = Scripted::new(|_, _, _| Step::Return(MS(rand::rng().random_range(0..3)), Outcome::done()));
    let q = QueueFixture::spawn(rec.clone(), quick_config(4)).await;
    for i in 0..1000 {
        q.enqueue(&format!("k{}", i % 10));
        if i % 50 == 0 {
            tokio::time::sleep(MS(2)).await;
        }
    }
    let after_last = rec.total_calls();
    eventually(HANG, "every key ran after its last event", || {
        let s = q.stats();
        s.depth == 0 && s.processing == 0 && (0..10).all(|i| rec.calls_of(&format!("k{i}")) >= 1)
    })
    .await;
    assert_eq!(
        *rec.overlap.lock().unwrap(),
        None,
        "a key was reconciled twice at once"
    );
    let s = q.stats();
    assert!(
        rec.total_calls() < 1000,
        "events must coalesce: {} runs",
        rec.total_calls()
    );
    assert!(rec.total_calls() >= after_last);
    assert_eq!(s.counters.adds + s.counters.coalesced, 1000);
    assert_eq!(s.counters.completed as usize, rec.total_calls());
    let text = q.metrics_text();
    assert!(
        text.contains("controller_runtime_reconcile_total{controller=\"test\",result=\"success\"}"),
        "{text}"
    );
    assert!(
        text.contains("workqueue_depth{controller=\"test\",name=\"test\",priority=\"\"} 0"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 6)]
async fn work_queue_should_replace_a_stuck_worker_while_other_keys_keep_completing() {
    // The first run of "stuck" blocks its thread for 10x the deadline, ignoring cancellation.
    let rec = Scripted::new(|name, attempt, _| match (name, attempt) {
        ("stuck", 0) => Step::Block(Duration::from_secs(3)),
        _ => Step::Return(MS(5), Outcome::done()),
    });
    let q = QueueFixture::spawn(rec.clone(), quick_config(2)).await;
    q.enqueue("stuck");
    eventually(HANG, "the stuck key started", || rec.calls_of("stuck") == 1).await;
    eventually(HANG, "the stuck worker was replaced", || {
        q.directory
            .restarts("test/worker-0")
            .or(q.directory.restarts("test/worker-1"))
            .is_some()
    })
    .await;
    let replaced = q
        .directory
        .restarts("test/worker-0")
        .or(q.directory.restarts("test/worker-1"))
        .unwrap();
    assert!(
        replaced.last_reason.contains("stuck on test:ns/stuck"),
        "{}",
        replaced.last_reason
    );
    for round in 0..5 {
        q.enqueue(&format!("other{round}"));
        q.enqueue(&format!("more{round}"));
        eventually(HANG, "other keys keep completing", || {
            rec.calls_of(&format!("other{round}")) == 1 && rec.calls_of(&format!("more{round}")) == 1
        })
        .await;
    }
    assert_eq!(
        rec.calls_of("stuck"),
        1,
        "no second run while the abandoned one still blocks"
    );
    assert_eq!(q.stats().abandoned, 1);
    eventually(
        HANG,
        "the stuck key was retried after its abandoned run ended",
        || rec.calls_of("stuck") == 2,
    )
    .await;
    eventually(HANG, "the queue settled", || q.stats().processing == 0).await;
    assert_eq!(q.stats().abandoned, 0);
    assert_eq!(*rec.overlap.lock().unwrap(), None);
    assert!(
        q.metrics_text()
            .contains("actor_restarts_total{actor=\"test/worker-")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 6)]
async fn work_queue_should_say_why_a_stuck_worker_cannot_be_replaced() {
    let rec = Scripted::new(|_, _, _| Step::Block(Duration::from_secs(2)));
    let q = QueueFixture::spawn(
        rec.clone(),
        crate::queue_view::QueueConfig {
            max_abandoned: 0,
            ..quick_config(1)
        },
    )
    .await;
    q.enqueue("stuck");
    eventually(HANG, "health-visible reason", || {
        !q.stats().unreplaceable.is_empty()
    })
    .await;
    let reason = q.stats().unreplaceable[0].clone();
    assert!(
        reason.contains("test/worker-0 stuck on test:ns/stuck"),
        "{reason}"
    );
    assert!(reason.contains("limit 0"), "{reason}");
    eventually(HANG, "the run ended on its own and the slot recovered", || {
        let s = q.stats();
        s.unreplaceable.is_empty() && s.processing == 0 && s.counters.completed >= 1
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn work_queue_should_survive_a_reconcile_panic_and_retry_the_key() {
    let rec = Scripted::new(|name, attempt, _| match (name, attempt) {
        ("boom", 0) => Step::Panic,
        _ => Step::Return(MS(1), Outcome::done()),
    });
    let q = QueueFixture::spawn(rec.clone(), quick_config(1)).await;
    q.enqueue("boom");
    eventually(HANG, "the key was retried and succeeded", || {
        rec.calls_of("boom") == 2 && q.stats().processing == 0
    })
    .await;
    let restart = q
        .directory
        .restarts("test/worker-0")
        .expect("the worker was replaced");
    assert!(
        restart.last_reason.contains("panicked"),
        "{}",
        restart.last_reason
    );
    q.enqueue("after");
    eventually(HANG, "the replacement worker runs keys", || {
        rec.calls_of("after") == 1
    })
    .await;
    let text = q.metrics_text();
    assert!(
        text.contains("controller_runtime_reconcile_panics_total{controller=\"test\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("controller_runtime_reconcile_errors_total{controller=\"test\"} 1"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn work_queue_should_time_out_a_reconcile_that_ignores_cancellation() {
    let rec = Scripted::new(|name, attempt, _| match (name, attempt) {
        ("slow", 0) => Step::IgnoreCancel(Duration::from_secs(30)),
        _ => Step::Return(MS(1), Outcome::done()),
    });
    let q = QueueFixture::spawn(rec.clone(), quick_config(1)).await;
    q.enqueue("slow");
    eventually(HANG, "the timed-out key was retried", || {
        rec.calls_of("slow") == 2
    })
    .await;
    assert!(
        q.directory.restarts("test/worker-0").is_none(),
        "a yielding timeout needs no replacement"
    );
    let text = q.metrics_text();
    assert!(
        text.contains("controller_runtime_reconcile_timeouts_total{controller=\"test\"} 1"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 6)]
async fn work_queue_should_replace_a_waiting_stuck_worker_as_soon_as_an_abandoned_run_ends() {
    // "first" is abandoned at ~0.5s and really ends at 1.5s; "second" is stuck from ~0.5s but
    // cannot be replaced while the one allowed abandoned run lingers.
    let rec = Scripted::new(|name, attempt, _| match (name, attempt) {
        ("first", 0) => Step::Block(Duration::from_millis(1500)),
        ("second", 0) => Step::Block(Duration::from_secs(6)),
        _ => Step::Return(MS(1), Outcome::done()),
    });
    let q = QueueFixture::spawn(
        rec.clone(),
        crate::queue_view::QueueConfig {
            max_abandoned: 1,
            ..quick_config(2)
        },
    )
    .await;
    q.enqueue("first");
    q.enqueue("second");
    eventually(HANG, "the second stuck worker is reported unreplaceable", || {
        !q.stats().unreplaceable.is_empty()
    })
    .await;
    let started = tokio::time::Instant::now();
    eventually(HANG, "both stuck workers were replaced", || {
        q.stats().unreplaceable.is_empty() && q.stats().abandoned == 1 && rec.calls_of("first") == 2
    })
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "replaced only after {:?}",
        started.elapsed()
    );
    q.enqueue("third");
    eventually(HANG, "keys flow again", || rec.calls_of("third") == 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn work_queue_should_hold_listed_keys_until_every_watch_has_listed() {
    let rec = Scripted::new(|_, _, _| Step::Return(MS(1), Outcome::done()));
    let (listed, watches_listed) = tokio::sync::watch::channel(false);
    let q = QueueFixture::spawn_until_listed(rec.clone(), quick_config(2), watches_listed).await;
    for name in ["a", "b", "c"] {
        q.enqueue_for(name, Cause::Listed);
    }
    q.enqueue("new");
    eventually(HANG, "the new object ran while the backlog is held", || {
        rec.calls_of("new") == 1 && q.stats().processing == 0
    })
    .await;
    let held = q.stats();
    assert_eq!(
        (held.held_for_lists, held.depth, held.oldest_ready_since),
        (3, 0, None),
        "held keys wait outside the ready set, so they age nothing health reads"
    );
    assert_eq!(rec.total_calls(), 1, "a held key ran");
    let text = q.metrics_text();
    assert!(
        text.contains("workqueue_depth{controller=\"test\",name=\"test\",priority=\"\"} 3"),
        "held keys still count as queued: {text}"
    );
    listed.send_replace(true);
    eventually(HANG, "the backlog ran once every watch listed", || {
        ["a", "b", "c"].iter().all(|k| rec.calls_of(k) == 1) && q.stats().held_for_lists == 0
    })
    .await;
}
