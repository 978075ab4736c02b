//! Which target Secret versions the operator wrote itself, so the Secret watch can tell our
//! writes from somebody else's edits (drift) without a second reveal per write.
//!
//! A write's watch event can arrive before the write's response, so a Secret is marked
//! [`WriteState::InFlight`] *before* the write: events seen then are assumed ours, but their
//! versions are kept, and [`OwnWrites::finish`] reports whether any of them was not the version
//! our write produced (a foreign edit that raced the write), so the reconciler looks again.
//!
//! It can also arrive after the response: until then the Secret store does not show our write
//! ([`OwnWrites::arriving`]), and a pass that runs meanwhile (one queued behind the sync that
//! wrote) must not take that for a change.
//!
//! It also keeps the ClusterFerrVaultSecret copies someone else changed (their watch event was
//! not ours), so the next pass rewrites them whatever their content-hash annotation says.
//!
//! # Invariants
//! At most one entry per Secret, held while a write is in flight or its watch event has not been
//! seen: bounded by the number of targets, and in the steady state by the recent writes. At most
//! one mark per copy, removed by the pass that writes it again: bounded by the copies.

use std::{
    collections::{HashMap, HashSet},
    sync::{Mutex, PoisonError},
    time::{Duration, Instant},
};

use kube::api::ObjectMeta;

/// What we know about our writes to one Secret.
#[derive(Debug, Clone, PartialEq, Eq)]
enum WriteState {
    /// A write is being sent; events are assumed ours, their versions collected.
    InFlight {
        /// Versions of events seen during the write.
        seen: Vec<String>,
    },
    /// Our last write produced `version`, at `at`, and its watch event has not been seen yet
    /// (once seen, the entry goes: the store shows the write).
    Written { version: String, at: Instant },
}

/// How long after our write its watch event is expected at most: past that, a store that does
/// not show it has lost it (a re-list that skipped it), and is believed.
pub(crate) const WATCH_LAG: Duration = Duration::from_secs(5);

/// `(namespace, name)` of a Secret.
type SecretKey = (String, String);

/// Resource versions the operator produced; shared by the reconciler and the watch filter.
#[derive(Default)]
pub struct OwnWrites {
    writes: Mutex<HashMap<SecretKey, WriteState>>,
    /// ClusterFerrVaultSecret copies someone else changed since the operator last wrote them
    /// (their watch event was not ours): at most one entry per copy, removed by the pass that
    /// writes it again.
    copies_changed: Mutex<HashSet<SecretKey>>,
}

impl OwnWrites {
    /// Marks a write of `namespace/name` as starting.
    pub fn begin(&self, namespace: &str, name: &str) {
        self.lock()
            .insert(key(namespace, name), WriteState::InFlight { seen: Vec::new() });
    }

    /// Records how the write ended (`None`: it failed). Returns `true` when an event seen
    /// during the write carried another version than ours: someone else changed the Secret
    /// meanwhile and it must be looked at again.
    pub fn finish(&self, namespace: &str, name: &str, resource_version: Option<&str>) -> bool {
        let mut writes = self.lock();
        let seen = match writes.remove(&key(namespace, name)) {
            Some(WriteState::InFlight { seen }) => seen,
            Some(WriteState::Written { .. }) | None => Vec::new(),
        };
        if let Some(rv) = resource_version
            && !seen.iter().any(|v| v == rv)
        {
            let written = WriteState::Written {
                version: rv.to_owned(),
                at: Instant::now(),
            };
            writes.insert(key(namespace, name), written);
        }
        seen.iter().any(|v| Some(v.as_str()) != resource_version)
    }

    /// Whether `version` of `namespace/name` is our last write, less than [`WATCH_LAG`] old
    /// at `now`, whose watch event has not been seen yet: a Secret store not showing it is
    /// behind, and the Secret as that write left it. (The watch filter sees an event just
    /// before the store applies it: in between, this says no and the pass reads as usual.)
    pub fn arriving(&self, namespace: &str, name: &str, version: &str, now: Instant) -> bool {
        matches!(
            self.lock().get(&key(namespace, name)),
            Some(WriteState::Written { version: ours, at })
                if ours == version && now.saturating_duration_since(*at) < WATCH_LAG
        )
    }

    /// Marks copy `namespace/name` as changed by someone else: whatever its annotations say, its
    /// next pass reads and rewrites it (its data may have been edited under our content hash).
    pub fn mark_copy_changed(&self, namespace: &str, name: &str) {
        self.changed().insert(key(namespace, name));
    }

