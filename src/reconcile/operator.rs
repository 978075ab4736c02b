//! The seam between the reconcilers and the process: [`Operator`] builds the shared context once
//! and [`Operator::install`] plugs both reconcilers and every watch into a runtime builder.
//!
//! # Guarantees
//! - One FerrVault client (pacers, single-flight, OIDC cache) is shared by both reconcilers, so
//!   the per-credential budget is one budget, whichever controller spends it.
//! - Metrics are registered once, in [`Operator::new`]; `install` may be called again (a new
//!   runtime after a restart) without registering twice.
//! - The content-hash key is loaded once per process ([`Operator::load_content_hash_key`]).
//! - Every write of the reconcilers is charged to its namespace's write budget: the shared
//!   client is wrapped once, here ([`WriteBudget::charging`]).

use std::sync::{Arc, OnceLock};

use controller_actors::{KeyFeed, QueueHandle, RuntimeBuilder};
use kube::Resource;
use prometheus_client::registry::Registry;

use super::{
    changes::ChangeFeed,
    connection::{
        CLUSTER_CONNECTION_CONTROLLER, ClusterConnectionReconciler, ConnectionReconciler, RefusedGauge,
        register_refused_gauge,
    },
    content_hash_key::{ContentHashKeySource, KeyError},
    context::Context,
    read::{Reads, Scoped},
    report::{EventSink, SyncMetrics},
    secret::{
        CLUSTER_SECRET_CONTROLLER, ClusterSecretReconciler, Part, SecretReconciler, TargetsGauge,
        register_targets_gauge,
    },
    settings::{CONNECTION_CONTROLLER, OperatorSettings, SECRET_CONTROLLER},
    watch::{self, HintDispatch, KeepsNamespace},
    write::WriteBudget,
};
use crate::{
    api::{FerrVaultSecret, Lenient},
    ferrvault::{self, FerrVault},
    hints::HintSink,
};

/// The name of the change detection's key feed (the actor tree, readiness).
const CHANGE_FEED: &str = "FerrVault versions";

/// The operator's reconcilers and their shared context. Cheap to clone.
#[derive(Clone)]
pub struct Operator {
    ctx: Arc<Context>,
    /// The ClusterFerrVaultConnection reconciler's gauge (registered by [`Operator::new`], set by
    /// the reconciler [`Operator::install`] adds).
    cluster_refused: RefusedGauge,
    /// The ClusterFerrVaultSecret reconciler's gauge, registered likewise.
    cluster_targets: TargetsGauge,
    /// The FerrVaultSecrets' store, once [`Operator::install_kept`] built it.
    stored_secrets: Arc<OnceLock<Scoped<Lenient<FerrVaultSecret>>>>,
}

impl Operator {
    /// Builds the FerrVault client and the shared context, and registers the reconcilers'
    /// metrics (`ferrvault_secret_*`, `ferrvault_connection_ready`,
    /// `ferrvault_write_budget_throttled_total`) and the client's per-credential metrics in
    /// `registry`.
    ///
    /// # Panics
    /// When `settings.ferrvault` fails [`ClientConfig::validate`](crate::ferrvault::ClientConfig::validate); validate flags first.
    pub fn new(client: kube::Client, settings: OperatorSettings, registry: &mut Registry) -> Operator {
        let ferrvault = FerrVault::new(settings.ferrvault.clone());
        ferrvault::metrics::register(registry, &ferrvault);
        let metrics = SyncMetrics::register(registry);
        let writes = Arc::new(WriteBudget::new(
            settings.namespace_write_budget,
            &[SECRET_CONTROLLER, CONNECTION_CONTROLLER],
            registry,
        ));
        let client = writes.charging(client);
        let events = EventSink::new(client.clone());
        events.register(registry);
        let content_hash_key = ContentHashKeySource::new(settings.content_hash_key_namespace.clone());
        let cluster_refused = register_refused_gauge(registry);
        let changes = ChangeFeed::register(registry);
        let cluster_targets = register_targets_gauge(registry);
        Operator {
            cluster_refused,
            cluster_targets,
            stored_secrets: Arc::default(),
            ctx: Arc::new(Context {
                client,
                ferrvault,
                settings,
                metrics,
                events,
                own_writes: Arc::default(),
                writes,
                content_hash_key,
                changes,
                hints: Arc::default(),
            }),
        }
    }

