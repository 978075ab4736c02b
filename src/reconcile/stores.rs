//! The watches' stores the reconcilers read (what they trust them for: [`reads`](super::reads)).

use std::sync::Arc;

use k8s_openapi::api::core::v1::Secret;
use kube::{
    core::PartialObjectMeta,
    runtime::{
        reflector::{self, Lookup, ObjectRef, Store},
        watcher,
    },
};

use crate::api::{FerrVaultConnection, FerrVaultSecret, Lenient};

/// The stores both reconcilers read.
#[derive(Clone)]
pub struct Stores {
    /// Every FerrVaultSecret (the `ferrvaultsecret` watch's store).
    pub secrets: Store<Lenient<FerrVaultSecret>>,
    /// Every FerrVaultConnection (the `ferrvaultconnection` watch's store): what the connection
    /// reconciler reads of its own objects.
    pub connections: Store<Lenient<FerrVaultConnection>>,
    /// Every FerrVaultConnection again (the `ferrvaultconnection-dependants` watch's store): what
    /// FerrVaultSecret passes read of their connections. That watch's events are what enqueue
    /// them for a connection change, and it stores each change before it enqueues anything, so
    /// such a pass always sees the change that caused it (the streams of two watches are not
    /// ordered with each other).
    pub connections_for_dependants: Store<Lenient<FerrVaultConnection>>,
    /// The metadata of every Secret (the `secret-metadata` watch's store).
    pub secret_metadata: Store<PartialObjectMeta<Secret>>,
}

impl Stores {
    /// Stores that never hold anything besides `connections`, already listed: every other read
    /// falls back to the API server, for a driver without the operator's watches.
    pub fn empty_but(connections: Store<Lenient<FerrVaultConnection>>) -> Self {
        Self {
            secrets: listed_empty(),
            connections: connections.clone(),
            connections_for_dependants: connections,
            secret_metadata: listed_empty(),
        }
    }

    /// The metadata of Secret `namespace/name`, if the store holds it.
    pub fn secret_meta(&self, namespace: &str, name: &str) -> Option<Arc<PartialObjectMeta<Secret>>> {
        self.secret_metadata.get(&ObjectRef::new(name).within(namespace))
    }
}

/// Waits until `store` has completed its first list.
///
/// # Errors
/// The watch that fills it is gone (shutdown), as a `kube::Error` so callers report it like a
/// failed read.
pub async fn wait_for<K>(store: &Store<K>) -> Result<(), kube::Error>
where
    K: Lookup + Clone + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    store
        .wait_until_ready()
        .await
        .map_err(|e| kube::Error::Service(Box::new(e)))
}

/// A store that completed an empty list and is never written again.
fn listed_empty<K>() -> Store<K>
where
    K: Lookup + Clone + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone + Default,
{
    let (store, mut writer) = reflector::store();
    writer.apply_watcher_event(&watcher::Event::InitDone);
    store
}
