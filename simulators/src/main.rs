//! The `ferrvault-sim` binary: either simulator as a standalone server, for kubectl and manual runs.

use clap::{Parser, Subcommand};
use ferrvault_sim::{ferrvault::cli::SimFerrVaultArgs, kube::cli::SimKubeArgs};

/// Simulators of the servers ferrvault-operator talks to.
#[derive(Parser, Debug)]
#[command(name = "ferrvault-sim", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// A Kubernetes API simulator on 127.0.0.1 (kubectl works against it).
    Kube(SimKubeArgs),
    /// The FerrVault API with per-token rate limiting, faults and accounting.
    Ferrvault(SimFerrVaultArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Without RUST_LOG: warnings, minus warp logging every connection a client drops as an error.
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,warp::server=off")),
        )
        .init();
    let runtime = tokio::runtime::Runtime::new()?;
    match cli.command {
        Command::Kube(args) => runtime.block_on(ferrvault_sim::kube::cli::run(args))?,
        Command::Ferrvault(args) => runtime.block_on(args.run())?,
    }
    Ok(())
}
