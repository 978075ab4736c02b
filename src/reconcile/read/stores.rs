//! The watches' stores the reconcilers read (what they trust them for: [`reads`](super::cr_store)).

use std::sync::Arc;

use controller_actors::WatchStore;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::core::PartialObjectMeta;

use super::Scoped;
use crate::api::{
    ClusterFerrVaultConnection, ClusterFerrVaultSecret, FerrVaultConnection, FerrVaultSecret, Lenient,
};

/// The stores both reconcilers read, each across the watched scopes.
#[derive(Clone, Default)]
pub struct Stores {
    /// Every FerrVaultSecret (the `ferrvaultsecret` watches' stores).
    pub secrets: Scoped<Lenient<FerrVaultSecret>>,
    /// Every FerrVaultConnection (the `ferrvaultconnection` watches' stores): what the connection
    /// reconciler reads of its own objects, and FerrVaultSecret passes of their connections. The
    /// watch's events are what enqueue both for a connection change (by two routes), and it
    /// stores each change before any route enqueues anything, so such a pass always sees the
    /// change that caused it (the streams of two watches are not ordered with each other).
    pub connections: Scoped<Lenient<FerrVaultConnection>>,
    /// The metadata of every Secret (the `secret-metadata` watches' stores).
    pub secret_metadata: Scoped<PartialObjectMeta<Secret>>,
    /// Every ClusterFerrVaultConnection (the `clusterferrvaultconnection` watch's store, one
    /// cluster-wide scope): FerrVaultSecret passes read their cluster connection here.
    pub cluster_connections: Scoped<Lenient<ClusterFerrVaultConnection>>,
    /// The metadata of every Namespace (the `namespace-metadata` watch's store): the labels a
    /// cluster connection's `allowedNamespaces` is matched against, without a GET per pass.
    pub namespaces: Scoped<PartialObjectMeta<Namespace>>,
    /// Every ClusterFerrVaultSecret (the `clusterferrvaultsecret` watch's store, one cluster-wide
    /// scope).
    pub cluster_secrets: Scoped<Lenient<ClusterFerrVaultSecret>>,
}

impl Stores {
    /// Stores of `connections` only: every other read goes to the API server (no scope covers
    /// any namespace), for a driver without the operator's watches.
    pub fn only_connections(connections: WatchStore<Lenient<FerrVaultConnection>>) -> Self {
        Self {
            connections: connections.into(),
            ..Self::default()
        }
    }

    /// The metadata of Secret `namespace/name`, if the store holds it.
    pub fn secret_meta(&self, namespace: &str, name: &str) -> Option<Arc<PartialObjectMeta<Secret>>> {
        self.secret_metadata.get(namespace, name)
    }
}
