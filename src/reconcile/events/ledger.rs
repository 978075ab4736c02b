//! What the sink remembers of the Events it published, and what it decides from that: skip a
//! repeat, fold it into the Event already written, or write a new one.
//!
//! kube-runtime's `Recorder` kept a clone of every Event it wrote, about 2 KiB each, and
//! scanned them all on every publish; at 10,000 objects that was a quarter of the operator's
//! memory and a quadratic cost on a cold start. This ledger keeps, per object, a few words per
//! Event (the note as a hash; the Event's name is rebuilt from the object's name and a stamp)
//! and prunes in amortized constant time.
//!
//! # Guarantees
//! - An event identical (kind, note) to the last one published for the object within
//!   [`REPEAT_WINDOW`] is skipped.
//! - An identical event published again after others, within [`SERIES_WINDOW`] of its last
//!   occurrence, folds into the Event already written (`series.count` grows), as client-go's
//!   events recorder does; a different note is a different Event (the API server refuses to
//!   change a note).
//! - Memory is bounded: at most [`SERIES_PER_OBJECT`] Events per object, and objects whose
//!   entries have all expired are dropped once the ledger has doubled since its last pruning.

use std::{hash::Hasher, time::Duration};

use smallvec::SmallVec;
use tokio::time::Instant;

use crate::reconcile::pruned_map::PrunedMap;

/// An identical event for the same object is not re-sent within this window.
pub const REPEAT_WINDOW: Duration = Duration::from_secs(10 * 60);

/// A repeat within this window of its last occurrence folds into the Event already written
/// (kube-runtime's and client-go's series window).
pub const SERIES_WINDOW: Duration = Duration::from_secs(6 * 60);

/// Events per object that can still be folded into; the oldest is forgotten first. A content
/// change of a FerrVaultSecret with three rollout targets publishes four.
const SERIES_PER_OBJECT: usize = 8;

/// How long an entry can still decide something: skip a repeat or fold one.
const REMEMBERED_FOR: Duration = if REPEAT_WINDOW.as_nanos() > SERIES_WINDOW.as_nanos() {
    REPEAT_WINDOW
} else {
    SERIES_WINDOW
};

/// What to do with an event.
#[derive(Debug, PartialEq, Eq)]
pub enum Decision {
    /// Not news: the same event was the last one published for this object.
    Skip,
    /// Write a new Event, named with this stamp.
    Create { stamp: u64 },
    /// Patch the Event of this stamp: it has now occurred `count` times.
    Fold { stamp: u64, count: i32 },
}

/// One Event written for an object; `K` is the event's kind (its type, reason and action).
#[derive(Debug, Clone, Copy)]
struct Written<K> {
    kind: K,
    note: u64,
    stamp: u64,
    count: i32,
    last: Instant,
}

/// The Events written for one object, the most recent last. Most objects only ever publish
/// one Event, which is kept inline: no allocation per object.
#[derive(Debug)]
struct ObjectEvents<K> {
    written: SmallVec<[Written<K>; 1]>,
}

impl<K> Default for ObjectEvents<K> {
    fn default() -> Self {
        Self {
            written: SmallVec::new(),
        }
    }
}

impl<K> ObjectEvents<K> {
    fn expired(&self, now: Instant) -> bool {
        self.written
            .iter()
            .all(|w| now.saturating_duration_since(w.last) >= REMEMBERED_FOR)
    }
}

/// The sink's memory of what it published, keyed by object UID ([`uid_key`]).
#[derive(Debug)]
pub struct Ledger<K> {
    objects: PrunedMap<u128, ObjectEvents<K>>,
}

impl<K> Default for Ledger<K> {
    fn default() -> Self {
        Self {
            objects: PrunedMap::default(),
        }
    }
}

impl<K: Copy + Eq> Ledger<K> {
    /// Decides what publishing `kind` with `note` about object `uid` at `now` does, and
    /// records it; `stamp` names the Event if a new one is written.
    pub fn record(&mut self, uid: &str, kind: K, note: &str, now: Instant, stamp: u64) -> Decision {
        self.objects.prune_if_doubled(|_, events| events.expired(now));
        let note = hash_note(note);
        let events = self.objects.entry(uid_key(uid)).or_default();
        if let Some(last) = events.written.last()
            && last.kind == kind
            && last.note == note
            && now.saturating_duration_since(last.last) < REPEAT_WINDOW
        {
            return Decision::Skip;
        }
        let same = events.written.iter().position(|w| {
            w.kind == kind && w.note == note && now.saturating_duration_since(w.last) < SERIES_WINDOW
        });
        let (decision, entry) = match same {
            Some(index) => {
                let mut entry = events.written.remove(index);
                entry.count += 1;
                entry.last = now;
                (
                    Decision::Fold {
                        stamp: entry.stamp,
                        count: entry.count,
                    },
                    entry,
                )
            }
            None => (
                Decision::Create { stamp },
                Written {
                    kind,
                    note,
                    stamp,
                    count: 1,
                    last: now,
                },
            ),
        };
        if events.written.len() == SERIES_PER_OBJECT {
            events.written.remove(0);
        }
        events.written.push(entry);
        decision
    }

