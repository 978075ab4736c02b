//! Watch specs: what one watcher actor watches, how its events map to keys (its
//! [`Route`]s), and which changes matter. Both kinds of watch (full objects, metadata only) are
//! one generic [`WatchSpec`]; both implement [`WatchSource`](crate::seams::WatchSource) (in
//! `watcher.rs`, which turns a spec into a watcher actor) so the runtime keeps them in one list.
//!
//! # Guarantees
//! - The [`WatchStore`] returned by the constructors stays valid across watcher restarts:
//!   the spec owns the one store writer, and a watcher incarnation takes it exclusively for its
//!   lifetime (a new incarnation waits until the previous stream task is gone).
//! - Metadata-only specs (`Api<PartialObjectMeta<K>>`) request `as=PartialObjectMetadata`, so
//!   their store holds metadata only and memory does not grow with object size.
//! - A spec with a projection ([`WatchSpec::trim`]) stores, filters and maps only what the
//!   projection keeps: the store does not grow with the fields it drops.
//! - A spec with several routes ([`WatchSpec::route`]) lists, watches and stores its kind once:
//!   each route judges and maps every change after the store took it (see `watch_route.rs`).
//! - A spec kept to some namespaces ([`WatchSpec::only_namespaces`], a replica's shards) drops
//!   every other object before the store, the filter and the mapper see it: the store holds
//!   the kept namespaces' objects only, and no other object is ever queued.

use std::{fmt::Debug, sync::Arc};

use kube::{Api, Resource, core::PartialObjectMeta, runtime::watcher};
use serde::de::DeserializeOwned;

use crate::{
    key::ObjectKey,
    watch_route::Route,
    watch_store::{WatchStore, WatchStoreWriter, watch_store},
};

/// What a watched kind must be: a Kubernetes resource without a runtime type (typed structs,
/// CRDs from kube-derive, `PartialObjectMeta<K>`).
pub trait Watched:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
}

impl<K> Watched for K where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
}

/// One watch: kind, scope and selectors (via `api` and `config`), and the routes from its
/// changes to keys (key mapper and change filter).
///
/// Build with [`WatchSpec::full`] or [`WatchSpec::metadata`], then `.map(..)` and optionally
/// `.matters(..)` (the first route), and `.route(..)` for each further mapping of the same
/// kind. Without `.map`, an object maps to nothing (the store is still kept current).
#[must_use]
pub struct WatchSpec<K: Watched> {
    shared: Arc<SpecShared<K>>,
}

/// What every incarnation of the spec's watcher shares.
pub(crate) struct SpecShared<K: Watched> {
    /// Display name (also in `WatchState`).
    pub(crate) name: String,
    /// The API to list and watch (scope: all namespaces or one).
    pub(crate) api: Api<K>,
    /// Selectors, bookmarks, list semantics.
    pub(crate) config: watcher::Config,
    /// The store's only writer; a stream task holds the lock for its whole life.
    pub(crate) writer: Arc<tokio::sync::Mutex<WatchStoreWriter<K>>>,
    /// Where changes go, in order; never empty: the first is the one `.map`, `.matters` and
    /// `.listed_as_change` configure.
    pub(crate) routes: Vec<Route<K>>,
    /// Drops what nobody reads before the object reaches the filter and the store.
    pub(crate) trim: fn(&mut K),
    /// Whether objects of a namespace (`""`: cluster-scoped) reach the store at all.
    pub(crate) keeps_namespace: Arc<dyn Fn(&str) -> bool + Send + Sync>,
}

impl<K: Watched> WatchSpec<K> {
    /// Watch full objects of kind `K` through `api` (`Api::all` or `Api::namespaced` for
    /// `--watch-namespace`), with `config`'s selectors; returns the spec and the reader of the
    /// store it keeps current. Bookmarks are on unless `config` disables them.
    pub fn full(name: impl Into<String>, api: Api<K>, config: watcher::Config) -> (Self, WatchStore<K>) {
        let (store, writer) = watch_store();
        let shared = SpecShared {
            name: name.into(),
            api,
            config,
            writer: Arc::new(tokio::sync::Mutex::new(writer)),
            routes: vec![Route::default()],
            trim: |_| {},
            keeps_namespace: Arc::new(|_| true),
        };
        (
            Self {
                shared: Arc::new(shared),
            },
            store,
        )
    }

    /// Map each changed object to the keys to reconcile.
    ///
    /// NOTE: runs inside the watcher actor's `handle`: a panic fails the actor and the
    /// supervisor restarts it (the event is lost; the re-list after the restart repeats it only
    /// if the object changed meanwhile).
    pub fn map(self, mapper: impl Fn(&K) -> Vec<ObjectKey> + Send + Sync + 'static) -> Self {
        self.with(|s| s.first_route().mapper = Arc::new(mapper))
    }

