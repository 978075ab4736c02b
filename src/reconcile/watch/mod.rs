//! The watches of both reconcilers, one per kind and scope: which changes enqueue which keys.
//!
//! | watch | kind | enqueues |
//! |---|---|---|
//! | `ferrvaultsecret` | FerrVaultSecret | itself on a new generation, deletion, or a lost finalizer; its connection while it is being deleted (to unblock the connection's deletion) |
//! | `ferrvaultconnection` | FerrVaultConnection | itself on a new generation, deletion, or a lost finalizer; and, by a second route with its own filter, its FerrVaultSecrets when its spec or its Ready status changed (not on every `lastCheckedAt` write, reference §8 item 4, nor on a first probe finding it reachable), the FerrVaultSecrets targeting a Secret it reads, and those refused because a connection read their target (`TargetIsConnectionSecret`: the reference may be gone) |
//! | `secret-metadata` | Secret, metadata only | the owner FerrVaultSecret of a target that someone else changed or deleted (drift healing), and every FerrVaultSecret targeting it by name (a refused target retried when its owner, annotations or existence change); the connections using it as token or CA Secret, and their FerrVaultSecrets (token rotation); the ClusterFerrVaultSecret whose copy it is (its UID label: a copy someone else changed or deleted is healed at that event) |
//!
//! # Guarantees
//! - The operator's own writes to target Secrets do not enqueue anything ([`OwnWrites`]): a
//!   write is not drift.
//! - A refused target has no timer: these watches are what retries it, on a change of the target
//!   Secret's metadata, of the FerrVaultSecret or of a connection's references.
//! - Adding our own finalizer does not enqueue a second pass (the first pass already synced).
//! - Secrets are watched as metadata only: memory does not grow with Secret sizes.
//! - Every store keeps a projection of its objects ([`projection`]): only what the reconcilers
//!   and these watches read, so memory does not grow with what tenants write (annotations,
//!   labels, large spec lists); a change of something dropped enqueues nothing.
//! - One watch per kind: the FerrVaultSecrets a connection change enqueues read the store of the
//!   watch that enqueued them, which took the change before any of its routes queued a key
//!   ([`Route`]), so their pass always sees that change.
//! - With `--watch-namespace` every watch is namespaced: the three watches above for each watched
//!   namespace (named `<watch>@<namespace>` when there are several), so the operator lists,
//!   watches and caches nothing of any other namespace.
//! - Both custom resource kinds are watched as [`Lenient`]: one object that bypassed the CRD
//!   schema does not fail the list of its kind (nor get its body logged); it still enqueues
//!   its own key, and simply has no dependants or targets.
//!
//! The cluster kinds' watches (ClusterFerrVaultConnection, Namespace metadata) are in
//! `cluster.rs`, with their table.
//!
//! # Layout
//! - Here: [`build`], each watch and its routes (the stores they fill are the read side's,
//!   [`Stores`]; what the stores keep is [`projection`]).
//! - `filters.rs`: which changes of each kind matter (the routes' filters).
//! - `keys.rs`: which keys a change enqueues (the routes' mappers).
//! - `settled.rs`: which listed custom resources are settled (refreshes) and which are changes.
//! - `hints.rs`: the FerrVaultSecrets a signed change hint marks due, and their enqueue (a
//!   source of keys besides the watches).

use std::sync::Arc;

use controller_actors::{Route, WatchSource, WatchSpec, WatchStore};
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Resource, core::PartialObjectMeta, runtime::watcher};

pub(crate) use self::filters::{
    connection_change_matters_to_dependants, cr_change_matters, secret_change_matters,
};
pub(crate) use self::hints::HintDispatch;
pub use self::hints::HintMarks;
#[cfg(test)]
pub(crate) use self::keys::controlling_secret;
use self::{
    cluster::ClusterWatches,
    keys::{connection_keys, dependant_keys, secret_keys, secret_metadata_keys},
    settled::{connection_unsettled, secret_unsettled},
};
use crate::{
    api::{
        ClusterFerrVaultSecret, FerrVaultConnection, FerrVaultSecret, Lenient,
        names::{CONNECTION_FINALIZER, SECRET_FINALIZER},
    },
    reconcile::read::{OwnWrites, Stores, projection},
};