    /// Whether copy `namespace/name` is marked as changed by someone else.
    pub fn copy_changed(&self, namespace: &str, name: &str) -> bool {
        self.changed().contains(&key(namespace, name))
    }

    /// Clears the mark of copy `namespace/name`; whether it was set.
    pub fn take_copy_changed(&self, namespace: &str, name: &str) -> bool {
        self.changed().remove(&key(namespace, name))
    }

    fn changed(&self) -> std::sync::MutexGuard<'_, HashSet<SecretKey>> {
        self.copies_changed.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the change to `meta` is (or is assumed to be, during a write) our own.
    pub fn is_own(&self, meta: &ObjectMeta) -> bool {
        let Some(rv) = meta.resource_version.as_ref() else {
            return false;
        };
        let id = key(
            meta.namespace.as_deref().unwrap_or_default(),
            meta.name.as_deref().unwrap_or_default(),
        );
        let mut writes = self.lock();
        match writes.get_mut(&id) {
            Some(WriteState::InFlight { seen }) => {
                seen.push(rv.clone());
                true
            }
            Some(WriteState::Written { version, .. }) if version == rv => {
                // Delivered: the store now shows our write, and a re-list repeating this
                // version is dropped by its unchanged `resourceVersion`.
                writes.remove(&id);
                true
            }
            Some(WriteState::Written { .. }) | None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SecretKey, WriteState>> {
        self.writes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn key(namespace: &str, name: &str) -> SecretKey {
    (namespace.to_owned(), name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(rv: &str) -> ObjectMeta {
        ObjectMeta {
            namespace: Some("ns".into()),
            name: Some("app".into()),
            resource_version: Some(rv.into()),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn our_write_should_be_own_whether_its_event_comes_before_or_after_the_response() {
        let own = OwnWrites::default();
        own.begin("ns", "app");
        assert!(own.is_own(&meta("7")), "event before the response");
        assert!(!own.finish("ns", "app", Some("7")), "nothing foreign seen");
        assert!(!own.is_own(&meta("8")), "a later edit is foreign");
        own.begin("ns", "app");
        assert!(!own.finish("ns", "app", Some("9")), "nothing seen");
        assert!(own.is_own(&meta("9")), "event after the response");
        assert!(!own.is_own(&meta("10")), "a later edit is foreign");
    }

    #[test]
    fn a_foreign_edit_racing_our_write_should_be_reported_by_finish() {
        let own = OwnWrites::default();
        own.begin("ns", "app");
        assert!(own.is_own(&meta("7")));
        assert!(own.is_own(&meta("8")));
        assert!(own.finish("ns", "app", Some("7")), "version 8 was not ours");
    }

    #[test]
    fn our_write_should_be_arriving_until_its_event_is_seen_or_too_old() {
        let own = OwnWrites::default();
        own.begin("ns", "app");
        own.finish("ns", "app", Some("7"));
        let now = Instant::now();
        assert!(own.arriving("ns", "app", "7", now), "its event not seen yet");
        assert!(!own.arriving("ns", "app", "6", now), "another version");
        assert!(!own.arriving("ns", "other", "7", now), "another Secret");
        assert!(!own.arriving("ns", "app", "7", now + WATCH_LAG), "too old: lost");
        assert!(!own.is_own(&meta("8")), "a foreign edit");
        assert!(own.arriving("ns", "app", "7", now), "not ours: still waited for");
        assert!(own.is_own(&meta("7")));
        assert!(!own.arriving("ns", "app", "7", now), "its event seen");
    }

    #[test]
    fn an_event_seen_during_the_write_should_have_delivered_it() {
        let own = OwnWrites::default();
        own.begin("ns", "app");
        assert!(own.is_own(&meta("7")));
        own.finish("ns", "app", Some("7"));
        assert!(!own.arriving("ns", "app", "7", Instant::now()));
    }

    #[test]
    fn a_copy_marked_changed_should_stay_marked_until_its_pass_takes_the_mark() {
        let own = OwnWrites::default();
        assert!(!own.copy_changed("ns", "copy"));
        own.mark_copy_changed("ns", "copy");
        own.mark_copy_changed("ns", "copy");
        assert!(own.copy_changed("ns", "copy") && !own.copy_changed("ns", "other"));
        assert!(own.take_copy_changed("ns", "copy"));
        assert!(!own.take_copy_changed("ns", "copy") && !own.copy_changed("ns", "copy"));
    }

    #[test]
    fn a_failed_write_should_forget_the_secret() {
        let own = OwnWrites::default();
        own.begin("ns", "app");
        assert!(!own.finish("ns", "app", None));
        assert!(!own.is_own(&meta("7")));
    }
}
