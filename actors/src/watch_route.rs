//! Routes: how the changes one watch sees become keys. A [`WatchSpec`](crate::watch_spec::WatchSpec)
//! has a first route (set with its `.map`, `.matters` and `.listed_as_change`) and may have
//! more ([`WatchSpec::route`](crate::watch_spec::WatchSpec::route)): one watch per kind then
//! feeds every key mapping that needs that kind, instead of one watch (one list, one stream,
//! one store) per mapping.
//!
//! # Guarantees
//! - Each route judges a change with its own filter and maps it with its own mapper; a route's
//!   keys are queued as refreshes or changes by its own `listed_as_change` rule.
//! - Every route maps a change only once the spec's store has taken it: the key of a watch
//!   event, whichever route queues it, reaches the queue after the store shows that event, so a
//!   pass it starts reads its cause (two watches' streams are not ordered with each other; the
//!   routes of one watch share its stream). A listed object shows when its list completes, as
//!   with one route.
//! - Deletions (and objects found gone by a re-list) always matter, to every route.

use std::sync::Arc;

use kube::Resource;

use crate::{key::ObjectKey, watch_filter};

/// Maps a watched object to the keys it affects (e.g. a token Secret to the connections using it).
pub(crate) type Mapper<K> = Arc<dyn Fn(&K) -> Vec<ObjectKey> + Send + Sync>;

/// Says whether a change from the previous version (`None`: first sighting) to `new` matters.
pub(crate) type Matters<K> = Arc<dyn Fn(Option<&K>, &K) -> bool + Send + Sync>;

/// Says whether a listed object needs a pass whatever the stores hold.
pub(crate) type Unsettled<K> = Arc<dyn Fn(&K) -> bool + Send + Sync>;

/// One way a watch's changes become keys: a mapper, the filter that says which changes matter to
/// it, and which listed objects it queues as changes rather than refreshes.
///
/// Build with [`Route::map`], then optionally `.matters(..)` and `.listed_as_change(..)`; add it
/// to a spec with [`WatchSpec::route`](crate::watch_spec::WatchSpec::route).
#[must_use]
pub struct Route<K> {
    /// Object → keys.
    pub(crate) mapper: Mapper<K>,
    /// (previous, new) → enqueue?
    pub(crate) matters: Matters<K>,
    /// A listed object → queue it as a change rather than a refresh?
    pub(crate) unsettled: Unsettled<K>,
}

impl<K: Resource + 'static> Route<K> {
    /// A route mapping each changed object to the keys `mapper` returns, with the default
    /// filter (`watch_filter::metadata_change_matters`) and every listed object a refresh.
    ///
    /// NOTE: runs inside the watcher's stream task: a panic fails the watcher actor and the
    /// supervisor restarts it (the event is lost; the re-list after the restart repeats it only
    /// if the object changed meanwhile).
    pub fn map(mapper: impl Fn(&K) -> Vec<ObjectKey> + Send + Sync + 'static) -> Self {
        Self {
            mapper: Arc::new(mapper),
            ..Self::default()
        }
    }

    /// Replace the default filter (`watch_filter::metadata_change_matters`: generation, labels,
    /// annotations, owners, finalizers, deletion); deletions and objects that vanished during
    /// a re-list always matter.
    pub fn matters(self, matters: impl Fn(Option<&K>, &K) -> bool + Send + Sync + 'static) -> Self {
        Self {
            matters: Arc::new(matters),
            ..self
        }
    }

    /// Queue a listed object for which `unsettled` holds as a change (the `Changed` lane)
    /// rather than a refresh: it needs a pass whatever the stores hold (never reconciled at its
    /// generation, being deleted …), so it neither waits for the other watches' first lists nor
    /// queues behind a start's backlog. By default every listed object is a refresh.
    pub fn listed_as_change(self, unsettled: impl Fn(&K) -> bool + Send + Sync + 'static) -> Self {
        Self {
            unsettled: Arc::new(unsettled),
            ..self
        }
    }
}

/// A route that maps every object to nothing: what a spec starts with before its `.map`.
impl<K: Resource + 'static> Default for Route<K> {
    fn default() -> Self {
        Self {
            mapper: Arc::new(|_: &K| Vec::new()),
            matters: Arc::new(|old: Option<&K>, new: &K| {
                watch_filter::metadata_change_matters(old.map(Resource::meta), new.meta())
            }),
            unsettled: Arc::new(|_: &K| false),
        }
    }
}
