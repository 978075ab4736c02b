//! The `ferrvault-operator` binary: wires the CLI to the library.

use clap::Parser;
use ferrvault_operator::sim;

/// Keeps Kubernetes Secrets in sync with FerrVault.
#[derive(Parser, Debug)]
#[command(name = "ferrvault-operator", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Run one of the simulators used by tests and demos.
    #[command(subcommand)]
    Sim(SimCommand),
    /// Run a benchmark and print its table.
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(clap::Subcommand, Debug)]
enum BenchCommand {
    /// List and watch fan-out throughput of the Kubernetes API simulator.
    KubeSim(ferrvault_operator::bench::kube_sim::KubeSimBenchArgs),
}

#[derive(clap::Subcommand, Debug)]
enum SimCommand {
    /// A Kubernetes API simulator on 127.0.0.1 (kubectl works against it).
    Kube(sim::kube::cli::SimKubeArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Runtime::new()?;
    match cli.command {
        Some(Command::Sim(SimCommand::Kube(args))) => runtime.block_on(sim::kube::cli::run(args))?,
        Some(Command::Bench(BenchCommand::KubeSim(args))) => {
            runtime.block_on(ferrvault_operator::bench::kube_sim::run(args))?;
        }
        None => {}
    }
    Ok(())
}
