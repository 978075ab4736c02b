//! The cluster-wide watches of the cluster kinds (issue 37): ClusterFerrVaultConnections and
//! the metadata of Namespaces, one watch each whatever `--watch-namespace` says (both kinds are
//! cluster-scoped), and what their changes enqueue.
//!
//! | watch | kind | enqueues |
//! |---|---|---|
//! | `clusterferrvaultconnection` | ClusterFerrVaultConnection | itself and the FerrVaultSecrets referencing it, on a new generation, deletion or first sighting |
//! | `namespace-metadata` | Namespace, metadata only | the FerrVaultSecrets of that namespace referencing any ClusterFerrVaultConnection, and every ClusterFerrVaultConnection (their status counts), when its labels change (or it appears) |
//! | `ferrvaultsecret` (in `keys.rs`) | FerrVaultSecret | the ClusterFerrVaultConnection it references (its status counts) |
//! | `secret-metadata` (a route added to it) | Secret | the FerrVaultSecrets whose cluster connection reads that Secret (token rotation) |
//! | `clusterferrvaultsecret` | ClusterFerrVaultSecret | itself on a new generation, deletion, a lost finalizer, a new force-sync token, or first sighting; at every sighting while it is being deleted (a re-list after a shard takeover) |
//! | `namespace-metadata` (a second route) | Namespace | every ClusterFerrVaultSecret, when its labels change (or it appears): a namespace joining a selection gets its copy at that event |
//! | `clusterferrvaultconnection` (a third route) | ClusterFerrVaultConnection | the ClusterFerrVaultSecrets using it, as for its FerrVaultSecrets |
//! | `secret-metadata` (its first route, in `mod.rs`) | Secret | the ClusterFerrVaultSecret whose copy it is (its UID label), when someone else changed or deleted it: the copy is healed at that event |
//!
//! # Guarantees
//! - A namespace relabelled in or out of an `allowedNamespaces` selection re-queues its
//!   FerrVaultSecrets within that one event: they are refused (`ConnectionNotAllowed`) or sync.
//! - Each watch stores its change before any route enqueues a key, so the pass the key starts
//!   sees the labels (or the connection) that caused it.
//! - The Namespace store keeps name, labels and version only; the cluster connections' store
//!   drops annotations, labels and managed fields: memory does not grow with what is written
//!   there.

use controller_actors::{ObjectKey, Route, WatchSource, WatchSpec, WatchStore};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::{Api, Resource, ResourceExt, api::ObjectMeta, core::PartialObjectMeta, runtime::watcher};

use super::filters::cr_change_matters;
use crate::{
    api::{
        ClusterFerrVaultConnection, ClusterFerrVaultSecret, ConnectionKind, FerrVaultSecret, Lenient,
        names::{CLUSTER_SECRET_FINALIZER, CLUSTER_SECRET_UID_LABEL, FORCE_SYNC_ANNOTATION},
    },
    reconcile::{
        connection::cluster_connection_key, read::Scoped, secret::cluster_secret_key,
        settings::SECRET_CONTROLLER,
    },
};

/// The two cluster-wide watches before their routes, and their stores.
pub(super) struct ClusterWatches {
    /// The ClusterFerrVaultConnection watch.
    connection_watch: WatchSpec<Lenient<ClusterFerrVaultConnection>>,
    /// The Namespace metadata watch.
    namespace_watch: WatchSpec<PartialObjectMeta<Namespace>>,
    /// The ClusterFerrVaultConnections' store.
    pub(super) connections: WatchStore<Lenient<ClusterFerrVaultConnection>>,
    /// The Namespaces' metadata store.
    pub(super) namespaces: WatchStore<PartialObjectMeta<Namespace>>,
    /// The ClusterFerrVaultSecret watch.
    secret_watch: WatchSpec<Lenient<ClusterFerrVaultSecret>>,
    /// The ClusterFerrVaultSecrets' store.
    pub(super) secrets: WatchStore<Lenient<ClusterFerrVaultSecret>>,
}

