//! The seam between the reconcilers and the process: [`Operator`] builds the shared context once
//! and [`Operator::install`] plugs both reconcilers and every watch into a runtime builder.
//!
//! # Guarantees
//! - One FerrVault client (pacers, single-flight, OIDC cache) is shared by both reconcilers, so
//!   the per-credential budget is one budget, whichever controller spends it.
//! - Metrics are registered once, in [`Operator::new`]; `install` may be called again (a new
//!   runtime after a restart) without registering twice.

use std::{sync::Arc, time::Duration};

use controller_actors::RuntimeBuilder;
use prometheus_client::registry::Registry;

use super::{
    connection::ConnectionReconciler, context::Context, events::EventSink, metrics::SyncMetrics,
    secret::SecretReconciler, watches,
};
use crate::ferrvault::{self, ClientConfig, FerrVault};

/// Controller name of the FerrVaultSecret reconciler (keys, metric labels).
pub const SECRET_CONTROLLER: &str = "ferrvaultsecret";
/// Controller name of the FerrVaultConnection reconciler (keys, metric labels).
pub const CONNECTION_CONTROLLER: &str = "ferrvaultconnection";

/// What the `run` flags decide for the reconcilers.
#[derive(Clone, Debug)]
pub struct OperatorSettings {
    /// `--default-refresh-interval` (1h): used only when `spec.refreshInterval` is empty, which
    /// needs the CRD default bypassed; an invalid value is reported, never replaced by this.
    pub default_refresh_interval: Duration,
    /// `--connection-probe-interval` (10m): how often a connection is re-probed.
    pub connection_probe_interval: Duration,
    /// `--watch-namespace`: watch and reconcile only this namespace; `None` is cluster-wide.
    pub watch_namespace: Option<String>,
    /// Pacing, timeouts and retries of the FerrVault client (rate and burst per credential).
    pub ferrvault: ClientConfig,
}

impl Default for OperatorSettings {
    fn default() -> Self {
        Self {
            default_refresh_interval: Duration::from_secs(3600),
            connection_probe_interval: super::guards::DEFAULT_CONNECTION_PROBE_INTERVAL,
            watch_namespace: None,
            ferrvault: ClientConfig::default(),
        }
    }
}

/// The operator's reconcilers and their shared context. Cheap to clone.
#[derive(Clone)]
pub struct Operator {
    ctx: Arc<Context>,
}

impl Operator {
    /// Builds the FerrVault client and the shared context, and registers the reconcilers'
    /// metrics (`ferrvault_secret_*`, `ferrvault_connection_ready`) and the client's
    /// per-credential metrics in `registry`.
    ///
    /// # Panics
    /// When `settings.ferrvault` fails [`ClientConfig::validate`]; validate flags first.
    pub fn new(client: kube::Client, settings: OperatorSettings, registry: &mut Registry) -> Operator {
        let ferrvault = FerrVault::new(settings.ferrvault.clone());
        ferrvault::metrics::register(registry, &ferrvault);
        let metrics = SyncMetrics::register(registry);
        let events = EventSink::new(client.clone());
        Operator {
            ctx: Arc::new(Context {
                client,
                ferrvault,
                settings,
                metrics,
                events,
                own_writes: Arc::default(),
            }),
        }
    }

    /// Adds both reconcilers (`ferrvaultsecret`, `ferrvaultconnection`) and all their watches.
    pub fn install(&self, builder: RuntimeBuilder) -> RuntimeBuilder {
        let watches = watches::build(
            &self.ctx.client,
            self.ctx.settings.watch_namespace.as_deref(),
            self.ctx.own_writes.clone(),
        );
        let secrets = Arc::new(SecretReconciler::new(self.ctx.clone()));
        let connections = Arc::new(ConnectionReconciler::new(self.ctx.clone()));
        let builder = builder
            .reconciler(SECRET_CONTROLLER, secrets)
            .reconciler(CONNECTION_CONTROLLER, connections);
        watches.into_iter().fold(builder, |b, w| b.watch(w))
    }

    /// The shared FerrVault client (for `/debug/queue`'s per-credential limiter state).
    pub fn ferrvault(&self) -> &FerrVault {
        &self.ctx.ferrvault
    }
}
