use std::{
    collections::{HashMap, HashSet},
    time::Duration,
};

use rand::{RngExt, SeedableRng, rngs::StdRng};

use super::*;

/// These tests are about lanes, coalescing and backoff within one namespace: no fairness
/// limit (the fairness rules have their own tests below and in `fair_share`).
const NO_SHARE_LIMIT: usize = usize::MAX;

pub(super) fn key(i: usize) -> ObjectKey {
    ObjectKey::namespaced("test", "ns", format!("k{i}"))
}

/// A queue with the default settings, started at the returned instant.
fn default_queue() -> (QueueState, Instant) {
    let t0 = Instant::now();
    (QueueState::new(BackoffConfig::default(), NO_SHARE_LIMIT, t0), t0)
}

pub(super) const S: fn(u64) -> Duration = Duration::from_secs;
pub(super) const DONE: Finish = Finish::Reconciled(Outcome::Done { refresh_after: None });

fn error() -> Finish {
    Finish::Reconciled(Outcome::Error {
        reason: "boom",
        message: "failed".into(),
    })
}

#[test]
fn queue_should_coalesce_events_for_a_waiting_key() {
    let (mut q, t0) = default_queue();
    for _ in 0..5 {
        q.add(key(1), Cause::Event, t0);
    }
    assert_eq!(q.depth(), 1);
    assert_eq!(q.counters().adds, 1);
    assert_eq!(q.counters().coalesced, 4);
    assert_eq!(q.pop(t0).map(|d| d.key), Some(key(1)));
    assert_eq!(q.pop(t0), None);
}

#[test]
fn queue_should_never_hand_one_key_to_two_workers() {
    let (mut q, t0) = default_queue();
    q.add(key(1), Cause::Event, t0);
    let first = q.pop(t0).expect("key 1 is ready");
    q.add(key(1), Cause::Event, t0);
    q.add(key(1), Cause::Event, t0);
    assert_eq!(q.pop(t0), None, "a processing key must not be handed out again");
    assert_eq!(q.depth(), 0, "a dirty processing key is not counted as waiting");
    assert_eq!(q.finish(&first.key, &DONE, t0 + S(1), 0.5), Next::ReadyNow);
    assert_eq!(
        q.pop(t0 + S(1)).map(|d| d.key),
        Some(key(1)),
        "the change during processing runs once more"
    );
    assert_eq!(q.finish(&key(1), &DONE, t0 + S(2), 0.5), Next::Idle);
    assert_eq!(q.pop(t0 + S(2)), None);
}

#[test]
fn queue_should_serialise_and_coalesce_a_thousand_events_for_ten_keys() {
    let (mut q, t0) = default_queue();
    let mut rng = StdRng::seed_from_u64(7);
    let mut running: Vec<ObjectKey> = Vec::new();
    let mut last_event: HashMap<ObjectKey, u64> = HashMap::new();
    let mut last_run_start: HashMap<ObjectKey, u64> = HashMap::new();
    let (mut runs, mut step) = (0, 0u64);
    let mut events = 0;
    while events < 1000 || !running.is_empty() || q.depth() > 0 {
        step += 1;
        let now = t0 + Duration::from_millis(step);
        if events < 1000 && rng.random_range(0..3) > 0 {
            let k = key(rng.random_range(0..10));
            last_event.insert(k.clone(), step);
            q.add(k, Cause::Event, now);
            events += 1;
        } else if running.len() < 4 && rng.random_bool(0.6) {
            if let Some(d) = q.pop(now) {
                assert!(
                    !running.contains(&d.key),
                    "{} handed to two workers at once",
                    d.key
                );
                last_run_start.insert(d.key.clone(), step);
                running.push(d.key);
                runs += 1;
            }
        } else if !running.is_empty() {
            let k = running.swap_remove(rng.random_range(0..running.len()));
            q.finish(&k, &DONE, now, 0.5);
        }
    }
    assert!(runs < 1000, "events must coalesce: {runs} runs for 1000 events");
    for (k, at) in last_event {
        assert!(
            last_run_start[&k] >= at,
            "{k}: its last event (step {at}) was never reconciled after"
        );
    }
    assert_eq!(q.counters().adds + q.counters().coalesced, 1000);
}

