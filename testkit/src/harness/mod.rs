//! Both simulators and the operator installed on a real runtime in the test process (leader
//! election off, small timings): object builders, bounded waits, and the leak scan every
//! in-process test ends with ([`Harness::finish`]).
//!
//! [`objects`] holds what a test creates, [`waits`] the bounded waits, [`observe`] what a test
//! reads back (metrics, Events, content hashes), [`logs`] the capture of the process's log lines.

mod logs;
mod objects;
mod observe;
mod waits;

use std::{io::Write, time::Duration};

use controller_actors::{BackoffConfig, Runtime};
use ferrvault_operator::{
    Operator, OperatorSettings,
    api::{FerrVaultConnection, FerrVaultSecret},
    ferrvault::{ClientConfig, ClusterIdentity, EgressPolicy, RetryPolicy},
};
use ferrvault_sim::ferrvault::SimConfig;
use prometheus_client::registry::Registry;
use tokio::sync::oneshot;

use self::logs::logs;
use crate::{
    cluster::Cluster,
    fixtures::{CLUSTER_ID, OIDC_JWT, sensitive_strings, sim_config},
};

/// Both simulators and the operator, running.
pub struct Harness {
    /// Both simulators ([`crate::fixtures`]' vaults and tokens) and the test's client; the
    /// harness dereferences to it (`h.kube`, `h.fv`, `h.secrets()`).
    pub cluster: Cluster,
    /// The registry of the running operator and its runtime (replaced on a restart).
    pub registry: Registry,
    /// The operator's projected token file, holding [`OIDC_JWT`].
    pub oidc_token_file: tempfile::NamedTempFile,
    settings: OperatorSettings,
    stop: Option<oneshot::Sender<()>>,
    run: tokio::task::JoinHandle<()>,
}

/// The operator on a real runtime, running until the sender is used or dropped.
fn launch_operator(
    client: &kube::Client,
    settings: OperatorSettings,
) -> (Registry, oneshot::Sender<()>, tokio::task::JoinHandle<()>) {
    let mut registry = Registry::default();
    let operator = Operator::new(client.clone(), settings, &mut registry);
    let builder = Runtime::builder()
        .max_concurrent_reconciles(4)
        .reconcile_timeout(Duration::from_secs(10))
        .kill_grace(Duration::from_secs(2))
        .probe_period(Duration::from_millis(200))
        .shutdown_grace(Duration::from_secs(2))
        .backoff(BackoffConfig {
            error_base: Duration::from_millis(100),
            error_max: Duration::from_millis(800),
            rate_base: Duration::from_millis(200),
            rate_max: Duration::from_secs(1),
            ..BackoffConfig::default()
        })
        .registry(&mut registry);
    let runtime = operator
        .install(builder)
        .build()
        .expect("valid runtime configuration");
    let (tx, rx) = oneshot::channel::<()>();
    let run = tokio::spawn(async move {
        let _ = runtime
            .run(async move {
                let _ = rx.await; // a dropped sender also means stop
            })
            .await;
    });
    (registry, tx, run)
}

/// Operator settings for tests: fast client retries, a generous budget, plain http allowed (the
/// simulators speak it), a refresh floor of 1s, and the simulators' loopback address allowed by the
/// egress policy (which refuses loopback by default). [`Harness::start_with`] adds the harness's cluster
/// identity.
pub fn test_settings() -> OperatorSettings {
    OperatorSettings {
        default_refresh_interval: Duration::from_secs(3600),
        connection_probe_interval: Duration::from_secs(600),
        watch_namespaces: Vec::new(),
        ferrvault: ClientConfig {
            rate_per_second: 50.0,
            burst: 50,
            attempt_timeout: Duration::from_secs(2),
            retry: RetryPolicy {
                max_attempts: 2,
                backoff: vec![Duration::from_millis(20)],
                jitter: 0.0,
            },
            allow_insecure_http: true,
            egress: EgressPolicy::from_flags(&["127.0.0.1/32".to_owned()], &[]).expect("a CIDR"),
            ..ClientConfig::default()
        },
        // Tests refresh every second to observe refreshes: below the 30s default floor, so it
        // is lowered here explicitly (the floor itself is tested in `tests/tenant`).
        min_refresh_interval: Duration::from_secs(1),
        ..OperatorSettings::default()
    }
}

