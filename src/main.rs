//! The `ferrvault-operator` binary: wires the CLI to the library.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use ferrvault_operator::{api::crdgen, bench, cli, demo, sim};

/// Keeps Kubernetes Secrets in sync with FerrVault.
#[derive(Parser, Debug)]
#[command(name = "ferrvault-operator", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// What the binary does.
#[derive(Subcommand, Debug)]
enum Command {
    /// Run the operator (the container's entrypoint). A flag given twice takes its last value,
    /// so the chart's `extraArgs` (passed last) override its defaults.
    #[command(args_override_self = true)]
    Run(Box<cli::RunArgs>),
    /// The operator against in-process Kubernetes and FerrVault simulators, with sample resources.
    Demo(demo::DemoArgs),
    /// Run a simulator of a server the operator talks to (used by tests and the demo).
    #[command(subcommand)]
    Sim(SimCommand),
    /// Run a benchmark: prints a table and the command that reproduces it.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Print both CRDs as multi-document YAML, or write the chart's CRD files with --out-dir.
    Crdgen {
        /// Write `<plural>.<group>.yaml` files into this directory instead of printing.
        #[arg(long)]
        out_dir: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
enum SimCommand {
    /// A Kubernetes API simulator on 127.0.0.1 (kubectl works against it).
    Kube(sim::kube::cli::SimKubeArgs),
    /// The FerrVault API with per-token rate limiting, faults and accounting.
    Ferrvault(sim::ferrvault::cli::SimFerrVaultArgs),
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
    // `run` and `demo` set up their own logging from their flags and own their exit code.
    match cli.command {
        Command::Run(args) => std::process::exit(cli::run::main(*args)),
        Command::Demo(args) => std::process::exit(demo::main(args)),
        _ => {}
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Without RUST_LOG: warnings, minus the simulators' warp servers logging every connection
        // a client (a benchmark's child process) drops as an error.
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,warp::server=off")),
        )
        .init();
    let runtime = || tokio::runtime::Runtime::new();
    match cli.command {
        Command::Run(_) | Command::Demo(_) => unreachable!("handled above"),
        Command::Sim(SimCommand::Kube(args)) => runtime()?.block_on(sim::kube::cli::run(args))?,
        Command::Sim(SimCommand::Ferrvault(args)) => runtime()?.block_on(args.run())?,
        Command::Bench(BenchCommand::KubeSim(args)) => runtime()?.block_on(bench::kube_sim::run(args))?,
        Command::Bench(BenchCommand::RateLimit(args)) => {
            // The report is already printed and written; main only needs success or the reason.
            runtime()?
                .block_on(bench::rate_limit::run(&args))
                .map_err(anyhow::Error::msg)?;
        }
        Command::Bench(BenchCommand::Scale(args)) => {
            let report = runtime()?
                .block_on(bench::scale::run(&args))
                .map_err(anyhow::Error::msg)?;
            println!(
                "\nreproduce with: cargo run --release -- bench scale {}",
                report.flags
            );
        }
        Command::Bench(BenchCommand::Memory(args)) => {
            let report = runtime()?
                .block_on(bench::memory::run(&args))
                .map_err(anyhow::Error::msg)?;
            println!(
                "\nreproduce with: cargo run --release -- bench memory {}",
                report.flags
            );
        }
        Command::Bench(BenchCommand::Failover(args)) => {
            let report = runtime()?
                .block_on(bench::failover::run(&args))
                .map_err(anyhow::Error::msg)?;
            println!(
                "\nreproduce with: cargo run --release -- bench failover {}",
                report.flags
            );
        }
        Command::Bench(BenchCommand::All(args)) => {
            runtime()?
                .block_on(bench::all::run(&args))
                .map_err(anyhow::Error::msg)?;
        }
        Command::Bench(BenchCommand::PlainControllerWorker(args)) => runtime()?
            .block_on(bench::plain_controller::run(args))
            .map_err(anyhow::Error::msg)?,
        Command::Crdgen { out_dir: None } => print!("{}", crdgen::all_crds_yaml()?),
        Command::Crdgen { out_dir: Some(dir) } => {
            for path in crdgen::write_chart_crd_files(&dir)? {
                println!("wrote {}", path.display());
            }
        }
    }
    Ok(())
}
