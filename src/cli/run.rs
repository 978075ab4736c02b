//! `ferrvault-operator run`: the operator process.
//!
//! Order of startup, each step failing the process before the next begins:
//! flags → settings (every rule, exit 2) → logging → kube client (and the API server's addresses,
//! which the egress policy refuses) → operator and runtime (exit 2 on a refused runtime
//! configuration) → HTTP servers bound (exit 1 on a port in use; their addresses and the pod's
//! join the egress policy) →
//! the content-hash key read, or created, in the Lease's namespace (exit 1 without it) →
//! the runtime runs until SIGTERM or SIGINT, then stops gracefully within
//! `--shutdown-grace-period` (exit 0), or exits with
//! [`RuntimeError::exit_code`](controller_actors::RuntimeError::exit_code) when it escalates.
//!
//! [`OperatorProcess::start`] is shared with `demo`, which runs the same process in-process against
//! the simulators. `run/error.rs`: [`RunError`] and its exit codes; `run/kube_client.rs`: the
//! process's Kubernetes client; `run/election.rs`: one Lease or the shard Leases (`--shards`), with
//! their write fence and filters.

use std::{future::Future, net::SocketAddr, sync::Arc};

use controller_actors::{HealthHandle, Runtime};
use prometheus_client::registry::Registry;
use tokio::sync::watch;

use self::{
    election::Election,
    kube_client::{kube_client_for, kube_config},
};
pub use self::{error::RunError, kube_client::kube_client};
use super::{args::RunArgs, logging, settings::ProcessEnv, settings::RunSettings};
use crate::{
    admin::{
        Sources,
        secure::SecureMetrics,
        server::{Addresses, Requested, Servers},
    },
    ferrvault::host_facts,
    hints::{self, HintEndpoint, HintKey, HintMetrics},
    reconcile::{Operator, OperatorSettings},
    telemetry::{self, rest_client::RestClientMetrics},
};

/// Runs `ferrvault-operator run` to completion and returns the process exit code. Errors are
/// logged (or printed, before logging exists).
pub fn main(args: RunArgs) -> i32 {
    match run(args) {
        Ok(()) => 0,
        Err(error) => {
            let code = error.exit_code();
            match &error {
                RunError::Config(_) | RunError::Logging(_) => eprintln!("error: {error}"),
                _ => tracing::error!(exit_code = code, "{error}"),
            }
            code
        }
    }
}

fn run(args: RunArgs) -> Result<(), RunError> {
    let mut settings = RunSettings::from_args(args, &ProcessEnv::read())?;
    logging::init(&settings.log)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(RunError::Process)?;
    runtime.block_on(async {
        let shutdown = shutdown_signal().map_err(RunError::Process)?;
        let config = kube_config(settings.kubeconfig.as_deref()).await?;
        let api_server = host_facts::api_server_endpoints(&config.cluster_url).await;
        settings.ferrvault.egress = settings.ferrvault.egress.clone().with_api_server(api_server);
        let client = kube_client_for(config)?;
        OperatorProcess::start(&settings, client)?.run(shutdown).await
    })
}

/// A started operator process: the runtime built and the HTTP servers listening.
pub struct OperatorProcess {
    operator: Operator,
    /// The client before the write fence, for the content-hash key only.
    unfenced: kube::Client,
    runtime: Runtime,
    servers: Servers,
    /// With the hint endpoint: where its key is published, and the Secret it is read from.
    hint_key: Option<(watch::Sender<Option<HintKey>>, String)>,
    /// The operator's namespace (the Lease's): where the hint key Secret lives.
    namespace: String,
}