impl Harness {
    /// Starts both simulators (CRDs installed) and the operator with [`test_settings`].
    pub async fn start() -> Harness {
        Self::start_with(test_settings()).await
    }

    /// Starts both simulators and the operator with `settings`; unless they set one, the
    /// operator's cluster identity is [`CLUSTER_ID`], the harness's projected token file and
    /// the FerrVault simulator as the one trusted URL.
    pub async fn start_with(settings: OperatorSettings) -> Harness {
        Self::start_with_fv(settings, sim_config()).await
    }

    /// [`Harness::start_with`] against a FerrVault simulator configured as `fv_config` (usually
    /// [`sim_config`] with a change).
    pub async fn start_with_fv(mut settings: OperatorSettings, fv_config: SimConfig) -> Harness {
        logs();
        let cluster = Cluster::start(fv_config).await;
        let mut oidc_token_file = tempfile::NamedTempFile::new().expect("temp file");
        writeln!(oidc_token_file, "{OIDC_JWT}").expect("write projected token");
        if settings.ferrvault.cluster_identity.is_none() {
            let identity = ClusterIdentity::new(
                CLUSTER_ID,
                oidc_token_file.path().to_owned(),
                &[cluster.fv.url()],
                settings.ferrvault.allow_insecure_http,
            )
            .expect("a valid cluster identity");
            settings.ferrvault.cluster_identity = Some(identity);
        }
        let (registry, stop, run) = launch_operator(&cluster.client, settings.clone());
        Harness {
            cluster,
            registry,
            oidc_token_file,
            settings,
            stop: Some(stop),
            run,
        }
    }

    /// Stops the operator and starts a new one (new process state: caches, key, metrics) against
    /// the same simulators, as a restart or an upgrade would.
    pub async fn restart_operator(&mut self) {
        self.stop_operator().await;
        self.start_operator().await;
    }

    /// Stops the operator (the simulators keep running), as a crash, an upgrade or a failover
    /// leaves the cluster between two operators.
    pub async fn stop_operator(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = tokio::time::timeout(Duration::from_secs(20), &mut self.run).await;
    }

    /// Starts a new operator (new process state: caches, key, metrics) after [`Harness::stop_operator`].
    pub async fn start_operator(&mut self) {
        let (registry, stop, run) = launch_operator(&self.client, self.settings.clone());
        (self.registry, self.stop, self.run) = (registry, Some(stop), run);
    }

    /// Stops the operator, then scans captured logs, Events, statuses of every custom resource
    /// and the `/metrics` text for any secret value or token. Every test ends with this.
    pub async fn finish(mut self) {
        let mut corpus = String::new();
        for event in self.events().await {
            corpus.push_str(&serde_json::to_string(&event).unwrap());
        }
        // Raw lists: an object that bypassed the schema must be scanned too, not fail the list.
        for raw in [self.raw::<FerrVaultSecret>(), self.raw::<FerrVaultConnection>()] {
            for object in raw
                .list(&Default::default())
                .await
                .expect("list custom resources")
                .items
            {
                corpus.push_str(&serde_json::to_string(&object.data.get("status")).unwrap());
            }
        }
        corpus.push_str(&self.metrics_text());
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = tokio::time::timeout(Duration::from_secs(20), &mut self.run).await;
        let log_text = logs().text();
        assert!(
            log_text.contains("reconcile"),
            "the log capture saw no reconcile (is the subscriber installed?)"
        );
        corpus.push_str(&log_text);
        for needle in sensitive_strings() {
            assert!(
                !corpus.contains(needle),
                "a secret value or token ({}…) leaked into logs, Events, status or metrics",
                &needle[..6.min(needle.len())]
            );
        }
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl std::ops::Deref for Harness {
    type Target = Cluster;

    fn deref(&self) -> &Cluster {
        &self.cluster
    }
}
