//! The FerrVaultConnection watch stores the FerrVaultSecret reconciler reads (which Secrets the
//! connections of a namespace read): one store for the whole cluster, or one per watched
//! namespace with `--watch-namespace=a,b`.

use kube::runtime::reflector::Store;

use crate::api::{FerrVaultConnection, Lenient};

/// A connection store per scope: `None` is the whole cluster, `Some(namespace)` one namespace.
#[derive(Clone, Default)]
pub struct ConnectionStores {
    scopes: Vec<(Option<String>, Store<Lenient<FerrVaultConnection>>)>,
}

impl ConnectionStores {
    /// Adds the store of `scope` (`None`: every namespace).
    pub fn add(&mut self, scope: Option<&str>, store: Store<Lenient<FerrVaultConnection>>) {
        self.scopes.push((scope.map(str::to_owned), store));
    }

    /// The store holding `namespace`'s connections, if that namespace is watched.
    pub fn of(&self, namespace: &str) -> Option<&Store<Lenient<FerrVaultConnection>>> {
        self.scopes
            .iter()
            .find(|(scope, _)| scope.as_deref().is_none_or(|scope| scope == namespace))
            .map(|(_, store)| store)
    }
}

/// One store of every connection in the cluster.
impl From<Store<Lenient<FerrVaultConnection>>> for ConnectionStores {
    fn from(store: Store<Lenient<FerrVaultConnection>>) -> Self {
        let mut stores = Self::default();
        stores.add(None, store);
        stores
    }
}
