//! One watch's stores across the watched scopes: one store for the whole cluster, or one per
//! namespace with `--watch-namespace=a,b` (each namespace has its own watches).

use std::sync::Arc;

use controller_actors::WatchStore;
use kube::Resource;

/// A store per scope: `None` is the whole cluster, `Some(namespace)` one namespace.
#[derive(Clone)]
pub struct Scoped<K> {
    scopes: Vec<ScopeStore<K>>,
}

/// The store of one scope.
#[derive(Clone)]
struct ScopeStore<K> {
    scope: Option<String>,
    store: WatchStore<K>,
}

impl<K> Default for Scoped<K> {
    fn default() -> Self {
        Self { scopes: Vec::new() }
    }
}

impl<K: Resource> Scoped<K> {
    /// Adds the store of `scope` (`None`: every namespace).
    pub fn add(&mut self, scope: Option<&str>, store: WatchStore<K>) {
        self.scopes.push(ScopeStore {
            scope: scope.map(str::to_owned),
            store,
        });
    }

    /// The store holding `namespace`'s objects, if that namespace is watched.
    pub fn of(&self, namespace: &str) -> Option<&WatchStore<K>> {
        self.scopes
            .iter()
            .find(|s| s.scope.as_deref().is_none_or(|scope| scope == namespace))
            .map(|s| &s.store)
    }

    /// Whether a store holds `namespace`'s objects (else its reads go to the API server).
    pub fn covers(&self, namespace: &str) -> bool {
        self.of(namespace).is_some()
    }

    /// `namespace/name` as its scope's store holds it; `None` also for a namespace not watched.
    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        self.of(namespace)?.get(namespace, name)
    }

    /// The objects of `namespace`; none for a namespace not watched.
    pub fn in_namespace(&self, namespace: &str) -> Vec<Arc<K>> {
        self.of(namespace)
            .map(|store| store.in_namespace(namespace))
            .unwrap_or_default()
    }

    /// Every object of every scope.
    pub fn state(&self) -> Vec<Arc<K>> {
        self.scopes.iter().flat_map(|s| s.store.state()).collect()
    }

    /// Waits until every scope's store has completed its first list.
    ///
    /// # Errors
    /// A watch that fills one is gone (shutdown), as a `kube::Error` so callers report it like a
    /// failed read.
    pub async fn wait_until_listed(&self) -> Result<(), kube::Error> {
        for scope in &self.scopes {
            scope
                .store
                .wait_until_listed()
                .await
                .map_err(|e| kube::Error::Service(Box::new(e)))?;
        }
        Ok(())
    }

    /// Whether every scope's store has completed its first list, without waiting for it.
    pub fn is_listed(&self) -> bool {
        self.scopes.iter().all(|s| s.store.is_listed())
    }
}

/// One store of every object in the cluster.
impl<K: Resource> From<WatchStore<K>> for Scoped<K> {
    fn from(store: WatchStore<K>) -> Self {
        let mut scoped = Self::default();
        scoped.add(None, store);
        scoped
    }
}
