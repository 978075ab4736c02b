//! One watch's stores across the watched scopes: one store for the whole cluster, or one per
//! namespace with `--watch-namespace=a,b` (each namespace has its own watches).
//!
//! Waiting for a store's first list goes through one [`OnceCell`] per store, never straight to
//! [`Store::wait_until_ready`]: that one keeps a single waker (a oneshot receiver behind a mutex,
//! kube-runtime 5.0), so of several passes waiting at once only the last to poll is woken, and
//! the others sleep until their deadline. At start, with a full worker pool, that held 14 of 16
//! workers for the 2-minute reconcile timeout. The cell lets one caller wait on the store and
//! wakes every other.

use std::{hash::Hash, sync::Arc};

use futures::FutureExt;

use kube::runtime::reflector::{Lookup, ObjectRef, Store};
use tokio::sync::OnceCell;

/// A store per scope: `None` is the whole cluster, `Some(namespace)` one namespace.
#[derive(Clone)]
pub struct Scoped<K: Lookup + Clone + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    scopes: Vec<ScopeStore<K>>,
}

/// The store of one scope, and whether it has completed its first list.
#[derive(Clone)]
struct ScopeStore<K: Lookup + Clone + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    scope: Option<String>,
    store: Store<K>,
    listed: Arc<OnceCell<()>>,
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
        self.scopes.push(ScopeStore {
            scope: scope.map(str::to_owned),
            store,
            listed: Arc::default(),
        });
    }

    /// The store holding `namespace`'s objects, if that namespace is watched.
    pub fn of(&self, namespace: &str) -> Option<&Store<K>> {
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
        self.of(namespace)?.get(&ObjectRef::new(name).within(namespace))
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
    pub async fn wait_until_ready(&self) -> Result<(), kube::Error> {
        for scope in &self.scopes {
            scope
                .listed
                .get_or_try_init(|| scope.store.wait_until_ready())
                .await
                .map_err(|e| kube::Error::Service(Box::new(e)))?;
        }
        Ok(())
    }

    /// Whether every scope's store has completed its first list, without waiting for it.
    ///
    /// Polls [`Self::wait_until_ready`] once: only the caller holding a cell's init polls that
    /// store, and dropping it hands the init to the next waiter, which polls the store again, so
    /// no waiter is left asleep.
    pub fn is_listed(&self) -> bool {
        self.wait_until_ready()
            .now_or_never()
            .is_some_and(|listed| listed.is_ok())
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::runtime::{reflector, watcher};

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_pass_waiting_for_the_first_list_should_wake_when_it_completes() {
        let (store, mut writer) = reflector::store::<ConfigMap>();
        let scoped = Scoped::from(store);
        let waiting: Vec<_> = (0..16)
            .map(|_| {
                let scoped = scoped.clone();
                tokio::spawn(async move { scoped.wait_until_ready().await.is_ok() })
            })
            .collect();
        // Every waiter has polled the store at least once before the list completes.
        tokio::time::sleep(Duration::from_millis(100)).await;
        writer.apply_watcher_event(&watcher::Event::InitDone);
        for waiter in waiting {
            let woke = tokio::time::timeout(Duration::from_secs(5), waiter).await;
            assert!(
                matches!(woke, Ok(Ok(true))),
                "a waiter slept through the first list"
            );
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn asking_whether_listed_should_not_leave_a_waiter_asleep() {
        let (store, mut writer) = reflector::store::<ConfigMap>();
        let scoped = Scoped::from(store);
        assert!(!scoped.is_listed(), "before the first list, with no waiter");
        let waiter = {
            let scoped = scoped.clone();
            tokio::spawn(async move { scoped.wait_until_ready().await.is_ok() })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!scoped.is_listed(), "before the first list, with a waiter");
        writer.apply_watcher_event(&watcher::Event::InitDone);
        let woke = tokio::time::timeout(Duration::from_secs(5), waiter).await;
        assert!(
            matches!(woke, Ok(Ok(true))),
            "the waiter slept through the first list"
        );
        assert!(scoped.is_listed(), "after the first list");
    }
}
