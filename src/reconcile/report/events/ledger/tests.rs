use super::*;
use crate::reconcile::rules::bounds::pruned_map::MIN_PRUNE_LEN;

const SYNCED: &str = "Synced";
const FAILED: &str = "SyncFailed";

#[test]
fn an_identical_event_should_be_skipped_within_the_repeat_window_only() {
    let mut ledger = Ledger::<&str>::default();
    let t0 = Instant::now();
    assert_eq!(
        ledger.record("u1", FAILED, "Unreachable: x", t0, 1),
        Decision::Create {
            stamp: 1,
            combined: false
        }
    );
    assert_eq!(
        ledger.record("u1", FAILED, "Unreachable: x", t0 + Duration::from_secs(5), 2),
        Decision::Skip
    );
    assert_eq!(
        ledger.record("u2", FAILED, "Unreachable: x", t0, 3),
        Decision::Create {
            stamp: 3,
            combined: false
        },
        "per object"
    );
    assert_eq!(
        ledger.record("u1", FAILED, "Unreachable: x", t0 + REPEAT_WINDOW, 4),
        Decision::Create {
            stamp: 4,
            combined: false
        },
        "after the window, and past the series window too"
    );
}

#[test]
fn a_repeat_after_other_events_should_fold_into_its_event_within_the_series_window() {
    let mut ledger = Ledger::<&str>::default();
    let t0 = Instant::now();
    let minute = Duration::from_secs(60);
    assert_eq!(
        ledger.record("u1", SYNCED, "2 key(s)", t0, 1),
        Decision::Create {
            stamp: 1,
            combined: false
        }
    );
    assert_eq!(
        ledger.record("u1", FAILED, "Forbidden", t0 + minute, 2),
        Decision::Create {
            stamp: 2,
            combined: false
        }
    );
    assert_eq!(
        ledger.record("u1", SYNCED, "2 key(s)", t0 + 2 * minute, 3),
        Decision::Fold { stamp: 1, count: 2 }
    );
    assert_eq!(
        ledger.record("u1", FAILED, "Forbidden", t0 + 3 * minute, 4),
        Decision::Fold { stamp: 2, count: 2 }
    );
    assert_eq!(
        ledger.record("u1", SYNCED, "2 key(s)", t0 + 4 * minute, 5),
        Decision::Fold { stamp: 1, count: 3 }
    );
    assert_eq!(
        ledger.record("u1", FAILED, "Forbidden", t0 + 4 * minute + SERIES_WINDOW, 6),
        Decision::Create {
            stamp: 6,
            combined: false
        },
        "its last occurrence is past the series window"
    );
}

#[test]
fn a_different_note_should_be_a_new_event() {
    let mut ledger = Ledger::<&str>::default();
    let t0 = Instant::now();
    assert_eq!(
        ledger.record("u1", FAILED, "Forbidden", t0, 1),
        Decision::Create {
            stamp: 1,
            combined: false
        }
    );
    assert_eq!(
        ledger.record("u1", FAILED, "Unreachable", t0, 2),
        Decision::Create {
            stamp: 2,
            combined: false
        }
    );
}

#[test]
fn a_failed_write_should_not_make_its_retry_a_repeat() {
    let mut ledger = Ledger::<&str>::default();
    let t0 = Instant::now();
    let first = ledger.record("u1", FAILED, "Forbidden", t0, 1);
    ledger.unrecord("u1", &first);
    assert_eq!(
        ledger.record("u1", FAILED, "Forbidden", t0, 2),
        Decision::Create {
            stamp: 2,
            combined: false
        }
    );
    ledger.record("u1", SYNCED, "ok", t0, 3);
    let fold = ledger.record("u1", FAILED, "Forbidden", t0, 4);
    assert_eq!(fold, Decision::Fold { stamp: 2, count: 2 });
    ledger.unrecord("u1", &fold);
    ledger.record("u1", SYNCED, "ok2", t0, 5);
    assert_eq!(
        ledger.record("u1", FAILED, "Forbidden", t0, 6),
        Decision::Fold { stamp: 2, count: 2 },
        "the failed fold is not counted"
    );
}

#[test]
fn an_object_should_keep_a_bounded_number_of_events() {
    let mut ledger = Ledger::<&str>::default();
    let t0 = Instant::now();
    for stamp in 0..9u64 {
        ledger.record("u1", FAILED, &format!("note {stamp}"), t0, stamp);
    }
    assert_eq!(ledger.objects[&uid_key("u1")].written.len(), SERIES_PER_OBJECT);
    assert_eq!(
        ledger.record("u1", FAILED, "note 0", t0, 9),
        Decision::Create {
            stamp: 9,
            combined: false
        },
        "the oldest was forgotten"
    );
}

