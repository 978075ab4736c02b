//! The `ferrvault-dev` binary: the demo and the benchmarks.

use clap::{Parser, Subcommand};
use ferrvault_dev::{bench, demo};

/// Development tools for ferrvault-operator.
#[derive(Parser, Debug)]
#[command(name = "ferrvault-dev", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// What the binary does.
#[derive(Subcommand, Debug)]
enum Command {
    /// The operator against in-process Kubernetes and FerrVault simulators, with sample resources.
    Demo(demo::DemoArgs),
    /// Run a benchmark: prints a table and the command that reproduces it.
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(Subcommand, Debug)]
enum BenchCommand {
    /// List and watch fan-out throughput of the Kubernetes API simulator.
    KubeSim(bench::kube_sim::KubeSimBenchArgs),
    /// N resources on one FerrVault token: this client's limiter against the Go operator's retry policies.
    RateLimit(bench::rate_limit::RateLimitArgs),
    /// 1k–10k FerrVaultSecrets: the operator process vs a plain kube_runtime::Controller.
    Scale(bench::scale::ScaleArgs),
    /// Operator memory before and after many unrelated large Secrets.
    Memory(bench::memory::MemoryArgs),
    /// Leader takeover times over SIGKILLs and SIGTERMs of the leader.
    Failover(bench::failover::FailoverArgs),
    /// Every benchmark, the targets, JSON and PNG plots in a results folder.
    All(bench::all::AllArgs),
    /// The same reconcile logic under a plain kube_runtime::Controller (launched by scale/memory).
    #[command(hide = true)]
    PlainControllerWorker(bench::plain_controller::PlainWorkerArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let bench = match cli.command {
        // The demo sets up its own logging from its flags and owns its exit code.
        Command::Demo(args) => std::process::exit(demo::main(args)),
        Command::Bench(bench) => bench,
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Without RUST_LOG: warnings, minus the simulators' warp servers logging every connection
        // a client (a benchmark's child process) drops as an error.
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,warp::server=off")),
        )
        .init();
    let runtime = tokio::runtime::Runtime::new()?;
    // Each benchmark prints its own report; main only needs success or the reason.
    let reproduce = match bench {
        BenchCommand::KubeSim(args) => {
            runtime.block_on(bench::kube_sim::run(args))?;
            None
        }
        BenchCommand::RateLimit(args) => {
            runtime
                .block_on(bench::rate_limit::run(&args))
                .map_err(anyhow::Error::msg)?;
            None
        }
        BenchCommand::Scale(args) => {
            let report = runtime
                .block_on(bench::scale::run(&args))
                .map_err(anyhow::Error::msg)?;
            Some(format!("scale {}", report.flags))
        }
        BenchCommand::Memory(args) => {
            let report = runtime
                .block_on(bench::memory::run(&args))
                .map_err(anyhow::Error::msg)?;
            Some(format!("memory {}", report.flags))
        }
        BenchCommand::Failover(args) => {
            let report = runtime
                .block_on(bench::failover::run(&args))
                .map_err(anyhow::Error::msg)?;
            Some(format!("failover {}", report.flags))
        }
        BenchCommand::All(args) => {
            runtime
                .block_on(bench::all::run(&args))
                .map_err(anyhow::Error::msg)?;
            None
        }
        BenchCommand::PlainControllerWorker(args) => {
            runtime
                .block_on(bench::plain_controller::run(args))
                .map_err(anyhow::Error::msg)?;
            None
        }
    };
    if let Some(flags) = reproduce {
        println!("\nreproduce with: ferrvault-dev bench {flags}");
    }
    Ok(())
}
