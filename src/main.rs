//! The `ferrvault-operator` binary: wires the CLI to the library.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

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
    /// Print both CRDs as multi-document YAML, or write the chart's CRD files with --out-dir.
    Crdgen {
        /// Write `<plural>.<group>.yaml` files into this directory instead of printing.
        #[arg(long)]
        out_dir: Option<PathBuf>,
    },
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Crdgen { out_dir: None } => print!("{}", ferrvault_operator::api::crdgen::all_crds_yaml()?),
        Command::Crdgen { out_dir: Some(dir) } => {
            for path in ferrvault_operator::api::crdgen::write_chart_crd_files(&dir)? {
                println!("wrote {}", path.display());
            }
        }
    }
    Ok(())
}
