//! What a watch reports about its stream, and to whom: the contract between the watcher
//! actors (writers) and health and the tree dump (readers, through the runtime's
//! `Directory`, which implements [`WatchReporter`]).

use std::time::SystemTime;

/// The connection state of one watch stream, as shown in health and the actor tree.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct WatchState {
    /// The watch's name, e.g. `"FerrVaultSecret"` or `"Secret (metadata)"`.
    pub name: String,
    /// This watcher incarnation completed its initial list at least once, so its store and
    /// the keys it enqueued cover every object: what readiness checks. Never cleared within an
    /// incarnation (a stream error is retried and resumes or re-lists on its own; a restarted
    /// watcher reports a fresh, unsynced state).
    pub synced: bool,
    /// Informative only: the stream completed a list and no error came since. A stream error
    /// clears it; the next completed list sets it again. An error recovered without a re-list
    /// leaves no trace in the stream, so it may stay false while the watch works.
    pub connected: bool,
    /// When the last event (including bookmarks and errors) arrived.
    pub last_event_at: Option<SystemTime>,
    /// Events received since this watcher incarnation started.
    pub events: u64,
    /// Stream errors since this watcher incarnation started (each one is retried with backoff).
    pub errors: u64,
    /// A short, secret-free description of the last error.
    pub last_error: Option<String>,
}

impl WatchState {
    /// The state of a watch named `name` that has not received anything yet.
    pub fn starting(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            synced: false,
            connected: false,
            last_event_at: None,
            events: 0,
            errors: 0,
            last_error: None,
        }
    }
}

/// Receives watch state changes (implemented by the runtime; forwards to the health actor).
pub trait WatchReporter: Send + Sync + 'static {
    /// Record a new state for the watch named `state.name`.
    fn report(&self, state: WatchState);
}
