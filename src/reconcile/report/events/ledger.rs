//! What the sink remembers of the Events it published, and what it decides from that: skip a
//! repeat, fold it into the Event already written, write a new one, combine it with similar ones,
//! or suppress it as spam. It is client-go's `EventCorrelator` (`tools/record/events_cache.go`)
//! for `events.k8s.io/v1`: its deduplication, aggregator and spam filter.
//!
//! kube-runtime's `Recorder` kept a clone of every Event it wrote, about 2 KiB each, and
//! scanned them all on every publish; at 10,000 objects that was a quarter of the operator's
//! memory and a quadratic cost on a cold start. This ledger keeps, per object, a few words per
//! Event (the note as a hash; the Event's name is rebuilt from the object's name and a stamp),
//! a counter per kind and one token bucket, and prunes in amortized constant time.
//!
//! # Guarantees
//! - An event identical (kind, note) to the last one published for the object within
//!   [`REPEAT_WINDOW`] is skipped.
//! - An identical event published again after others, within [`SERIES_WINDOW`] of its last
//!   occurrence, folds into the Event already written (`series.count` grows), as client-go's
//!   events recorder does; a different note is a different Event (the API server refuses to
//!   change a note).
//! - Aggregation (client-go's `EventAggregator`): once an object has had [`AGGREGATE_AFTER`]
//!   Events of one kind with different notes, each within [`AGGREGATE_WINDOW`] of the last one
//!   of that kind, further ones of that kind are combined into one Event
//!   ([`Decision::Create`] with `combined`), which later ones fold into.
//! - Spam filter (client-go's `EventSourceObjectSpamFilter`): every write for an object (a new
//!   Event or a fold) takes a token from the object's bucket ([`SPAM_RATE`]: 25 at once, then
//!   one per 5 minutes); without one the event is [`Decision::Suppressed`] and nothing is
//!   written (a suppressed fold still counts towards the next written `series.count`).
//! - Memory is bounded: at most [`SERIES_PER_OBJECT`] Events and one counter per kind per
//!   object; an object is dropped when deleted ([`Ledger::forget`]), or once the ledger has
//!   doubled since its last pruning and its entries have all expired and its bucket refilled.

use std::{hash::Hasher, time::Duration};

use smallvec::SmallVec;
use tokio::time::Instant;

use crate::reconcile::rules::bounds::{
    pruned_map::PrunedMap,
    token_bucket::{Rate, TokenBucket},
};

/// An identical event for the same object is not re-sent within this window.
pub(super) const REPEAT_WINDOW: Duration = Duration::from_secs(10 * 60);

/// A repeat within this window of its last occurrence folds into the Event already written
/// (kube-runtime's and client-go's series window).
pub(super) const SERIES_WINDOW: Duration = Duration::from_secs(6 * 60);

/// Events per object that can still be folded into; the oldest is forgotten first. A content
/// change of a FerrVaultSecret with three rollout targets publishes four.
const SERIES_PER_OBJECT: usize = 8;

/// Distinct notes of one kind an object publishes as Events of their own before further ones are
/// combined (client-go's `defaultAggregateMaxEvents`).
pub(super) const AGGREGATE_AFTER: u16 = 10;

/// Notes of one kind count as similar while each comes within this long of the previous one
/// (client-go's `defaultAggregateIntervalInSeconds`).
pub(super) const AGGREGATE_WINDOW: Duration = Duration::from_secs(10 * 60);

/// The spam filter's bucket per object: 25 writes at once, then one every 5 minutes
/// (client-go's `defaultSpamBurst` and `defaultSpamQPS`).
pub(super) const SPAM_RATE: Rate = Rate {
    per_second: 1.0 / 300.0,
    burst: 25.0,
};

/// How long an entry can still decide something: skip a repeat or fold one.
const REMEMBERED_FOR: Duration = if REPEAT_WINDOW.as_nanos() > SERIES_WINDOW.as_nanos() {
    REPEAT_WINDOW
} else {
    SERIES_WINDOW
};

/// What to do with an event.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Decision {
    /// Not news: the same event was the last one published for this object.
    Skip,
    /// The object's spam filter has no token left: write nothing.
    Suppressed,
    /// Write a new Event, named with this stamp; `combined`: its note is to say it stands for
    /// similar events (aggregation).
    Create { stamp: u64, combined: bool },
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

/// How many different notes of one kind an object published recently (aggregation).
#[derive(Debug, Clone, Copy)]
struct Similar<K> {
    kind: K,
    distinct: u16,
    last: Instant,
}