/// Both watches, without routes yet (the FerrVaultSecrets' stores they read come later).
pub(super) fn watches(client: &kube::Client) -> ClusterWatches {
    let (connection_watch, connections) = WatchSpec::full(
        "clusterferrvaultconnection",
        Api::<Lenient<ClusterFerrVaultConnection>>::all(client.clone()),
        watcher::Config::default(),
    );
    let (namespace_watch, namespaces) = WatchSpec::metadata(
        "namespace-metadata",
        Api::<PartialObjectMeta<Namespace>>::all(client.clone()),
        watcher::Config::default(),
    );
    let (secret_watch, secrets) = WatchSpec::full(
        "clusterferrvaultsecret",
        Api::<Lenient<ClusterFerrVaultSecret>>::all(client.clone()),
        watcher::Config::default(),
    );
    ClusterWatches {
        connection_watch,
        namespace_watch,
        connections,
        namespaces,
        secret_watch,
        secrets,
    }
}

impl ClusterWatches {
    /// Both watches with their routes, which find the FerrVaultSecrets to enqueue in `secrets`
    /// (every watched scope's store).
    pub(super) fn routed(self, secrets: &Scoped<Lenient<FerrVaultSecret>>) -> Vec<Box<dyn WatchSource>> {
        let by_connection = secrets.clone();
        let itself =
            Route::map(|c: &Lenient<ClusterFerrVaultConnection>| vec![cluster_connection_key(&c.name_any())])
                .matters(|old, new| connection_matters(old.map(Resource::meta), new.meta()));
        let cluster_secrets = self.secrets.clone();
        let cluster_users = Route::map(move |c: &Lenient<ClusterFerrVaultConnection>| {
            cluster_secrets_using(&cluster_secrets, &c.name_any())
        })
        .matters(|old, new| connection_matters(old.map(Resource::meta), new.meta()));
        let connection_watch = self
            .connection_watch
            .trim(trim_connection)
            .matters(|old, new| connection_matters(old.map(Resource::meta), new.meta()))
            .map(move |c: &Lenient<ClusterFerrVaultConnection>| users_of(&by_connection, &c.name_any()))
            .route(itself)
            .route(cluster_users);
        let by_namespace = secrets.clone();
        let connections = self.connections.clone();
        let labels_changed = |old: Option<&PartialObjectMeta<Namespace>>,
                              new: &PartialObjectMeta<Namespace>| {
            old.is_none_or(|old| old.metadata.labels != new.metadata.labels)
        };
        let every_connection = Route::map(move |_: &PartialObjectMeta<Namespace>| {
            connections
                .state()
                .iter()
                .map(|c| cluster_connection_key(&c.name_any()))
                .collect()
        })
        .matters(labels_changed);
        let cluster_secrets = self.secrets.clone();
        let every_cluster_secret = Route::map(move |_: &PartialObjectMeta<Namespace>| {
            cluster_secrets
                .state()
                .iter()
                .map(|s| cluster_secret_key(&s.name_any()))
                .collect()
        })
        .matters(labels_changed);
        let secret_watch = self
            .secret_watch
            .trim(trim_cluster_secret)
            .matters(|old, new| {
                // A deleting one at every sighting too: a replica taking over a shard under
                // `--shards N > 1` re-lists it unchanged, and must let go of that shard's copies.
                cr_change_matters(old.map(Resource::meta), new.meta(), CLUSTER_SECRET_FINALIZER)
                    || new.meta().deletion_timestamp.is_some()
            })
            .map(|s: &Lenient<ClusterFerrVaultSecret>| vec![cluster_secret_key(&s.name_any())]);
        let namespace_watch = self
            .namespace_watch
            .trim(trim_namespace)
            .matters(labels_changed)
            .map(move |n: &PartialObjectMeta<Namespace>| {
                cluster_users_in(&by_namespace, n.metadata.name.as_deref().unwrap_or_default())
            })
            .route(every_connection)
            .route(every_cluster_secret);
        vec![
            Box::new(connection_watch),
            Box::new(namespace_watch),
            Box::new(secret_watch),
        ]
    }
}

/// The route the Secret metadata watch of each scope gets: a Secret a cluster connection reads
/// (token, CA bundle or client certificate, in its namespace) enqueues the FerrVaultSecrets using that connection.
pub(super) fn secret_route(
    secrets: WatchStore<Lenient<FerrVaultSecret>>,
    connections: WatchStore<Lenient<ClusterFerrVaultConnection>>,
) -> Route<PartialObjectMeta<Secret>> {
    Route::map(move |s: &PartialObjectMeta<Secret>| {
        let (namespace, name) = (
            s.metadata.namespace.as_deref().unwrap_or_default(),
            s.metadata.name.as_deref().unwrap_or_default(),
        );
        let mut keys = Vec::new();
        for connection in connections.state() {
            let Some(valid) = connection.valid() else { continue };
            let reads_it = credential_secrets(valid).any(|(ns, n)| ns == namespace && n == name);
            if reads_it {
                keys.extend(users_of(&secrets.clone().into(), &valid.name_any()));
            }
        }
        keys.sort();
        keys.dedup();
        keys
    })
}