    /// Takes back the last [`Ledger::record`] of `uid` that wrote nothing (its write failed),
    /// so a retry is not skipped as a repeat of an Event that does not exist.
    pub fn unrecord(&mut self, uid: &str, decision: &Decision) {
        let Some(events) = self.objects.get_mut(&uid_key(uid)) else {
            return;
        };
        match *decision {
            Decision::Create { stamp } => events.written.retain(|w| w.stamp != stamp),
            Decision::Fold { stamp, .. } => {
                if let Some(entry) = events.written.iter_mut().find(|w| w.stamp == stamp) {
                    entry.count -= 1;
                }
            }
            Decision::Skip => {}
        }
    }

    /// Forgets an object (deleted): a re-created one has a new UID anyway.
    pub fn forget(&mut self, uid: &str) {
        self.objects.remove(&uid_key(uid));
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.objects.len()
    }
}

/// A note as a 64-bit hash: equal notes are what matters, and a note can be long.
fn hash_note(note: &str) -> u64 {
    hash_with(0, note)
}

/// A UID as 128 bits, stored inline where the 36-character string would be an allocation per
/// object. Kubernetes UIDs are random UUIDs: two objects' keys collide about as rarely as their
/// UUIDs would.
fn uid_key(uid: &str) -> u128 {
    (u128::from(hash_with(1, uid)) << 64) | u128::from(hash_with(2, uid))
}

fn hash_with(salt: u8, text: &str) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    hasher.write_u8(salt);
    hasher.write(text.as_bytes());
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::pruned_map::MIN_PRUNE_LEN;

    const SYNCED: &str = "Synced";
    const FAILED: &str = "SyncFailed";

    #[test]
    fn an_identical_event_should_be_skipped_within_the_repeat_window_only() {
        let mut ledger = Ledger::<&str>::default();
        let t0 = Instant::now();
        assert_eq!(
            ledger.record("u1", FAILED, "Unreachable: x", t0, 1),
            Decision::Create { stamp: 1 }
        );
        assert_eq!(
            ledger.record("u1", FAILED, "Unreachable: x", t0 + Duration::from_secs(5), 2),
            Decision::Skip
        );
        assert_eq!(
            ledger.record("u2", FAILED, "Unreachable: x", t0, 3),
            Decision::Create { stamp: 3 },
            "per object"
        );
        assert_eq!(
            ledger.record("u1", FAILED, "Unreachable: x", t0 + REPEAT_WINDOW, 4),
            Decision::Create { stamp: 4 },
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
            Decision::Create { stamp: 1 }
        );
        assert_eq!(
            ledger.record("u1", FAILED, "Forbidden", t0 + minute, 2),
            Decision::Create { stamp: 2 }
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
            Decision::Create { stamp: 6 },
            "its last occurrence is past the series window"
        );
    }

    #[test]
    fn a_different_note_should_be_a_new_event() {
        let mut ledger = Ledger::<&str>::default();
        let t0 = Instant::now();
        assert_eq!(
            ledger.record("u1", FAILED, "Forbidden", t0, 1),
            Decision::Create { stamp: 1 }
        );
        assert_eq!(
            ledger.record("u1", FAILED, "Unreachable", t0, 2),
            Decision::Create { stamp: 2 }
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
            Decision::Create { stamp: 2 }
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
        for stamp in 0..10u64 {
            ledger.record("u1", FAILED, &format!("note {stamp}"), t0, stamp);
        }
        assert_eq!(ledger.objects[&uid_key("u1")].written.len(), SERIES_PER_OBJECT);
        assert_eq!(
            ledger.record("u1", FAILED, "note 0", t0, 10),
            Decision::Create { stamp: 10 },
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
    fn a_forgotten_object_should_start_fresh() {
        let mut ledger = Ledger::<&str>::default();
        let t0 = Instant::now();
        ledger.record("u1", FAILED, "Forbidden", t0, 1);
        ledger.forget("u1");
        assert_eq!(
            ledger.record("u1", FAILED, "Forbidden", t0, 2),
            Decision::Create { stamp: 2 }
        );
    }
}
