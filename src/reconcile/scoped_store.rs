//! One watch's stores across the watched scopes: one store for the whole cluster, or one per
//! namespace with `--watch-namespace=a,b` (each namespace has its own watches).

use std::{hash::Hash, sync::Arc};

use kube::runtime::reflector::{Lookup, ObjectRef, Store};

/// A store per scope: `None` is the whole cluster, `Some(namespace)` one namespace.
#[derive(Clone)]
pub struct Scoped<K: Lookup + Clone + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    scopes: Vec<(Option<String>, Store<K>)>,
}

impl<K> Default for Scoped<K>
where
    K: Lookup + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    fn default() -> Self {
        Self { scopes: Vec::new() }
    }
}

impl<K> Scoped<K>
where
    K: Lookup + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone + Default,
{
    /// Adds the store of `scope` (`None`: every namespace).
    pub fn add(&mut self, scope: Option<&str>, store: Store<K>) {
        self.scopes.push((scope.map(str::to_owned), store));
    }

    /// The store holding `namespace`'s objects, if that namespace is watched.
    pub fn of(&self, namespace: &str) -> Option<&Store<K>> {
        self.scopes
            .iter()
            .find(|(scope, _)| scope.as_deref().is_none_or(|scope| scope == namespace))
            .map(|(_, store)| store)
    }

    /// `namespace/name` as its scope's store holds it; `None` also for a namespace not watched.
    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        self.of(namespace)?.get(&ObjectRef::new(name).within(namespace))
    }

    /// Every object of every scope.
    pub fn state(&self) -> Vec<Arc<K>> {
        self.scopes.iter().flat_map(|(_, store)| store.state()).collect()
    }

    /// Waits until every scope's store has completed its first list.
    ///
    /// # Errors
    /// A watch that fills one is gone (shutdown), as a `kube::Error` so callers report it like a
    /// failed read.
    pub async fn wait_until_ready(&self) -> Result<(), kube::Error> {
        for (_, store) in &self.scopes {
            store
                .wait_until_ready()
                .await
                .map_err(|e| kube::Error::Service(Box::new(e)))?;
        }
        Ok(())
    }
}

/// One store of every object in the cluster.
impl<K> From<Store<K>> for Scoped<K>
where
    K: Lookup + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone + Default,
{
    fn from(store: Store<K>) -> Self {
        let mut scoped = Self::default();
        scoped.add(None, store);
        scoped
    }
}
