//! `ferrvault-dev demo`: the whole operator against both simulators, in one process.
//!
//! It starts the Kubernetes and FerrVault simulators on 127.0.0.1, fills the `production`
//! vault, applies the CRDs (from `crdgen`) and the sample manifests (two connections, a
//! FerrVaultSecret with transforms and a rollout target Deployment, a plain FerrVaultSecret),
//! runs the same operator as `run` against them, prints a line per resource whenever its
//! Ready condition changes until all are Ready, then prints where the HTTP endpoints are and
//! a `kubectl` command for the simulated cluster, and stays up until Ctrl-C
//! (`--exit-when-ready` stops instead, for tests).
//!
//! # Guarantees
//! - No secret value or token is printed: progress lines show condition reasons and messages
//!   (key counts, names), never data.
//! - Exit 0 when all resources became Ready (and, with `--exit-when-ready`, the operator then
//!   stopped gracefully); 1 when they did not within `--ready-timeout`, naming those that
//!   were not.

mod progress;

use std::{path::PathBuf, time::Duration};

use clap::Parser;
use kube::{Api, Client, api::ListParams};
use tokio::time::Instant;

use progress::{Progress, ResourceState, all_ready};

use ferrvault_operator::{
    OperatorProcess, ProcessEnv, RunArgs, RunError, RunSettings,
    api::{ClusterFerrVaultSecret, FerrVaultConnection, FerrVaultSecret},
    rules::parse_go_duration,
};
use ferrvault_sim::{ferrvault::FerrVaultSim, kube::KubeSim};
use ferrvault_testkit::sample_world::{self, NAMESPACE};

/// Flags of `ferrvault-dev demo`.
#[derive(Debug, Clone, clap::Args)]
pub struct DemoArgs {
    /// Stop (exit 0) once every resource is Ready instead of staying up.
    #[arg(long)]
    pub exit_when_ready: bool,
    /// Give up (exit 1) if not everything is Ready by then.
    #[arg(long, default_value = "60s", value_parser = |v: &str| parse_go_duration(v).map_err(|e| e.to_string()))]
    pub ready_timeout: Duration,
    /// Where to write the kubeconfig of the simulated cluster.
    #[arg(long, default_value_os_t = std::env::temp_dir().join("ferrvault-demo.kubeconfig"))]
    pub kubeconfig_out: PathBuf,
    /// The operator's log level (logs go to stderr; progress to stdout).
    #[arg(long, default_value = "warn")]
    pub log_level: String,
}

/// Why the demo failed.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// A simulator or the kubeconfig could not be set up.
    #[error("simulator: {0}")]
    Sim(String),
    /// The sample world could not be created.
    #[error(transparent)]
    Fixture(#[from] sample_world::FixtureError),
    /// The operator failed to start or stopped abnormally.
    #[error(transparent)]
    Run(#[from] RunError),
    /// Not every resource became Ready in time.
    #[error("not Ready after {timeout:?}: {pending}")]
    NotReady {
        /// `--ready-timeout`.
        timeout: Duration,
        /// The resources still not Ready, with their condition.
        pending: String,
    },
}

/// Runs the demo; returns the process exit code.
pub fn main(args: DemoArgs) -> i32 {
    let result = tokio::runtime::Runtime::new()
        .map_err(|e| DemoError::Run(RunError::Process(e)))
        .and_then(|runtime| runtime.block_on(run(args)));
    match result {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("demo failed: {error}");
            1
        }
    }
}