/// The Secrets (namespace, name) `connection` reads: its token, CA bundle and client
/// certificate.
fn credential_secrets(connection: &ClusterFerrVaultConnection) -> impl Iterator<Item = (&str, &str)> {
    let spec = &connection.spec;
    let cert = spec
        .client_cert_secret_ref
        .as_ref()
        .map(|r| (r.namespace.as_str(), r.name.as_str()));
    [&spec.token_secret_ref, &spec.ca_bundle_secret_ref]
        .into_iter()
        .flatten()
        .map(|r| (r.namespace.as_str(), r.name.as_str()))
        .chain(cert)
}

/// With `--shards`, the Secret metadata watch's filter: the held shards' namespaces (`keeps`),
/// and every namespace a ClusterFerrVaultConnection reads a credential from, whichever shard it
/// is in. Every replica then sees the versions of the cluster credentials its FerrVaultSecrets
/// record (`status.observedInputs`), so a namespace moving to another replica finds the same
/// inputs there (a takeover reveals nothing), and each replica re-queues its own users of a
/// rotated credential.
///
/// Until the cluster connections' store has first listed (a process's first start of its
/// controllers, when the Secret list outruns the short cluster list), every Secret is kept:
/// which namespaces hold credentials is not known yet, and a credential missed then would be
/// missed until the next re-list. The Secrets of other shards kept so stay until that re-list
/// (memory only: their routes enqueue keys the queues drop).
///
/// NOTE: judged per event against the cluster connections' store: a credential namespace
/// that a cluster connection created later names is kept from the next event of each of its
/// Secrets, and those not changed since are seen at the next re-list (the next change of the
/// held shards); until then, its users record the token's version as unknown (`?`), and those
/// moving to a replica that sees it sync once there.
pub(super) fn kept_or_credential(
    keeps: impl Fn(&str) -> bool + Send + Sync + 'static,
    connections: WatchStore<Lenient<ClusterFerrVaultConnection>>,
) -> impl Fn(&str) -> bool + Send + Sync + 'static {
    move |namespace: &str| {
        keeps(namespace)
            || !connections.is_listed()
            || connections.state().iter().any(|connection| {
                connection
                    .valid()
                    .is_some_and(|valid| credential_secrets(valid).any(|(ns, _)| ns == namespace))
            })
    }
}

/// The key of the ClusterFerrVaultSecret (in `secrets`) whose copy a Secret with metadata `meta`
/// is: the one whose UID its [`CLUSTER_SECRET_UID_LABEL`] names. A copy someone else changed or
/// deleted so re-queues its cluster secret, whose pass writes it again.
pub(super) fn copy_owner(
    secrets: &WatchStore<Lenient<ClusterFerrVaultSecret>>,
    meta: &ObjectMeta,
) -> Option<ObjectKey> {
    let uid = meta.labels.as_ref()?.get(CLUSTER_SECRET_UID_LABEL)?;
    secrets
        .state()
        .iter()
        .find(|c| c.meta().uid.as_ref() == Some(uid))
        .map(|c| cluster_secret_key(&c.name_any()))
}

/// Whether a cluster connection change matters to its users: first sighting, new generation,
/// deletion (its status and metadata writes do not).
fn connection_matters(old: Option<&ObjectMeta>, new: &ObjectMeta) -> bool {
    old.is_none_or(|old| old.generation != new.generation || old.deletion_timestamp != new.deletion_timestamp)
}

/// Keys of the valid FerrVaultSecrets referencing ClusterFerrVaultConnection `name`.
fn users_of(secrets: &Scoped<Lenient<FerrVaultSecret>>, name: &str) -> Vec<ObjectKey> {
    keys_where(secrets.state(), |s| {
        s.spec.connection_ref.kind == ConnectionKind::ClusterFerrVaultConnection
            && s.spec.connection_ref.name == name
    })
}

