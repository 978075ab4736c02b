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
    /// List and watch fan-out throughput of the Kubernetes API simulator, and its writes at 1-64 clients.
    KubeSim(bench::kube_sim::KubeSimBenchArgs),
    /// Instructions per object of the operator (or the floor) under valgrind's callgrind.
    Instructions(bench::instructions::InstructionsArgs),
    /// N resources on one FerrVault token: this client's limiter against the Go operator's retry policies.
    RateLimit(bench::rate_limit::RateLimitArgs),
    /// 1k–10k FerrVaultSecrets: the operator vs a competent and a naive kube_runtime::Controller.
    Scale(bench::scale::ScaleArgs),
    /// Requests after a restart with nothing due, and per refresh wave.
    Economy(bench::economy::EconomyArgs),
    /// Rotation → target write and FerrVault requests per hour: Poll, Versions, change hints.
    Freshness(bench::freshness::FreshnessArgs),
    /// One tenant's new objects while another's backlog waits on a slow token.
    Fairness(bench::fairness::FairnessArgs),
    /// /healthz probes while slow-loris connections and a /metrics flood hit the admin ports.
    AdminLoad(bench::admin_load::AdminLoadArgs),
    /// Operator memory before and after many unrelated large Secrets.
    Memory(bench::memory::MemoryArgs),
    /// Leader takeover times over SIGKILLs and SIGTERMs of the leader.
    Failover(bench::failover::FailoverArgs),
    /// One secret in 1,000 namespaces: one ClusterFerrVaultSecret vs a FerrVaultSecret per namespace.
    Fanout(bench::fanout::FanoutArgs),
    /// 100,000 objects on 4 replicas x 8 shards against 1 replica, then SIGKILL of a replica.
    Shards(bench::shards::ShardArgs),
    /// Every benchmark, the targets, JSON, README tables and PNG plots in a results folder.
    All(Box<bench::all::AllArgs>),
    /// The README's Performance tables from a `bench all` report.
    Tables(TablesArgs),
    /// The same reconcile logic under a plain kube_runtime::Controller (launched by scale/memory).
    #[command(hide = true)]
    PlainControllerWorker(bench::plain_controller::PlainWorkerArgs),
    /// The floor of `bench scale`: only the operator's writes (a child of `bench scale`).
    #[command(hide = true)]
    FloorWorker(bench::floor::FloorWorkerArgs),
}

/// Flags of `bench tables`.
#[derive(clap::Args, Debug)]
struct TablesArgs {
    /// The `report.json` of a `bench all` run.
    #[arg(long, default_value = "bench-results/published/report.json")]
    report: std::path::PathBuf,
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
        BenchCommand::Instructions(args) => {
            runtime
                .block_on(bench::instructions::run(&args))
                .map_err(anyhow::Error::msg)?;
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
        BenchCommand::Economy(args) => {
            let report = runtime
                .block_on(bench::economy::run(&args, None))
                .map_err(anyhow::Error::msg)?;
            Some(format!("economy {}", report.flags))
        }
        BenchCommand::Freshness(args) => {
            let report = runtime
                .block_on(bench::freshness::run(&args))
                .map_err(anyhow::Error::msg)?;
            Some(format!("freshness {}", report.flags))
        }
        BenchCommand::Fairness(args) => {
            let report = runtime
                .block_on(bench::fairness::run(&args, None))
                .map_err(anyhow::Error::msg)?;
            Some(format!("fairness {}", report.flags))
        }
        BenchCommand::AdminLoad(args) => {
            let report = runtime
                .block_on(bench::admin_load::run(&args, None))
                .map_err(anyhow::Error::msg)?;
            Some(format!("admin-load {}", report.flags))
        }
        BenchCommand::Tables(args) => {
            let text = std::fs::read_to_string(&args.report)?;
            let report: bench::report::AllReport = serde_json::from_str(&text)?;
            print!("{}", bench::tables::markdown(&bench::tables::tables(&report)));
            None
        }
        BenchCommand::Memory(args) => {
            let report = runtime
                .block_on(bench::memory::run(&args))
                .map_err(anyhow::Error::msg)?;
            Some(format!("memory {}", report.flags))
        }
        BenchCommand::Fanout(args) => {
            let report = runtime
                .block_on(bench::fanout::run(&args))
                .map_err(anyhow::Error::msg)?;
            Some(format!("fanout {}", report.flags))
        }
        BenchCommand::Shards(args) => {
            let report = runtime
                .block_on(bench::shards::run(&args))
                .map_err(anyhow::Error::msg)?;
            Some(format!("shards {}", report.flags))
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
        BenchCommand::FloorWorker(args) => {
            runtime
                .block_on(bench::floor::run(args))
                .map_err(anyhow::Error::msg)?;
            None
        }
    };
    if let Some(flags) = reproduce {
        println!("\nreproduce with: ferrvault-dev bench {flags}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_flag_of_every_command_should_be_unique_and_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn the_readme_quick_run_should_parse_with_every_benchmark_keeping_its_own_runs() {
        let cli = Cli::try_parse_from(
            "ferrvault-dev bench all --sizes 1000 --runs 2 --memory-runs 4 --economy-runs 5 --fairness-runs 6 --admin-runs 7 --rate-runs 8 --fairness-probes 10"
                .split(' '),
        )
        .expect("the quick run parses");
        let Command::Bench(BenchCommand::All(all)) = cli.command else {
            panic!("bench all expected");
        };
        assert_eq!(
            (
                all.scale.runs,
                all.memory.runs,
                all.economy.runs,
                all.fairness.runs,
                all.admin_load.runs,
                all.rate_runs
            ),
            (2, 4, 5, 6, 7, 8)
        );
        assert_eq!((all.scale.probes, all.fairness.probes), (20, 10));
    }
}