#[test]
fn expired_objects_should_be_pruned_once_the_ledger_doubles() {
    let mut ledger = Ledger::<&str>::default();
    let t0 = Instant::now();
    for n in 0..MIN_PRUNE_LEN as u64 {
        ledger.record(&format!("old-{n}"), SYNCED, "ok", t0, n);
    }
    let later = t0 + REPEAT_WINDOW;
    ledger.record("fresh", SYNCED, "ok", later, 0);
    assert_eq!(ledger.len(), 1, "the expired objects were dropped");
    for n in 0..MIN_PRUNE_LEN as u64 {
        ledger.record(&format!("new-{n}"), SYNCED, "ok", later, n);
    }
    assert_eq!(ledger.len(), MIN_PRUNE_LEN + 1, "live objects are kept");
}

#[test]
fn similar_events_should_be_combined_after_ten_distinct_notes_within_the_window() {
    let mut ledger = Ledger::<&str>::default();
    let t0 = Instant::now();
    let at = |seconds: u64| t0 + Duration::from_secs(seconds);
    // (at, kind, note, decision)
    let mut table: Vec<(Instant, &str, String, Decision)> = (0..10u64)
        .map(|n| {
            let create = Decision::Create {
                stamp: n,
                combined: false,
            };
            (at(n), FAILED, format!("Unreachable: attempt {n}"), create)
        })
        .collect();
    table.extend([
        (
            at(10),
            FAILED,
            "Unreachable: attempt 10".to_owned(),
            Decision::Create {
                stamp: 10,
                combined: true,
            },
        ),
        (
            at(11),
            FAILED,
            "Unreachable: attempt 11".to_owned(),
            Decision::Skip,
        ),
        (
            at(12),
            SYNCED,
            "ok".to_owned(),
            Decision::Create {
                stamp: 12,
                combined: false,
            },
        ),
        (
            at(13),
            FAILED,
            "Unreachable: attempt 13".to_owned(),
            Decision::Fold { stamp: 10, count: 2 },
        ),
        // Quiet for the window: counted afresh.
        (
            at(13) + AGGREGATE_WINDOW,
            FAILED,
            "Unreachable: later".to_owned(),
            Decision::Create {
                stamp: 14,
                combined: false,
            },
        ),
    ]);
    for (stamp, (when, kind, note, decision)) in table.into_iter().enumerate() {
        assert_eq!(
            ledger.record("u1", kind, &note, when, stamp as u64),
            decision,
            "{note}"
        );
    }
}

#[test]
fn writes_for_one_object_should_stop_at_the_spam_burst_then_follow_its_refill() {
    let mut ledger = Ledger::<&str>::default();
    let t0 = Instant::now();
    let note = |i: u64| {
        if i.is_multiple_of(2) {
            "Forbidden"
        } else {
            "Unreachable"
        }
    };
    let written = |decision: &Decision| matches!(decision, Decision::Create { .. } | Decision::Fold { .. });
    let decisions: Vec<Decision> = (0..100u64)
        .map(|i| ledger.record("u1", FAILED, note(i), t0 + Duration::from_millis(10 * i), i))
        .collect();
    assert_eq!(decisions.iter().filter(|d| written(d)).count(), 25, "the burst");
    assert!(decisions[25..].iter().all(|d| *d == Decision::Suppressed));
    let refilled = t0 + Duration::from_secs(301);
    assert_eq!(
        ledger.record("u1", FAILED, note(100), refilled, 100),
        Decision::Fold { stamp: 0, count: 51 },
        "one write per 5 minutes, counting the suppressed occurrences"
    );
    assert_eq!(
        ledger.record("u1", FAILED, note(101), refilled, 101),
        Decision::Suppressed
    );
    assert_eq!(
        ledger.record("u2", FAILED, note(0), refilled, 102),
        Decision::Create {
            stamp: 102,
            combined: false
        },
        "per object"
    );
}

#[test]
fn an_object_should_cost_a_few_words() {
    assert!(
        std::mem::size_of::<ObjectEvents<u8>>() <= 128,
        "{} bytes",
        std::mem::size_of::<ObjectEvents<u8>>()
    );
}

#[test]
fn a_forgotten_object_should_start_fresh() {
    let mut ledger = Ledger::<&str>::default();
    let t0 = Instant::now();
    ledger.record("u1", FAILED, "Forbidden", t0, 1);
    ledger.forget("u1");
    assert_eq!(
        ledger.record("u1", FAILED, "Forbidden", t0, 2),
        Decision::Create {
            stamp: 2,
            combined: false
        }
    );
}