    /// Reads (or creates) the content-hash key through `client`. The process passes its client
    /// without the write fence: the key is not a reconcile's write (replicas racing to create it
    /// agree through create-then-read), and it is needed before this replica leads.
    ///
    /// # Errors
    /// The key Secret cannot be read, created or used.
    pub async fn load_content_hash_key(&self, client: &kube::Client) -> Result<(), KeyError> {
        self.ctx.content_hash_key.get(client).await.map(|_| ())
    }

    /// Adds the reconcilers (`ferrvaultsecret`, `ferrvaultconnection`,
    /// `clusterferrvaultconnection`, `clusterferrvaultsecret`) and all their watches.
    pub fn install(&self, builder: RuntimeBuilder) -> RuntimeBuilder {
        self.install_kept(builder, None)
    }

    /// [`install`](Self::install), the namespaced watches storing only the objects of the
    /// namespaces `keeps` accepts (with `--shards`: the held shards'; docs/sharding.md).
    pub(crate) fn install_kept(
        &self,
        builder: RuntimeBuilder,
        keeps: Option<KeepsNamespace>,
    ) -> RuntimeBuilder {
        let watches = watch::build(
            &self.ctx.client,
            &self.ctx.settings.watch_namespaces,
            self.ctx.own_writes.clone(),
            keeps.as_ref(),
        );
        self.ctx.hints.watch_store(watches.stores.secrets.clone());
        // Installed once per process; a second install keeps counting the first one's store.
        let _ = self.stored_secrets.set(watches.stores.secrets.clone());
        let reads = Arc::new(Reads::new(
            self.ctx.client.clone(),
            watches.stores,
            &self.ctx.settings,
        ));
        let secrets = Arc::new(SecretReconciler::reading(self.ctx.clone(), reads.clone()));
        let cluster = Arc::new(ClusterConnectionReconciler::new(
            self.ctx.clone(),
            reads.clone(),
            self.cluster_refused.clone(),
        ));
        let cluster_secrets = Arc::new(ClusterSecretReconciler::new(
            self.ctx.clone(),
            reads.clone(),
            self.cluster_targets.clone(),
            Part::of(keeps),
        ));
        let connections = Arc::new(ConnectionReconciler::new(self.ctx.clone(), reads));
        let builder = builder
            .reconciler(SECRET_CONTROLLER, secrets)
            .reconciler(CONNECTION_CONTROLLER, connections)
            .reconciler(CLUSTER_CONNECTION_CONTROLLER, cluster)
            .reconciler(CLUSTER_SECRET_CONTROLLER, cluster_secrets);
        // Runs while leading, like the watches: it lends the pollers the controllers' key sink.
        let versions = KeyFeed::new(CHANGE_FEED, self.ctx.changes.clone());
        let builder = builder.watch(Box::new(versions));
        watches.sources.into_iter().fold(builder, |b, w| b.watch(w))
    }

    /// Where the hint endpoint sends accepted hints: they mark the matching FerrVaultSecrets due
    /// and enqueue them through `queues`.
    pub(crate) fn hint_sink(&self, queues: QueueHandle) -> Arc<dyn HintSink> {
        Arc::new(HintDispatch::new(self.ctx.hints.clone(), queues))
    }

    /// Calls `f` with the namespace of every FerrVaultSecret the watches store (none before
    /// [`install_kept`](Self::install_kept)): with `--shards`, only the held shards' objects.
    pub fn for_each_stored_secret_namespace(&self, mut f: impl FnMut(&str)) {
        let Some(store) = self.stored_secrets.get() else {
            return;
        };
        for secret in store.state() {
            f(secret.meta().namespace.as_deref().unwrap_or_default());
        }
    }

    /// The shared FerrVault client (for `/debug/queue`'s per-credential limiter state).
    pub fn ferrvault(&self) -> &FerrVault {
        &self.ctx.ferrvault
    }
}
