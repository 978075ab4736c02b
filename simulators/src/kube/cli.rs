//! `ferrvault-sim kube`: runs the simulator until interrupted.

use super::{KubeSim, KubeSimOptions, SimError};
use std::{net::SocketAddr, path::PathBuf, time::Duration};

/// Arguments of `sim kube`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimKubeArgs {
    /// Port on 127.0.0.1 to listen on (0 picks a free one).
    #[arg(long, default_value_t = 0, env = "FERRVAULT_SIM_KUBE_PORT")]
    pub port: u16,
    /// Write a kubeconfig for kubectl here (written once the port is bound).
    #[arg(long, env = "FERRVAULT_SIM_KUBECONFIG_OUT")]
    pub kubeconfig_out: Option<PathBuf>,
    /// Changes kept for watch replay; watches from older resourceVersions get 410 Gone.
    #[arg(long, default_value_t = super::store::DEFAULT_HISTORY)]
    pub history: usize,
    /// Milliseconds between BOOKMARK events on watches that allow them.
    #[arg(long, default_value_t = 5_000)]
    pub bookmark_interval_ms: u64,
    /// Authorize every request against the stored RBAC objects (requests without
    /// credentials, like the kubeconfig's, stay the administrator's).
    #[arg(long)]
    pub enforce_rbac: bool,
}

/// Starts the simulator, prints its URL, writes the kubeconfig and serves until Ctrl-C.
///
/// # Errors
/// Binding or writing the kubeconfig failed.
pub async fn run(args: SimKubeArgs) -> Result<(), SimError> {
    let options = KubeSimOptions {
        history: args.history,
        bookmark_interval: Duration::from_millis(args.bookmark_interval_ms.max(1)),
        enforce_rbac: args.enforce_rbac,
    };
    let sim = KubeSim::start_with(SocketAddr::from(([127, 0, 0, 1], args.port)), options).await?;
    if let Some(path) = &args.kubeconfig_out {
        sim.write_kubeconfig(path)?;
        println!("kubeconfig written to {}", path.display());
    }
    println!("Kubernetes API simulator listening on {}", sim.url());
    println!("admin: {0}/_sim/faults, {0}/_sim/audit", sim.url());
    // If Ctrl-C cannot be awaited (no signal handler), stop right away rather than hang.
    let _ = tokio::signal::ctrl_c().await;
    sim.shutdown().await;
    Ok(())
}