async fn run(args: DemoArgs) -> Result<(), DemoError> {
    let settings = operator_settings(&args)?;
    ferrvault_operator::init_logging(&settings.log).map_err(RunError::from)?;
    let shutdown = ferrvault_operator::shutdown_signal().map_err(RunError::Process)?;
    let mut manifests = sample_world::manifests()?;
    let ferrvault = FerrVaultSim::start(sample_world::ferrvault_config(&manifests))
        .await
        .map_err(|e| DemoError::Sim(e.to_string()))?;
    let kube = KubeSim::start()
        .await
        .map_err(|e| DemoError::Sim(e.to_string()))?;
    kube.write_kubeconfig(&args.kubeconfig_out)
        .map_err(|e| DemoError::Sim(e.to_string()))?;
    println!("Kubernetes API simulator: {}", kube.url());
    println!("FerrVault simulator:      {}", ferrvault.url());
    sample_world::point_connections_at(&mut manifests, &ferrvault.url());
    let client = kube.client();
    sample_world::apply(&client, &manifests).await?;
    println!(
        "Applied the CRDs and {} sample manifests in namespace {NAMESPACE}.\n",
        manifests.len()
    );
    let operator = OperatorProcess::start(&settings, client.clone())?;
    let addresses = operator.addresses();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<()>();
    let exit_when_ready = args.exit_when_ready;
    let stop = async move {
        tokio::select! {
            () = shutdown => {}
            Ok(()) = ready_rx, if exit_when_ready => {}
        }
    };
    let mut running = tokio::spawn(operator.run(stop));
    let started = Instant::now();
    tokio::select! {
        ready = wait_until_ready(&client, args.ready_timeout) => ready?,
        stopped = &mut running => {
            stopped.map_err(|e| DemoError::Sim(format!("operator task: {e}")))??;
            return Err(DemoError::Sim("the operator stopped before everything was Ready".into()));
        }
    }
    println!(
        "\nAll resources are Ready after {:.1}s.\n",
        started.elapsed().as_secs_f64()
    );
    let admin = addresses.admin.expect("the demo always enables the admin server");
    if let Some(metrics) = addresses.metrics {
        println!("  metrics     curl http://{metrics}/metrics");
    }
    println!(
        "  health      curl http://{}/healthz   (and /readyz)",
        addresses.probes
    );
    println!("  actor tree  curl 'http://{admin}/debug/actors?format=text'");
    println!("  queues      curl http://{admin}/debug/queue");
    println!(
        "  kubectl     kubectl --kubeconfig {} get fvs -A",
        args.kubeconfig_out.display()
    );
    println!(
        "  rotate      curl -X PUT {}/_sim/vaults/{}/secrets/api_key -d '{{\"value\":\"rotated\"}}'   \
         (a new version: the connection's changeDetection Versions sees it within 5s)",
        ferrvault.url(),
        sample_world::VAULT
    );
    if exit_when_ready {
        // The receiver is gone only if the operator already stopped, which `running` reports.
        let _ = ready_tx.send(());
    } else {
        println!("\nPress Ctrl-C to stop.");
    }
    running
        .await
        .map_err(|e| DemoError::Sim(format!("operator task: {e}")))??;
    Ok(())
}

/// `run`'s defaults with every server on an ephemeral 127.0.0.1 port and no leader election.
fn operator_settings(args: &DemoArgs) -> Result<RunSettings, DemoError> {
    let argv = [
        "run",
        "--metrics-bind-address=127.0.0.1:0",
        "--health-probe-bind-address=127.0.0.1:0",
        "--admin-bind-address=127.0.0.1:0",
        "--log-format=text",
        // The in-process FerrVault simulator speaks plain http, on loopback (refused by default).
        "--allow-insecure-http",
        "--ferrvault-allowed-cidrs=127.0.0.1/32",
    ];
    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        run: RunArgs,
    }
    let mut flags = Flags::try_parse_from(argv).map_err(|e| DemoError::Sim(e.to_string()))?;
    // The simulators' warp servers log every connection the operator drops at exit as an error.
    flags.run.log_level = format!("{},warp::server=off", args.log_level);
    RunSettings::from_args(flags.run, &ProcessEnv::default()).map_err(|e| DemoError::Run(e.into()))
}

async fn wait_until_ready(client: &Client, timeout: Duration) -> Result<(), DemoError> {
    let deadline = Instant::now() + timeout;
    let mut progress = Progress::default();
    let mut states = Vec::new();
    while Instant::now() < deadline {
        states = read_states(client).await;
        for line in progress.observe(&states) {
            println!("{line}");
        }
        if all_ready(&states) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let pending: Vec<String> = states
        .iter()
        .filter(|s| !s.ready)
        .map(|s| format!("{} {} ({})", s.kind, s.key, s.summary))
        .collect();
    Err(DemoError::NotReady {
        timeout,
        pending: pending.join("; "),
    })
}

/// Every sample resource's Ready condition; a failed list reads as no resources (not ready).
async fn read_states(client: &Client) -> Vec<ResourceState> {
    let key = |meta: &kube::api::ObjectMeta| {
        format!(
            "{}/{}",
            meta.namespace.as_deref().unwrap_or_default(),
            meta.name.as_deref().unwrap_or_default()
        )
    };
    let mut states = Vec::new();
    let connections: Api<FerrVaultConnection> = Api::namespaced(client.clone(), NAMESPACE);
    // Every namespace: the cluster connection's sample fans out to three team namespaces.
    let secrets: Api<FerrVaultSecret> = Api::all(client.clone());
    let (Ok(connections), Ok(secrets)) = (
        connections.list(&ListParams::default()).await,
        secrets.list(&ListParams::default()).await,
    ) else {
        return states;
    };
    for c in connections {
        let conditions = c.status.map(|s| s.conditions).unwrap_or_default();
        states.push(ResourceState::new(
            "FerrVaultConnection",
            key(&c.metadata),
            &conditions,
        ));
    }
    for s in secrets {
        let conditions = s.status.map(|s| s.conditions).unwrap_or_default();
        states.push(ResourceState::new(
            "FerrVaultSecret",
            key(&s.metadata),
            &conditions,
        ));
    }
    // The cluster secret's sample: one read fanned out to the same three team namespaces.
    let cluster: Api<ClusterFerrVaultSecret> = Api::all(client.clone());
    for c in cluster
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
    {
        let conditions = c.status.map(|s| s.conditions).unwrap_or_default();
        states.push(ResourceState::new(
            "ClusterFerrVaultSecret",
            key(&c.metadata),
            &conditions,
        ));
    }
    states
}
