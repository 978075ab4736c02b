//! `ferrvault-dev bench instructions`: instructions per object, counted by
//! `valgrind --tool=callgrind` (issue 39). Seconds on a shared machine move with its load;
//! instructions executed do not, so this is the figure to compare between commits there.
//!
//! The operator (or the floor) runs under callgrind against fresh simulators with `--objects`
//! and then twice as many FerrVaultSecrets, each run from launch until every object is Ready
//! and the cluster has been quiet for a second, then stopped with SIGTERM (callgrind writes its
//! totals on exit). Instructions per object are the difference of the two runs' totals divided
//! by the difference in objects: start-up, the list and the shutdown cancel out.
//!
//! # Caveats
//! Callgrind runs the process's threads one at a time and some 50 times slower; the operator's
//! deadlines are seconds, far above what one pass then takes at these sizes, but a much larger
//! `--objects` would take minutes per run.

use std::{path::Path, time::Duration};

use super::{
    child::{self, Spawned},
    driver::{Driver, LaunchOptions},
    scale_run::{STOP_GRACE, wait_until_quiet},
    watchers::ReadyCounter,
};
use ferrvault_testkit::bench_world::{NS, World};

/// Longest wait for all Ready under callgrind.
const READY_TIMEOUT: Duration = Duration::from_secs(600);

/// Flags of `bench instructions`.
#[derive(Clone, Debug, clap::Args)]
pub struct InstructionsArgs {
    /// FerrVaultSecrets of the first run (the second has twice as many).
    #[arg(long, default_value_t = 100)]
    pub objects: usize,
    /// Which driver runs under callgrind: `operator` or `floor`.
    #[arg(long, value_enum, default_value_t = Driver::Operator)]
    pub driver: Driver,
    /// Reconciles at once.
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
    /// Operator binary to launch (default: `ferrvault-operator` beside this executable).
    #[arg(long, hide = true)]
    pub binary: Option<std::path::PathBuf>,
}

/// Runs both sizes and prints instructions per object.
///
/// # Errors
/// valgrind or a simulator could not start, a run did not reach all Ready, or callgrind wrote
/// no totals.
pub async fn run(args: &InstructionsArgs) -> Result<f64, String> {
    let binary = child::operator_binary(args.binary.as_deref())?;
    let small = args.objects.max(1);
    let mut totals = Vec::new();
    for n in [small, 2 * small] {
        let total = count(args, &binary, n).await?;
        println!(
            "{n:>7} objects  {:<20}  {total} instructions",
            args.driver.label()
        );
        totals.push(total);
    }
    let per_object = totals[1].saturating_sub(totals[0]) as f64 / small as f64;
    println!(
        "\n{}: {per_object:.0} instructions per object (callgrind, ({} - {}) / {small})",
        args.driver.label(),
        totals[1],
        totals[0]
    );
    println!(
        "reproduce with: ferrvault-dev bench instructions --objects {small} --driver {} --concurrency {}",
        args.driver.flag(),
        args.concurrency
    );
    Ok(per_object)
}

/// The instructions callgrind counted for one run at `n` objects.
async fn count(args: &InstructionsArgs, binary: &Path, n: usize) -> Result<u64, String> {
    let world = World::start().await?;
    world.create_secrets(NS, "s", 0..n).await?;
    let mut ready = ReadyCounter::start(&world.client, NS);
    let out = std::env::temp_dir().join(format!("ferrvault-callgrind-{}-{n}.out", std::process::id()));
    let program = match args.driver {
        Driver::Operator => binary.to_owned(),
        Driver::CompetentController | Driver::NaiveController | Driver::Floor => child::this_executable()?,
    };
    let mut command = vec![
        "--tool=callgrind".to_owned(),
        format!("--callgrind-out-file={}", out.display()),
        program.display().to_string(),
    ];
    command.extend(
        args.driver
            .args(&world.kubeconfig, &LaunchOptions::unlimited(args.concurrency)),
    );
    let env = [("RUST_LOG", "warn".to_owned())];
    let mut process = Spawned::start(Path::new("valgrind"), &command, &env)?;
    let all = ready.wait_for(n, READY_TIMEOUT).await;
    wait_until_quiet(&world).await;
    process.stop(STOP_GRACE).await;
    if !all {
        return Err(format!(
            "{n} objects: not all Ready under callgrind\n{}",
            process.tail()
        ));
    }
    let text = std::fs::read_to_string(&out).map_err(|e| format!("read {}: {e}", out.display()))?;
    // Best effort: the file is only scratch.
    drop(std::fs::remove_file(&out));
    totals(&text).ok_or_else(|| format!("no totals in {}", out.display()))
}

/// The `summary:` (or `totals:`) figure of a callgrind output file: instructions executed.
pub fn totals(callgrind_out: &str) -> Option<u64> {
    callgrind_out.lines().find_map(|line| {
        let value = line
            .strip_prefix("summary:")
            .or_else(|| line.strip_prefix("totals:"))?;
        value.split_whitespace().next()?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_totals_should_be_read_from_a_callgrind_file() {
        let file = "version: 1\ncmd: x\nevents: Ir\nfn=main\n1 5\nsummary: 123456\ntotals: 123456\n";
        assert_eq!(totals(file), Some(123_456));
        assert_eq!(totals("events: Ir\n"), None);
    }
}