/// The Events written for one object, the most recent last. Most objects only ever publish
/// one Event, which is kept inline: no allocation per object.
#[derive(Debug)]
struct ObjectEvents<K> {
    written: SmallVec<[Written<K>; 1]>,
    similar: SmallVec<[Similar<K>; 1]>,
    spam: TokenBucket,
}

impl<K: Copy + Eq> ObjectEvents<K> {
    fn new(now: Instant) -> Self {
        Self {
            written: SmallVec::new(),
            similar: SmallVec::new(),
            spam: TokenBucket::full(SPAM_RATE, now),
        }
    }

    fn expired(&self, now: Instant) -> bool {
        let older = |last: Instant, window| now.saturating_duration_since(last) >= window;
        self.written.iter().all(|w| older(w.last, REMEMBERED_FOR))
            && self.similar.iter().all(|s| older(s.last, AGGREGATE_WINDOW))
            && self.spam.is_full(SPAM_RATE, now)
    }

    /// The aggregation counter of `kind` at `now` (restarted after a quiet window), created
    /// if need be.
    fn similar(&mut self, kind: K, now: Instant) -> &mut Similar<K> {
        let index = match self.similar.iter().position(|s| s.kind == kind) {
            Some(index) => index,
            None => {
                self.similar.push(Similar {
                    kind,
                    distinct: 0,
                    last: now,
                });
                self.similar.len() - 1
            }
        };
        let similar = &mut self.similar[index];
        if now.saturating_duration_since(similar.last) >= AGGREGATE_WINDOW {
            similar.distinct = 0;
        }
        similar.last = now;
        similar
    }
}

/// The sink's memory of what it published, keyed by object UID ([`uid_key`]).
#[derive(Debug)]
pub(super) struct Ledger<K> {
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
    pub(super) fn record(&mut self, uid: &str, kind: K, note: &str, now: Instant, stamp: u64) -> Decision {
        self.objects.prune_if_doubled(|_, events| events.expired(now));
        let events = self
            .objects
            .entry(uid_key(uid))
            .or_insert_with(|| ObjectEvents::new(now));
        let combined = events.similar(kind, now).distinct >= AGGREGATE_AFTER;
        // Combined events share one note: the Event of the first of them.
        let note = if combined { COMBINED_NOTE } else { hash_note(note) };
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
        let Some(index) = same else {
            if !combined {
                events.similar(kind, now).distinct += 1;
            }
            if !events.spam.try_take(SPAM_RATE, now) {
                return Decision::Suppressed;
            }
            push(
                &mut events.written,
                Written {
                    kind,
                    note,
                    stamp,
                    count: 1,
                    last: now,
                },
            );
            return Decision::Create { stamp, combined };
        };
        let mut entry = events.written.remove(index);
        entry.count += 1;
        entry.last = now;
        let written = events.spam.try_take(SPAM_RATE, now);
        push(&mut events.written, entry);
        if written {
            Decision::Fold {
                stamp: entry.stamp,
                count: entry.count,
            }
        } else {
            Decision::Suppressed
        }
    }

    /// Takes back the last [`Ledger::record`] of `uid` that wrote nothing (its write failed),
    /// so a retry is not skipped as a repeat of an Event that does not exist.
    pub(super) fn unrecord(&mut self, uid: &str, decision: &Decision) {
        let Some(events) = self.objects.get_mut(&uid_key(uid)) else {
            return;
        };
        match *decision {
            Decision::Create { stamp, .. } => events.written.retain(|w| w.stamp != stamp),
            Decision::Fold { stamp, .. } => {
                if let Some(entry) = events.written.iter_mut().find(|w| w.stamp == stamp) {
                    entry.count -= 1;
                }
            }
            Decision::Skip | Decision::Suppressed => {}
        }
    }

    /// Forgets an object (deleted): a re-created one has a new UID anyway.
    pub(super) fn forget(&mut self, uid: &str) {
        self.objects.remove(&uid_key(uid));
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.objects.len()
    }
}

/// Appends `entry` as the most recent Event, forgetting the oldest beyond
/// [`SERIES_PER_OBJECT`].
fn push<K>(written: &mut SmallVec<[Written<K>; 1]>, entry: Written<K>) {
    if written.len() == SERIES_PER_OBJECT {
        written.remove(0);
    }
    written.push(entry);
}

/// The note hash of every combined Event (no note of its own hashes to it but by chance).
const COMBINED_NOTE: u64 = u64::MAX;

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
mod tests;
