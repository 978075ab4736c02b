//! Which target Secret versions the operator wrote itself, so the Secret watch can tell our
//! writes from somebody else's edits (drift) without a second reveal per write.
//!
//! A write's watch event can arrive before the write's response, so a Secret is marked
//! [`WriteState::InFlight`] *before* the write: events seen then are assumed ours, but their
//! versions are kept, and [`OwnWrites::finish`] reports whether any of them was not the version
//! our write produced (a foreign edit that raced the write), so the reconciler looks again.
//!
//! # Invariants
//! At most one entry per Secret; bounded by the number of targets.

use std::{
    collections::HashMap,
    sync::{Mutex, PoisonError},
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
    /// Our last write produced this version.
    Written(String),
}

/// `(namespace, name)` of a Secret.
type SecretKey = (String, String);

/// Resource versions the operator produced; shared by the reconciler and the watch filter.
#[derive(Default)]
pub struct OwnWrites {
    writes: Mutex<HashMap<SecretKey, WriteState>>,
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
        let previous = writes.remove(&key(namespace, name));
        if let Some(rv) = resource_version {
            writes.insert(key(namespace, name), WriteState::Written(rv.to_owned()));
        }
        match previous {
            Some(WriteState::InFlight { seen }) => seen.iter().any(|v| Some(v.as_str()) != resource_version),
            Some(WriteState::Written(_)) | None => false,
        }
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
        match self.lock().get_mut(&id) {
            Some(WriteState::InFlight { seen }) => {
                seen.push(rv.clone());
                true
            }
            Some(WriteState::Written(ours)) => ours == rv,
            None => false,
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
        assert!(own.is_own(&meta("7")), "event after the response");
        assert!(!own.is_own(&meta("8")), "a later edit is foreign");
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
    fn a_failed_write_should_forget_the_secret() {
        let own = OwnWrites::default();
        own.begin("ns", "app");
        assert!(!own.finish("ns", "app", None));
        assert!(!own.is_own(&meta("7")));
    }
}
