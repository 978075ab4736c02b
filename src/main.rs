//! The `ferrvault-operator` binary: `run` (the container's entrypoint) and `crdgen`.

use std::path::PathBuf;

use clap::{CommandFactory, Parser, Subcommand};
use ferrvault_operator::{RunArgs, api::crdgen, go_flag_syntax};

/// jemalloc rather than glibc's malloc: at 10,000 objects glibc's arenas kept about 7 MiB more
/// resident for the same live heap (mimalloc kept more than glibc). See bench-results/HISTORY.md.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

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
    Run(Box<RunArgs>),
    /// Print both CRDs as multi-document YAML, or write the chart's CRD files with --out-dir.
    Crdgen {
        /// Write `<plural>.<group>.yaml` files into this directory instead of printing.
        #[arg(long)]
        out_dir: Option<PathBuf>,
    },
}

fn main() -> anyhow::Result<()> {
    let command = Cli::command();
    let run = command.find_subcommand("run").expect("run is a subcommand");
    // Go operators' Deployments pass `-flag`: rewritten to `--flag` before clap reads argv.
    let argv = go_flag_syntax(std::env::args_os(), run);
    match Cli::parse_from(argv).command {
        // `run` sets up its own logging from its flags and owns its exit code.
        Command::Run(args) => std::process::exit(ferrvault_operator::run(*args)),
        Command::Crdgen { out_dir: None } => print!("{}", crdgen::all_crds_yaml()?),
        Command::Crdgen { out_dir: Some(dir) } => {
            for path in crdgen::write_chart_crd_files(&dir)? {
                println!("wrote {}", path.display());
            }
        }
    }
    Ok(())
}
