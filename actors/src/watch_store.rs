//! The store a watch keeps: every object of the watch, found by namespace and name, for the
//! reconcilers to read instead of the API server.
//!
//! It replaces kube-runtime's reflector store, which keys each object with a copy of its name,
//! namespace, resourceVersion and uid (`ObjectRef`): about 200 bytes per object beside the
//! object, some 45 MiB at 100,000 FerrVaultSecrets and their target Secrets
//! (docs/architecture.md §7). This one finds an object by its own metadata, stores the watch's
//! objects without cloning them, and tells at the end of a re-list which stored objects the list
//! no longer had, without a set of the listed keys beside the two tables.
//!
//! Objects are kept per namespace, so the watches' routes, which ask for the objects of one
//! namespace on each event, cost that namespace's objects and not the cluster's: a tenant's
//! many objects in its own namespace do not slow the routes of every other namespace.
//!
//! # Guarantees
//! - A (re-)list replaces the contents at once when it completes; until then readers see the
//!   previous contents (as with kube-runtime's store).
//! - [`WatchStore::wait_until_listed`] wakes every waiter when the first list completes, and
//!   fails once the writer is gone without one. [`WatchStoreWriter::unlist`] makes readers wait
//!   again, for the next list: a new leadership term's.

use std::{
    collections::HashMap,
    hash::{BuildHasher, RandomState},
    sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard},
};

use hashbrown::HashTable;
use kube::{Resource, runtime::watcher::Event};
use tokio::sync::watch;

/// The watch filling a store ended before its first list completed (shutdown).
#[derive(Debug, thiserror::Error)]
#[error("the watch filling this store is gone")]
pub struct WatchGone;

/// What readers hold of a watch's store: cheap to clone, every clone sees the same objects.
pub struct WatchStore<K> {
    objects: Arc<RwLock<Objects<K>>>,
    listed: watch::Receiver<bool>,
}

impl<K> Clone for WatchStore<K> {
    fn clone(&self) -> Self {
        Self {
            objects: self.objects.clone(),
            listed: self.listed.clone(),
        }
    }
}

/// The store's only writer; it applies the watch's events.
pub struct WatchStoreWriter<K> {
    store: WatchStore<K>,
    /// The (re-)list under way: the objects listed so far.
    relisting: Option<Objects<K>>,
    listed: watch::Sender<bool>,
}

/// A new, empty store and its writer.
pub fn watch_store<K: Resource>() -> (WatchStore<K>, WatchStoreWriter<K>) {
    let (listed, listed_rx) = watch::channel(false);
    let store = WatchStore {
        objects: Arc::new(RwLock::new(Objects::default())),
        listed: listed_rx,
    };
    let writer = WatchStoreWriter {
        store: store.clone(),
        relisting: None,
        listed,
    };
    (store, writer)
}