    /// Replace the default filter (`watch_filter::metadata_change_matters`: generation, labels,
    /// annotations, owners, finalizers, deletion); deletions and objects that vanished during
    /// a re-list always matter.
    pub fn matters(self, matters: impl Fn(Option<&K>, &K) -> bool + Send + Sync + 'static) -> Self {
        self.with(|s| s.first_route().matters = Arc::new(matters))
    }

    /// Queue a listed object for which `unsettled` holds as a change (the `Changed` lane)
    /// rather than a refresh: it needs a pass whatever the stores hold (never reconciled at its
    /// generation, being deleted …), so it neither waits for the other watches' first lists nor
    /// queues behind a start's backlog. By default every listed object is a refresh.
    pub fn listed_as_change(self, unsettled: impl Fn(&K) -> bool + Send + Sync + 'static) -> Self {
        self.with(|s| s.first_route().unsettled = Arc::new(unsettled))
    }

    /// Map every change of this watch a further way: `route` judges each change with its own
    /// filter and maps it with its own mapper, after the store took it, like the first route.
    /// One watch per kind can so feed every key mapping that needs the kind (one list, one
    /// stream, one store), and a key any route queues always finds its cause in the store.
    pub fn route(self, route: Route<K>) -> Self {
        self.with(|s| s.routes.push(route))
    }

    /// Keep only a projection of each object: `trim` runs on every listed or watched object
    /// before the filter, the mapper and the store see it (after the runtime has dropped
    /// `managedFields` and kubectl's last-applied copy), so the store holds what `trim` leaves
    /// and the filter judges a change by it: a change of a field `trim` drops matters to nothing.
    ///
    /// NOTE: replaces the spec's own projection; for [`WatchSpec::metadata`] (which forgets the
    /// constant `apiVersion` and `kind`), `trim` should drop them too.
    pub fn trim(self, trim: fn(&mut K)) -> Self {
        self.with(|s| s.trim = trim)
    }

    /// Keep only the objects of the namespaces `keeps` accepts (`""` for a cluster-scoped
    /// object), e.g. those of the shards this replica holds: every other listed or watched
    /// object is dropped before the store, the filter and the mapper see it.
    ///
    /// NOTE: judged per event while the watch runs; when the namespaces `keeps` accepts
    /// change, restart the watch (a re-list) so the store gains the newly kept objects and
    /// forgets the others.
    pub fn only_namespaces(self, keeps: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.with(|s| s.keeps_namespace = Arc::new(keeps))
    }

    /// What every incarnation of this spec's watcher shares.
    pub(crate) fn shared(&self) -> &Arc<SpecShared<K>> {
        &self.shared
    }

    fn with(self, edit: impl FnOnce(&mut SpecShared<K>)) -> Self {
        let mut shared = Arc::into_inner(self.shared).expect("a spec is configured before it is shared");
        edit(&mut shared);
        Self {
            shared: Arc::new(shared),
        }
    }
}

impl<K: Watched> SpecShared<K> {
    /// Whether `event` reaches the store: list boundaries always do, objects only when their
    /// namespace is kept.
    pub(crate) fn keeps(&self, event: &watcher::Event<K>) -> bool {
        match event {
            watcher::Event::Apply(object)
            | watcher::Event::InitApply(object)
            | watcher::Event::Delete(object) => {
                (self.keeps_namespace)(object.meta().namespace.as_deref().unwrap_or_default())
            }
            watcher::Event::Init | watcher::Event::InitDone => true,
        }
    }

    /// The route `.map`, `.matters` and `.listed_as_change` configure.
    fn first_route(&mut self) -> &mut Route<K> {
        self.routes
            .first_mut()
            .expect("a spec's routes are never empty: the constructors add the first")
    }
}

impl<K: Watched> WatchSpec<PartialObjectMeta<K>>
where
    PartialObjectMeta<K>: Watched,
{
    /// Watch only the metadata of kind `K` (`api` is e.g.
    /// `Api::<PartialObjectMeta<Secret>>::all(client)`): the same as [`WatchSpec::full`] over
    /// `PartialObjectMeta<K>`, named for the intent, except that stored objects forget their
    /// `apiVersion` and `kind` (always `meta.k8s.io/v1` `PartialObjectMetadata`: two strings per
    /// object).
    pub fn metadata(
        name: impl Into<String>,
        api: Api<PartialObjectMeta<K>>,
        config: watcher::Config,
    ) -> (Self, WatchStore<PartialObjectMeta<K>>) {
        let (spec, store) = Self::full(name, api, config);
        (spec.with(|s| s.trim = |meta| meta.types = None), store)
    }
}