/// Keys of the valid FerrVaultSecrets of `namespace` referencing any ClusterFerrVaultConnection.
fn cluster_users_in(secrets: &Scoped<Lenient<FerrVaultSecret>>, namespace: &str) -> Vec<ObjectKey> {
    keys_where(secrets.in_namespace(namespace), |s| {
        s.spec.connection_ref.kind == ConnectionKind::ClusterFerrVaultConnection
    })
}

fn keys_where(
    secrets: Vec<std::sync::Arc<Lenient<FerrVaultSecret>>>,
    pick: impl Fn(&FerrVaultSecret) -> bool,
) -> Vec<ObjectKey> {
    secrets
        .iter()
        .filter_map(|s| s.valid())
        .filter(|s| pick(s))
        .map(|s| ObjectKey::namespaced(SECRET_CONTROLLER, s.namespace().unwrap_or_default(), s.name_any()))
        .collect()
}

/// Keys of the ClusterFerrVaultSecrets (in `secrets`) using ClusterFerrVaultConnection `name`.
fn cluster_secrets_using(
    secrets: &WatchStore<Lenient<ClusterFerrVaultSecret>>,
    name: &str,
) -> Vec<ObjectKey> {
    secrets
        .state()
        .iter()
        .filter_map(|s| s.valid())
        .filter(|s| s.spec.secret_spec.connection_ref.name == name)
        .map(|s| cluster_secret_key(&s.name_any()))
        .collect()
}

/// What the cluster secrets' store drops: labels, managed fields, and every annotation but the
/// force-sync one (what a pass and `cr_change_matters` read).
fn trim_cluster_secret(secret: &mut Lenient<ClusterFerrVaultSecret>) {
    let meta = secret.meta_mut();
    meta.labels = None;
    meta.managed_fields = None;
    if let Some(annotations) = meta.annotations.as_mut() {
        annotations.retain(|key, _| key == FORCE_SYNC_ANNOTATION);
    }
}

/// What the Namespace store keeps: name, labels, version, deletion.
fn trim_namespace(namespace: &mut PartialObjectMeta<Namespace>) {
    let old = std::mem::take(&mut namespace.metadata);
    namespace.metadata = ObjectMeta {
        name: old.name,
        labels: old.labels,
        resource_version: old.resource_version,
        deletion_timestamp: old.deletion_timestamp,
        ..ObjectMeta::default()
    };
}

/// What the cluster connections' store drops: annotations, labels and managed fields.
fn trim_connection(connection: &mut Lenient<ClusterFerrVaultConnection>) {
    let meta = connection.meta_mut();
    meta.annotations = None;
    meta.labels = None;
    meta.managed_fields = None;
}

#[cfg(test)]
mod tests {
    use controller_actors::watch_store;

    use super::*;
    use crate::api::{ClusterFerrVaultConnectionSpec, NamespacedSecretKeyRef};

    /// A ClusterFerrVaultConnection reading its token from `platform/token`.
    fn platform() -> Lenient<ClusterFerrVaultConnection> {
        let spec: ClusterFerrVaultConnectionSpec = serde_json::from_value(serde_json::json!({
            "url": "https://ferrvault.example",
            "allowedNamespaces": { "names": ["*"] },
        }))
        .expect("a spec");
        let spec = ClusterFerrVaultConnectionSpec {
            token_secret_ref: Some(NamespacedSecretKeyRef {
                namespace: "platform".into(),
                name: "token".into(),
                key: "token".into(),
            }),
            ..spec
        };
        Lenient::Valid(ClusterFerrVaultConnection::new("platform", spec))
    }

    #[test]
    fn the_secret_metadata_filter_should_keep_held_namespaces_and_cluster_credential_ones_only() {
        let (store, mut writer) = watch_store::<Lenient<ClusterFerrVaultConnection>>();
        let keeps = kept_or_credential(|namespace: &str| namespace == "team-a", store);
        // Before the cluster connections have listed, which namespaces hold credentials is unknown.
        assert!(keeps("team-b"), "everything, until the cluster list");
        writer.apply(watcher::Event::Init);
        writer.apply(watcher::Event::InitApply(platform()));
        writer.apply(watcher::Event::InitDone);
        assert!(keeps("team-a"), "a held shard's namespace");
        assert!(keeps("platform"), "a cluster connection's credential namespace");
        assert!(!keeps("team-b"), "another shard's namespace");
    }
}