impl<K: Resource> WatchStore<K> {
    /// `namespace/name` (namespace `""` for a cluster-scoped kind), if the store holds it.
    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        self.read().get((namespace, name)).cloned()
    }

    /// Every stored object, in no particular order.
    pub fn state(&self) -> Vec<Arc<K>> {
        self.read().iter().cloned().collect()
    }

    /// The stored objects of `namespace` (`""`: those of a cluster-scoped kind), in no
    /// particular order; it costs their number, not the store's.
    pub fn in_namespace(&self, namespace: &str) -> Vec<Arc<K>> {
        self.read()
            .namespaces
            .get(namespace)
            .map(|named| named.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// How many objects the store holds.
    pub fn len(&self) -> usize {
        self.read().len
    }

    /// Whether the store holds no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the first list has completed.
    pub fn is_listed(&self) -> bool {
        *self.listed.borrow()
    }

    /// Waits until the first list has completed.
    ///
    /// # Errors
    /// The writer is gone without one.
    pub async fn wait_until_listed(&self) -> Result<(), WatchGone> {
        let mut listed = self.listed.clone();
        listed
            .wait_for(|listed| *listed)
            .await
            .map(drop)
            .map_err(|_| WatchGone)
    }

    fn read(&self) -> RwLockReadGuard<'_, Objects<K>> {
        // The writer only inserts and removes under the lock: a panic there leaves a whole table.
        self.objects.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Objects<K>> {
        self.objects.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What applying one watch event did.
pub enum Applied<K> {
    /// A (re-)list started.
    Relisting,
    /// An object stored (a listed one shows once its list completes).
    Stored {
        /// The object, as now stored.
        object: Arc<K>,
        /// The version readers saw before this event, if any.
        previous: Option<Arc<K>>,
        /// It came from a (re-)list, not from a watch event.
        listed: bool,
    },
    /// The object, now gone from the store.
    Deleted(K),
    /// The (re-)list completed and replaced the contents; these were stored but not listed.
    Listed {
        /// The objects deleted while the watch was down.
        vanished: Vec<Arc<K>>,
    },
}

impl<K: Resource> WatchStoreWriter<K> {
    /// Makes readers wait for the next list to complete before they read: a new leadership
    /// term's watch lists afresh, under shards with other namespaces kept, and until that list
    /// completes the previous term's contents would show an object of a newly held shard as
    /// absent (a pass would take it for deleted, and its key would be spent).
    pub fn unlist(&mut self) {
        self.listed.send_replace(false);
    }

    /// Applies one watch event.
    pub fn apply(&mut self, event: Event<K>) -> Applied<K> {
        match event {
            Event::Init => {
                self.relisting = Some(Objects::default());
                Applied::Relisting
            }
            Event::InitApply(object) => {
                let object = Arc::new(object);
                let previous = self.store.read().get(key_of(&*object)).cloned();
                self.relisting.get_or_insert_default().insert(object.clone());
                Applied::Stored {
                    object,
                    previous,
                    listed: true,
                }
            }
            Event::Apply(object) => {
                let object = Arc::new(object);
                let previous = self.store.write().insert(object.clone());
                Applied::Stored {
                    object,
                    previous,
                    listed: false,
                }
            }
            Event::Delete(object) => {
                self.store.write().remove(key_of(&object));
                Applied::Deleted(object)
            }
            Event::InitDone => {
                let listed = self.relisting.take();
                let previous = std::mem::replace(&mut *self.store.write(), listed.unwrap_or_default());
                self.listed.send_replace(true);
                let now = self.store.read();
                let vanished = previous
                    .namespaces
                    .into_values()
                    .flatten()
                    .filter(|object| now.get(key_of(&**object)).is_none())
                    .collect();
                Applied::Listed { vanished }
            }
        }
    }
}

/// Namespace (`""` when cluster-scoped) and name: what identifies an object in a store.
type Key<'a> = (&'a str, &'a str);

fn key_of<K: Resource>(object: &K) -> Key<'_> {
    let meta = object.meta();
    (
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default(),
    )
}

/// Objects found by the key in their own metadata: a table of names per namespace, one
/// pointer per object in them.
struct Objects<K> {
    namespaces: HashMap<Box<str>, HashTable<Arc<K>>>,
    hasher: RandomState,
    len: usize,
}

impl<K> Default for Objects<K> {
    fn default() -> Self {
        Self {
            namespaces: HashMap::new(),
            hasher: RandomState::new(),
            len: 0,
        }
    }
}

impl<K: Resource> Objects<K> {
    fn get(&self, (namespace, name): Key<'_>) -> Option<&Arc<K>> {
        self.namespaces
            .get(namespace)?
            .find(self.hasher.hash_one(name), |o| name_of(&**o) == name)
    }

    /// Stores `object`; returns the version it replaced, if any.
    fn insert(&mut self, object: Arc<K>) -> Option<Arc<K>> {
        let Self {
            namespaces,
            hasher,
            len,
        } = self;
        let (namespace, name) = key_of(&*object);
        let named = match namespaces.get_mut(namespace) {
            Some(named) => named,
            None => namespaces.entry(namespace.into()).or_default(),
        };
        let hash = hasher.hash_one(name);
        match named.find_mut(hash, |o| name_of(&**o) == name) {
            Some(stored) => Some(std::mem::replace(stored, object)),
            None => {
                named.insert_unique(hash, object, |o| hasher.hash_one(name_of(&**o)));
                *len += 1;
                None
            }
        }
    }

    fn remove(&mut self, (namespace, name): Key<'_>) {
        let Some(named) = self.namespaces.get_mut(namespace) else {
            return;
        };
        if let Ok(entry) = named.find_entry(self.hasher.hash_one(name), |o| name_of(&**o) == name) {
            entry.remove();
            self.len -= 1;
            // A namespace's table goes with its last object: the store's size follows the
            // namespaces that hold objects, not every namespace ever seen.
            if named.is_empty() {
                self.namespaces.remove(namespace);
            }
        }
    }

    fn iter(&self) -> impl Iterator<Item = &Arc<K>> {
        self.namespaces.values().flatten()
    }
}

fn name_of<K: Resource>(object: &K) -> &str {
    key_of(object).1
}

#[cfg(test)]
mod tests;