/// Every watch, and the stores the reconcilers read instead of the API server.
pub(crate) struct Watches {
    /// The watches, for the runtime.
    pub sources: Vec<Box<dyn WatchSource>>,
    /// The watches' stores, across the watched scopes.
    pub stores: Stores,
}

/// Which namespaces' objects this replica keeps (with `--shards`: those of its held shards).
pub(crate) type KeepsNamespace = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Builds every watch; `namespaces` is `--watch-namespace` (empty: the whole cluster); with
/// `keeps`, the namespaced watches store only the objects of the namespaces it accepts (the
/// cluster kinds' and the Namespace watches keep everything: every shard reads them).
pub(crate) fn build(
    client: &kube::Client,
    namespaces: &[String],
    own: Arc<OwnWrites>,
    keeps: Option<&KeepsNamespace>,
) -> Watches {
    let mut watches = Watches {
        sources: Vec::new(),
        stores: Stores::default(),
    };
    let cluster = cluster::watches(client);
    if namespaces.is_empty() {
        build_scope(client, None, "", own.clone(), &cluster, keeps, &mut watches);
    }
    for namespace in namespaces {
        // Watcher names are actor names, unique in the process; one namespace keeps the plain names.
        let suffix = if namespaces.len() > 1 {
            format!("@{namespace}")
        } else {
            String::new()
        };
        build_scope(
            client,
            Some(namespace),
            &suffix,
            own.clone(),
            &cluster,
            keeps,
            &mut watches,
        );
    }
    watches
        .stores
        .cluster_connections
        .add(None, cluster.connections.clone());
    watches.stores.namespaces.add(None, cluster.namespaces.clone());
    watches.stores.cluster_secrets.add(None, cluster.secrets.clone());
    let routed = cluster.routed(&watches.stores.secrets);
    watches.sources.extend(routed);
    watches
}

/// The three watches of one scope (`None`: the whole cluster), one per kind, named with
/// `suffix`; each maps only to objects of its own scope, through that scope's stores (the Secret
/// metadata watch also to the users of the `cluster` connections reading a Secret).
fn build_scope(
    client: &kube::Client,
    namespace: Option<&str>,
    suffix: &str,
    own: Arc<OwnWrites>,
    cluster: &ClusterWatches,
    keeps: Option<&KeepsNamespace>,
    watches: &mut Watches,
) {
    fn api<K>(client: &kube::Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        match namespace {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        }
    }
    let config = watcher::Config::default;
    let (secret_watch, secrets) = WatchSpec::full(
        format!("ferrvaultsecret{suffix}"),
        api::<Lenient<FerrVaultSecret>>(client, namespace),
        config(),
    );
    let (connection_watch, connections) = WatchSpec::full(
        format!("ferrvaultconnection{suffix}"),
        api::<Lenient<FerrVaultConnection>>(client, namespace),
        config(),
    );
    let (metadata_watch, secret_metadata) = WatchSpec::metadata(
        format!("secret-metadata{suffix}"),
        api::<PartialObjectMeta<Secret>>(client, namespace),
        config(),
    );
    let (secret_watch, connection_watch, metadata_watch) = match keeps {
        Some(keeps) => (
            secret_watch.only_namespaces(kept(keeps)),
            connection_watch.only_namespaces(kept(keeps)),
            metadata_watch.only_namespaces(cluster::kept_or_credential(
                kept(keeps),
                cluster.connections.clone(),
            )),
        ),
        None => (secret_watch, connection_watch, metadata_watch),
    };
    let stores = &mut watches.stores;
    stores.secrets.add(namespace, secrets.clone());
    stores.connections.add(namespace, connections.clone());
    stores.secret_metadata.add(namespace, secret_metadata);
    watches.sources.extend([
        Box::new(secret_routes(secret_watch)) as Box<dyn WatchSource>,
        Box::new(connection_routes(connection_watch, secrets.clone())),
        Box::new(
            secret_metadata_routes(
                metadata_watch,
                own,
                (secrets.clone(), connections),
                cluster.secrets.clone(),
            )
            .route(cluster::secret_route(secrets, cluster.connections.clone())),
        ),
    ]);
}