#[test]
fn queue_should_run_a_changed_key_before_a_backlog_of_five_thousand_refreshes() {
    let (mut q, t0) = default_queue();
    for i in 0..5000 {
        q.add(key(i), Cause::Listed, t0);
    }
    q.pop(t0).expect("backlog");
    q.add(key(99_999), Cause::Event, t0 + S(1));
    assert_eq!(q.pop(t0 + S(1)).map(|d| d.key), Some(key(99_999)));
    assert_eq!(q.depth(), 4999);
    assert_eq!(
        q.oldest_ready_since(),
        Some(t0),
        "the refresh backlog is the oldest"
    );
}

#[test]
fn queue_should_upgrade_a_waiting_refresh_when_its_object_changes() {
    let (mut q, t0) = default_queue();
    for i in 0..3 {
        q.add(key(i), Cause::Listed, t0);
    }
    q.add(key(2), Cause::Event, t0);
    assert_eq!(q.depth(), 3);
    let order: Vec<_> = std::iter::from_fn(|| q.pop(t0).map(|d| d.key)).collect();
    assert_eq!(order, vec![key(2), key(0), key(1)]);
}

#[test]
fn queue_should_back_off_errors_exponentially_and_forget_them_on_success() {
    let (mut q, t0) = default_queue();
    let mut now = t0;
    q.add(key(1), Cause::Event, now);
    for (attempt, expected) in [(0, 1), (1, 2), (2, 4), (3, 8)] {
        let d = q.pop(now).expect("key due");
        assert_eq!(d.attempt, attempt);
        assert_eq!(
            q.finish(&d.key, &error(), now, 0.5),
            Next::RetryAt(now + S(expected))
        );
        assert_eq!(
            q.pop(now + S(expected) - Duration::from_millis(1)),
            None,
            "retried too early"
        );
        now += S(expected);
    }
    assert_eq!(q.attempts(&key(1)), 4);
    assert_eq!(q.counters().retries, 4);
    let d = q.pop(now).expect("retry due");
    q.finish(&d.key, &DONE, now, 0.5);
    assert_eq!(q.attempts(&key(1)), 0, "success forgets the backoff");
    q.add(key(1), Cause::Event, now);
    let d = q.pop(now).expect("fresh change");
    assert_eq!(q.finish(&d.key, &error(), now, 0.5), Next::RetryAt(now + S(1)));
}

#[test]
fn queue_should_keep_rate_limits_on_their_own_path_and_honour_retry_after() {
    let (mut q, t0) = default_queue();
    q.add(key(1), Cause::Event, t0);
    let limited = |retry_after| Finish::Reconciled(Outcome::RateLimited { retry_after });
    let d = q.pop(t0).expect("due");
    assert_eq!(
        q.finish(&d.key, &limited(None), t0, 0.0),
        Next::RetryAt(t0 + Duration::from_millis(2500))
    );
    let now = t0 + S(3);
    let d = q.pop(now).expect("due");
    assert_eq!(
        q.finish(&d.key, &limited(Some(S(60))), now, 0.0),
        Next::RetryAt(now + S(60))
    );
    let now = now + S(60);
    let d = q.pop(now).expect("due");
    assert_eq!(d.attempt, 2);
    assert_eq!(
        q.finish(&d.key, &limited(None), now, 0.0),
        Next::RetryAt(now + S(10))
    );
}

#[test]
fn queue_should_keep_backoff_when_a_failing_key_changed_during_processing() {
    let (mut q, t0) = default_queue();
    q.add(key(1), Cause::Event, t0);
    let d = q.pop(t0).expect("due");
    q.add(key(1), Cause::Event, t0);
    assert_eq!(q.finish(&d.key, &error(), t0, 0.5), Next::RetryAt(t0 + S(1)));
    assert_eq!(q.depth(), 0);
}

