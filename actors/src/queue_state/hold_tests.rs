//! The held `Refresh` lane: what a start's backlog does until every watch has listed.

use super::{
    tests::{DONE, S, key},
    *,
};

/// One namespace may hold 2 workers: the backlog alone could fill that share.
fn held_queue() -> (QueueState, Instant) {
    let t0 = Instant::now();
    let mut q = QueueState::new(BackoffConfig::default(), 2, t0);
    q.hold_refresh();
    (q, t0)
}

fn state_of(q: &QueueState, k: &ObjectKey, now: Instant) -> &'static str {
    q.keys(now)
        .into_iter()
        .find(|info| info.key == k.to_string())
        .map_or("unknown", |info| info.state)
}

#[test]
fn held_queue_should_hand_out_changed_keys_and_keep_listed_ones_out_of_every_age() {
    let (mut q, t0) = held_queue();
    for i in 0..5 {
        q.add(key(i), Cause::Listed, t0);
    }
    q.add(key(9), Cause::Event, t0 + S(1));
    assert_eq!(q.pop(t0 + S(1)).map(|d| d.key), Some(key(9)));
    assert_eq!(q.pop(t0 + S(1)), None, "a held key was handed out");
    assert_eq!(q.depth(), 0, "held keys are not ready");
    assert_eq!(q.oldest_ready_since(), None, "held keys must not age (liveness)");
    assert_eq!(q.held_for_lists(), 5);
    assert_eq!(state_of(&q, &key(0), t0), "held");
}

#[test]
fn release_should_make_held_keys_ready_in_arrival_order_from_the_release() {
    let (mut q, t0) = held_queue();
    for i in [3, 1, 4] {
        q.add(key(i), Cause::Listed, t0);
    }
    assert_eq!(q.release_refresh(t0 + S(7)), 3);
    assert_eq!(q.held_for_lists(), 0);
    assert_eq!(q.depth(), 3);
    assert_eq!(q.oldest_ready_since(), Some(t0 + S(7)), "due from the release");
    let mut order = Vec::new();
    while let Some(run) = q.pop(t0 + S(7)) {
        assert_eq!(q.finish(&run.key, &DONE, t0 + S(7), 0.5), Next::Idle);
        order.push(run.key);
    }
    assert_eq!(order, vec![key(3), key(1), key(4)]);
    q.add(key(5), Cause::Listed, t0 + S(8));
    assert_eq!(
        q.pop(t0 + S(8)).map(|d| d.key),
        Some(key(5)),
        "a re-list after release runs"
    );
}

#[test]
fn held_key_should_run_at_once_when_its_object_changes_and_coalesce_relists() {
    let (mut q, t0) = held_queue();
    q.add(key(1), Cause::Listed, t0);
    q.add(key(2), Cause::Listed, t0);
    q.add(key(2), Cause::Listed, t0);
    assert_eq!(q.held_for_lists(), 2, "a second listing coalesces");
    q.add(key(1), Cause::Event, t0 + S(1));
    assert_eq!(q.held_for_lists(), 1);
    assert_eq!(q.pop(t0 + S(1)).map(|d| d.key), Some(key(1)));
    assert_eq!(q.pop(t0 + S(1)), None);
    assert_eq!(
        q.release_refresh(t0 + S(2)),
        1,
        "key 1 left the held list when it changed"
    );
}

#[test]
fn held_queue_should_hold_refreshes_that_come_due_or_come_back_dirty() {
    let (mut q, t0) = held_queue();
    q.add(key(1), Cause::Event, t0);
    q.add(key(2), Cause::Event, t0);
    let first = q.pop(t0).expect("key 1 is ready");
    let second = q.pop(t0).expect("key 2 is ready");
    q.add(key(2), Cause::Listed, t0);
    let refresh = Finish::Reconciled(Outcome::Done {
        refresh_after: Some(S(10)),
    });
    assert!(matches!(
        q.finish(&first.key, &refresh, t0, 0.5),
        Next::RefreshAt(_)
    ));
    assert_eq!(q.finish(&second.key, &DONE, t0, 0.5), Next::ReadyNow);
    assert_eq!(q.promote_due(t0 + S(60)), 1, "key 1's refresh came due");
    assert_eq!(q.pop(t0 + S(60)), None, "both are held");
    assert_eq!(q.held_for_lists(), 2);
    assert_eq!(q.next_due(), None);
}
