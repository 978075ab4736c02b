//! What an accepted change hint does: it marks the FerrVaultSecrets that read its vault (and,
//! when it names secrets, select one of them) due, and enqueues them. Their pass is due with the
//! trigger `hint` ([`HintMarks::is_marked`]) and takes the mark when it reveals
//! ([`HintMarks::take`]): through the credential's limiter, reading nothing requested before the
//! window closed (never an answer kept from before the hints). A hint carries no data.
//!
//! # Coalescing
//! The first hint opens a window of [`COALESCE_WINDOW`]; hints arriving within it are gathered
//! (by vault, names merged); when it closes, the matching objects are marked and enqueued once.
//! The passes of one credential's objects share one reveal (the client's single-flight: the
//! first one read since the window closed serves the others, however far apart the worker pool
//! runs them within its wave), so a thousand hints for one vault cost one reveal per credential.
//! An object already marked is not enqueued again.
//!
//! # Guarantees
//! - A hint for a vault no object reads marks nothing and enqueues nothing.
//! - The marks live in memory only (a restart syncs everything anyway) and hold only objects
//!   the store held when their window closed: at most one entry per FerrVaultSecret.
//! - A window gathers at most the hints the endpoint's bucket admits in it; each vault's names
//!   at most [`MAX_NAMES`] (beyond, "any name").
//! - An object whose store copy dropped its selector (partially cached) counts as reading every
//!   name: it may sync once more than needed, never once less.

use std::{
    collections::{BTreeSet, HashMap},
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use controller_actors::{Cause, ObjectKey, QueueHandle};
use kube::ResourceExt;
use tokio::time::Instant;

use crate::{
    api::{FerrVaultSecret, Lenient},
    hints::{Hint, HintSink, body::MAX_NAMES},
    reconcile::{read::Scoped, settings::SECRET_CONTROLLER},
};

/// How long hints are gathered before their objects are enqueued.
pub(crate) const COALESCE_WINDOW: Duration = Duration::from_secs(1);

/// Names a window gathered for one vault; `None`: any name.
type Names = Option<BTreeSet<String>>;

/// The marks, the open window and the store they are matched against. Shared by the hint
/// endpoint (through [`HintDispatch`]) and the FerrVaultSecret passes.
#[derive(Default)]
pub struct HintMarks {
    state: Mutex<MarkState>,
    /// The `ferrvaultsecret` watches' stores, set by each `install`.
    store: Mutex<Option<Scoped<Lenient<FerrVaultSecret>>>>,
}

#[derive(Default)]
struct MarkState {
    /// `(namespace, name)` of the FerrVaultSecrets a hint made due, until their pass takes it,
    /// with when the window that marked them closed (their read must not be older).
    marked: HashMap<(String, String), Instant>,
    /// The hints of the open window by vault; `None`: no window open.
    gathering: Option<HashMap<String, Names>>,
}

impl HintMarks {
    /// Matches hints against `store` from now on.
    pub(crate) fn watch_store(&self, store: Scoped<Lenient<FerrVaultSecret>>) {
        *self.store.lock().unwrap_or_else(PoisonError::into_inner) = Some(store);
    }

    /// Whether a hint made `namespace/name` due since its last hinted reveal.
    pub(crate) fn is_marked(&self, namespace: &str, name: &str) -> bool {
        self.lock()
            .marked
            .contains_key(&(namespace.to_owned(), name.to_owned()))
    }

    /// Takes the mark of `namespace/name`: when the window that marked it closed (its reveal
    /// must not be older), or `None` when it is not marked.
    pub(crate) fn take(&self, namespace: &str, name: &str) -> Option<Instant> {
        self.lock()
            .marked
            .remove(&(namespace.to_owned(), name.to_owned()))
    }

    /// Gathers `hint` into the open window; `true` when it opened the window.
    fn gather(&self, hint: Hint) -> bool {
        let mut state = self.lock();
        let opened = state.gathering.is_none();
        let names = state
            .gathering
            .get_or_insert_with(HashMap::new)
            .entry(hint.vault)
            .or_insert_with(|| Some(BTreeSet::new()));
        *names = match (names.take(), hint.names) {
            (Some(mut gathered), Some(more)) => {
                gathered.extend(more);
                (gathered.len() <= MAX_NAMES).then_some(gathered)
            }
            (None, _) | (_, None) => None,
        };
        opened
    }

    /// Closes the window: marks the objects its hints match and returns those newly marked.
    fn close_window(&self) -> Vec<(String, String)> {
        let store = self.store.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let mut state = self.lock();
        let Some(gathered) = state.gathering.take() else {
            return Vec::new();
        };
        let Some(store) = store else {
            return Vec::new();
        };
        let objects = store.state();
        let closed = Instant::now();
        let mut newly = Vec::new();
        for cr in objects.iter().filter_map(|object| object.valid()) {
            let Some(names) = gathered.get(&cr.spec.vault) else {
                continue;
            };
            if !selects_any(cr, names.as_ref()) {
                continue;
            }
            let key = (cr.namespace().unwrap_or_default(), cr.name_any());
            if state.marked.insert(key.clone(), closed).is_none() {
                newly.push(key);
            }
        }
        // Marks of objects gone from the store would never be taken.
        state
            .marked
            .retain(|(namespace, name), _| store.get(namespace, name).is_some());
        newly
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MarkState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether `cr` selects one of `names` (`None`: any): an object selecting every key does.
fn selects_any(cr: &FerrVaultSecret, names: Option<&BTreeSet<String>>) -> bool {
    let selected = cr.spec.selected_names();
    match names {
        None => true,
        Some(_) if selected.is_empty() => true,
        Some(names) => selected.iter().any(|name| names.contains(name)),
    }
}

/// The [`HintSink`] of the process: gathers hints in [`HintMarks`] and enqueues the marked
/// objects when the window closes.
pub(crate) struct HintDispatch {
    marks: Arc<HintMarks>,
    queues: QueueHandle,
}

impl HintDispatch {
    /// Dispatches into `marks`, enqueueing through `queues`.
    pub(crate) fn new(marks: Arc<HintMarks>, queues: QueueHandle) -> HintDispatch {
        HintDispatch { marks, queues }
    }
}

impl HintSink for HintDispatch {
    fn is_accepting(&self) -> bool {
        self.queues.is_running(SECRET_CONTROLLER)
    }

    fn hint(&self, hint: Hint) {
        if !self.marks.gather(hint) {
            return;
        }
        let (marks, queues) = (self.marks.clone(), self.queues.clone());
        tokio::spawn(async move {
            tokio::time::sleep(COALESCE_WINDOW).await;
            for (namespace, name) in marks.close_window() {
                queues.enqueue(
                    ObjectKey::namespaced(SECRET_CONTROLLER, namespace, name),
                    Cause::Event,
                );
            }
        });
    }
}

#[cfg(test)]
mod tests;
