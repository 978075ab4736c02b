//! The `ferrvault-operator` binary: wires the CLI to the library.

use clap::{Parser, Subcommand};
use ferrvault_operator::sim;

/// Keeps Kubernetes Secrets in sync with FerrVault.
#[derive(Parser, Debug)]
#[command(name = "ferrvault-operator", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a simulator of a server the operator talks to (used by tests and the demo).
    #[command(subcommand)]
    Sim(SimCommand),
}

#[derive(Subcommand, Debug)]
enum SimCommand {
    /// A Kubernetes API simulator on 127.0.0.1 (kubectl works against it).
    Kube(sim::kube::cli::SimKubeArgs),
    /// The FerrVault API with per-token rate limiting, faults and accounting.
    Ferrvault(sim::ferrvault::cli::SimFerrVaultArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let runtime = tokio::runtime::Runtime::new()?;
    match cli.command {
        Some(Command::Sim(SimCommand::Kube(args))) => runtime.block_on(sim::kube::cli::run(args))?,
        Some(Command::Sim(SimCommand::Ferrvault(args))) => runtime.block_on(args.run())?,
        None => {}
    }
    Ok(())
}