/// `keeps` as a watch's namespace filter.
fn kept(keeps: &KeepsNamespace) -> impl Fn(&str) -> bool + Send + Sync + 'static {
    let keeps = keeps.clone();
    move |namespace: &str| keeps(namespace)
}

/// The FerrVaultSecret watch: each FerrVaultSecret enqueues itself (and, while it is being
/// deleted, its connection).
fn secret_routes(watch: WatchSpec<Lenient<FerrVaultSecret>>) -> WatchSpec<Lenient<FerrVaultSecret>> {
    watch
        .trim(projection::ferrvault_secret)
        .matters(|old, new| cr_change_matters(old.map(Resource::meta), new.meta(), SECRET_FINALIZER))
        .listed_as_change(secret_unsettled)
        .map(secret_keys)
}

/// The FerrVaultConnection watch: each connection enqueues itself, and a second route enqueues
/// the FerrVaultSecrets a change of it matters to (found in `secrets`).
fn connection_routes(
    watch: WatchSpec<Lenient<FerrVaultConnection>>,
    secrets: WatchStore<Lenient<FerrVaultSecret>>,
) -> WatchSpec<Lenient<FerrVaultConnection>> {
    let dependants = Route::map(move |c: &Lenient<FerrVaultConnection>| dependant_keys(&secrets, c))
        .matters(connection_change_matters_to_dependants);
    watch
        .trim(projection::ferrvault_connection)
        .matters(|old, new| cr_change_matters(old.map(Resource::meta), new.meta(), CONNECTION_FINALIZER))
        .listed_as_change(connection_unsettled)
        .map(connection_keys)
        .route(dependants)
}

/// The Secret metadata watch: a Secret someone else changed enqueues the FerrVaultSecrets that
/// control or target it, and the connections reading it with their FerrVaultSecrets (found in
/// `secrets` and `connections`), and, when it is a copy, its ClusterFerrVaultSecret (found in
/// `cluster_secrets`, the copy marked as changed in `own`); the operator's own writes (`own`)
/// enqueue nothing. One route: its filter
/// consumes the record of an own write, which a second route would no longer find.
fn secret_metadata_routes(
    watch: WatchSpec<PartialObjectMeta<Secret>>,
    own: Arc<OwnWrites>,
    (secrets, connections): (
        WatchStore<Lenient<FerrVaultSecret>>,
        WatchStore<Lenient<FerrVaultConnection>>,
    ),
    cluster_secrets: WatchStore<Lenient<ClusterFerrVaultSecret>>,
) -> WatchSpec<PartialObjectMeta<Secret>> {
    let marks = own.clone();
    watch
        .trim(projection::secret_metadata)
        .matters(move |old, new| secret_change_matters(&own, old.map(|o| &o.metadata), &new.metadata))
        .map(move |s: &PartialObjectMeta<Secret>| {
            let mut keys = secret_metadata_keys(&secrets, &connections, s);
            if let Some(owner) = cluster::copy_owner(&cluster_secrets, &s.metadata) {
                let meta = &s.metadata;
                let (namespace, name) = (meta.namespace.as_deref(), meta.name.as_deref());
                marks.mark_copy_changed(namespace.unwrap_or_default(), name.unwrap_or_default());
                keys.push(owner);
            }
            keys
        })
}

mod cluster;
mod filters;
mod hints;
mod keys;
mod settled;
#[cfg(test)]
mod tests;
