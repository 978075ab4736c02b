//! A deadline that callers joining a shared request can push later.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::time::Instant;

/// The instant a piece of work must be done by. Cheap to clone; clones share the value.
///
/// A single-flight request starts with its first caller's deadline; each caller that joins
/// while it is still waiting for budget extends it to the latest of all their deadlines, so
/// one impatient caller cannot cancel the request the others are waiting for.
#[derive(Clone, Debug)]
pub(crate) struct Deadline(Arc<Mutex<Instant>>);

impl Deadline {
    /// A deadline at `at`.
    pub(crate) fn new(at: Instant) -> Self {
        Self(Arc::new(Mutex::new(at)))
    }

    /// The current deadline.
    pub(crate) fn get(&self) -> Instant {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Moves the deadline to `at` if that is later; never earlier.
    pub(crate) fn extend_to(&self, at: Instant) {
        let mut current = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *current = (*current).max(at);
    }
}
