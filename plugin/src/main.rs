//! `kubectl-ferrvault`: parses the command line, runs it, and ends with kubectl's exit codes
//! (0 success, 1 failure, 2 usage error; clap exits 2 on its own usage errors).

use std::process::ExitCode;

use clap::Parser;
use kubectl_ferrvault::{args::Cli, run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{error}");
            ExitCode::from(error.exit_code())
        }
    }
}