#[test]
fn queue_should_schedule_refreshes_with_jitter_in_the_refresh_lane() {
    let (mut q, t0) = default_queue();
    q.add(key(1), Cause::Event, t0);
    let d = q.pop(t0).expect("due");
    let hour = Finish::Reconciled(Outcome::done_refresh_in(S(3600)));
    assert_eq!(q.finish(&d.key, &hour, t0, 0.0), Next::RefreshAt(t0 + S(3240)));
    assert_eq!(q.depth(), 0);
    assert_eq!(q.next_due(), Some(t0 + S(3240)));
    q.add(key(2), Cause::Event, t0 + S(3240));
    assert_eq!(
        q.pop(t0 + S(3240)).map(|d| d.key),
        Some(key(2)),
        "changed lane first"
    );
    assert_eq!(
        q.pop(t0 + S(3240)).map(|d| (d.key, d.lane)),
        Some((key(1), Lane::Refresh))
    );
}

#[test]
fn queue_should_move_a_delayed_key_to_ready_when_its_object_changes() {
    let (mut q, t0) = default_queue();
    q.add(key(1), Cause::Event, t0);
    let d = q.pop(t0).expect("due");
    q.finish(
        &d.key,
        &Finish::Reconciled(Outcome::RequeueAfter(S(600))),
        t0,
        0.5,
    );
    q.add(key(1), Cause::Event, t0 + S(1));
    assert_eq!(q.delayed(), 0);
    assert_eq!(
        q.pop(t0 + S(1)).map(|d| (d.key, d.lane)),
        Some((key(1), Lane::Changed))
    );
}

#[test]
fn queue_should_report_exact_depth_oldest_age_next_due_and_keys() {
    let (mut q, t0) = default_queue();
    q.add(key(1), Cause::Event, t0);
    q.add(key(2), Cause::Event, t0 + S(1));
    q.add(key(3), Cause::Event, t0 + S(2));
    assert_eq!((q.depth(), q.oldest_ready_since()), (3, Some(t0)));
    let d = q.pop(t0 + S(3)).expect("due");
    assert_eq!(d.waited, S(3));
    assert_eq!(
        (q.depth(), q.oldest_ready_since(), q.processing()),
        (2, Some(t0 + S(1)), 1)
    );
    q.finish(&d.key, &error(), t0 + S(3), 0.5);
    assert_eq!(q.next_due(), Some(t0 + S(4)));
    let keys = q.keys(t0 + S(5));
    let states: Vec<_> = keys
        .iter()
        .map(|k| (k.state, k.attempts, k.due_in_secs))
        .collect();
    assert_eq!(
        states,
        vec![("delayed", 1, Some(-1.0)), ("ready", 0, None), ("ready", 0, None)]
    );
    assert_eq!(q.counters().completed, 1);
    assert_eq!(q.last_completed_at(), Some(t0 + S(3)));
}

#[test]
fn queue_should_retry_timed_out_and_aborted_runs_with_backoff() {
    let (mut q, t0) = default_queue();
    q.add(key(1), Cause::Event, t0);
    let d = q.pop(t0).expect("due");
    assert_eq!(
        q.finish(&d.key, &Finish::TimedOut, t0, 0.5),
        Next::RetryAt(t0 + S(1))
    );
    let d = q.pop(t0 + S(1)).expect("due");
    let next = q.finish(&d.key, &Finish::Aborted(AbortCause::Killed), t0 + S(1), 0.5);
    assert_eq!(next, Next::RetryAt(t0 + S(3)));
}

#[test]
fn queue_should_forget_keys_that_are_idle_and_healthy() {
    let (mut q, t0) = default_queue();
    let mut seen = HashSet::new();
    for i in 0..100 {
        q.add(key(i), Cause::Event, t0);
    }
    while let Some(d) = q.pop(t0) {
        seen.insert(d.key.clone());
        q.finish(&d.key, &DONE, t0, 0.5);
    }
    assert_eq!(seen.len(), 100);
    assert!(q.keys(t0).is_empty(), "no memory kept for idle keys");
}