impl OperatorProcess {
    /// Builds the operator and its runtime from `settings` and binds the servers.
    ///
    /// # Errors
    /// `Runtime` for a configuration the runtime refuses; `Serve` for an address that cannot be
    /// bound.
    pub fn start(settings: &RunSettings, client: kube::Client) -> Result<Self, RunError> {
        // kube and reqwest use rustls with ring; installing fails only when another part of the
        // process installed a provider first, which is just as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
        // Every write stops when this replica can no longer prove it holds the Lease (docs/architecture.md).
        let election = Election::new(settings, &client);
        let unfenced = client.clone();
        let client = election.fence_layer(settings).wrap(client);
        let mut registry = Registry::default();
        telemetry::process::register(&mut registry);
        RestClientMetrics::process_wide().register(&mut registry);
        let reconcilers = Operator::new(
            client.clone(),
            OperatorSettings {
                default_refresh_interval: settings.default_refresh_interval,
                connection_probe_interval: settings.connection_probe_interval,
                watch_namespaces: settings.watch_namespaces.clone(),
                ferrvault: settings.ferrvault.clone(),
                content_hash_key_namespace: settings.lease_namespace.clone(),
                min_refresh_interval: settings.min_refresh_interval,
                namespace_write_budget: settings.namespace_write_budget,
                require_credential_opt_in: settings.require_credential_opt_in,
                ..OperatorSettings::default()
            },
            &mut registry,
        );
        election.share_budget(reconcilers.ferrvault());
        let builder = Runtime::builder()
            .max_concurrent_reconciles(settings.max_concurrent_reconciles)
            .reconcile_timeout(settings.reconcile_timeout)
            .stall_threshold(settings.stall_threshold)
            .shutdown_grace(settings.shutdown_grace)
            .client(client)
            .registry(&mut registry);
        let builder = election.configure(builder, settings);
        let hint_metrics = settings.hint_addr.map(|_| HintMetrics::register(&mut registry));
        let runtime = reconcilers
            .install_kept(builder, election.keeps_namespace())
            .build()?;
        if let Some(leases) = election.shards() {
            telemetry::shards::register(&mut registry, leases, reconcilers.clone());
        }
        let (key_sender, key) = watch::channel(None);
        let hint_server = settings.hint_addr.zip(hint_metrics).map(|(addr, metrics)| {
            let sink = reconcilers.hint_sink(runtime.queues());
            let timeout = settings.http_limits.header_read_timeout;
            let endpoint = HintEndpoint::new(key.clone(), metrics, sink, timeout);
            (addr, hints::routes(Arc::new(endpoint)))
        });
        let hint_key = hint_server
            .is_some()
            .then(|| (key_sender, settings.hint_secret_name.clone()));
        let sources = Sources {
            health: runtime.health(),
            tree: runtime.tree(),
            queues: runtime.queues(),
            registry: Arc::new(registry),
            ferrvault: reconcilers.ferrvault().clone(),
        };
        let servers = Servers::start(
            Requested {
                metrics: settings.metrics_addr,
                probes: settings.probe_addr,
                admin: settings.admin_addr,
                limits: settings.http_limits,
                secure_metrics: settings.metrics_cert.clone().map(|cert| SecureMetrics {
                    cert,
                    client: unfenced.clone(),
                }),
                hints: hint_server,
            },
            sources,
        )?;
        let bound = servers.addresses();
        let own_servers: Vec<SocketAddr> = [bound.metrics, Some(bound.probes), bound.admin, bound.hints]
            .into_iter()
            .flatten()
            .collect();
        reconcilers
            .ferrvault()
            .know_own_addresses(&host_facts::own_interface_addresses(), &own_servers);
        tracing::info!(
            metrics = %bound.metrics.map_or_else(|| "disabled".to_owned(), |a| a.to_string()),
            metrics_secure = settings.metrics_cert.is_some(),
            probes = %bound.probes,
            admin = %bound.admin.map_or_else(|| "disabled".to_owned(), |a| a.to_string()),
            hints = %bound.hints.map_or_else(|| "disabled".to_owned(), |a| a.to_string()),
            "http servers listening"
        );
        tracing::info!(
            watch_namespaces = %watched(&settings.watch_namespaces),
            leader_elect = settings.leader_elect,
            shards = settings.shards.count(),
            default_refresh_interval = ?settings.default_refresh_interval,
            min_refresh_interval = ?settings.min_refresh_interval,
            namespace_write_qps = settings.namespace_write_budget.map_or(0.0, |rate| rate.per_second),
            stall_threshold = ?settings.stall_threshold,
            reconcile_timeout = ?settings.reconcile_timeout,
            max_concurrent_reconciles = settings.max_concurrent_reconciles,
            allow_insecure_http = settings.ferrvault.allow_insecure_http,
            ferrvault_allowed_cidrs = %cidrs(settings.ferrvault.egress.allowed()),
            ferrvault_denied_cidrs = %cidrs(settings.ferrvault.egress.denied()),
            require_credential_opt_in = settings.require_credential_opt_in,
            cluster_identity = %cluster_identity_summary(settings),
            "starting operator"
        );
        Ok(Self {
            operator: reconcilers,
            unfenced,
            runtime,
            servers,
            hint_key,
            namespace: settings.lease_namespace.clone(),
        })
    }

    /// Where the servers listen.
    pub fn addresses(&self) -> Addresses {
        self.servers.addresses()
    }

    /// Liveness and readiness, as the probes see them.
    pub fn health(&self) -> HealthHandle {
        self.runtime.health()
    }

    /// Reads (or creates) the content-hash key, then runs until `shutdown` resolves (graceful
    /// stop) or the runtime escalates, then stops the servers.
    ///
    /// # Errors
    /// `ContentHashKey` before anything runs; the runtime's error (see
    /// [`RuntimeError::exit_code`](controller_actors::RuntimeError::exit_code)).
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), RunError> {
        if let Err(error) = self.operator.load_content_hash_key(&self.unfenced).await {
            self.servers.stop();
            return Err(error.into());
        }
        let hint_key = self.hint_key.map(|(key, secret)| {
            tokio::spawn(hints::keep_key(
                self.unfenced.clone(),
                self.namespace,
                secret,
                key,
            ))
        });
        let result = self.runtime.run(shutdown).await;
        if let Some(task) = hint_key {
            task.abort();
        }
        self.servers.stop();
        result.map_err(RunError::from)
    }
}

/// The watched namespaces, comma-separated, or `<cluster-wide>`.
fn watched(namespaces: &[String]) -> String {
    if namespaces.is_empty() {
        "<cluster-wide>".to_owned()
    } else {
        namespaces.join(",")
    }
}

/// CIDRs, comma-separated.
fn cidrs(nets: &[ipnet::IpNet]) -> String {
    nets.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
}

/// `disabled`, or the cluster ID, token path and trusted URLs (none of them is a secret).
fn cluster_identity_summary(settings: &RunSettings) -> String {
    match &settings.ferrvault.cluster_identity {
        None => "disabled".to_owned(),
        Some(identity) => format!(
            "cluster {} token {} trusted [{}]",
            identity.cluster_id(),
            identity.token_path().display(),
            identity.trusted_urls().collect::<Vec<_>>().join(" ")
        ),
    }
}

/// Resolves on the first SIGTERM or SIGINT. Handlers are installed now, so a signal that
/// arrives during startup is not lost.
///
/// # Errors
/// The handlers could not be installed.
pub fn shutdown_signal() -> std::io::Result<impl Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM received"),
            _ = int.recv() => tracing::info!("SIGINT received"),
        }
    })
}

mod election;
mod error;
mod kube_client;
