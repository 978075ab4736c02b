//! `ferrvault-dev bench failover`: `--replicas` operator processes with leader election
//! against the Kubernetes simulator. Each round finds the leader from the Lease, signals it
//! (SIGKILL or SIGTERM, alternating) and times until the Lease names another live replica:
//! the takeover time. The signalled process is replaced before the next round, so every round
//! starts with the same number of candidates. Reports median and max per signal.
//!
//! Expected: SIGTERM releases the Lease, so a standby takes over within about one retry period;
//! SIGKILL leaves it held until it expires, so takeover takes up to lease duration + retry
//! period.

use std::{path::PathBuf, time::Duration};

use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use serde::Serialize;
use tokio::time::Instant;

use super::{
    child::{self, Spawned},
    driver::{Driver, percentile},
    world::World,
};

/// The Lease the replicas compete for (the `--leader-elect-id` default).
const LEASE_NAME: &str = "ferrvault-operator.ferrvault.com";
/// Its namespace.
const LEASE_NS: &str = "default";

/// Flags of `bench failover`.
#[derive(Clone, Debug, clap::Args)]
pub struct FailoverArgs {
    /// Operator processes competing for the Lease.
    #[arg(long, default_value_t = 3)]
    pub replicas: usize,
    /// Rounds of each kind: this many SIGKILLs and this many SIGTERMs.
    #[arg(long, default_value_t = 10)]
    pub kills: usize,
    /// `--leader-elect-lease-duration` of every replica, whole seconds.
    #[arg(long, default_value_t = 5)]
    pub lease_duration_seconds: u64,
    /// `--leader-elect-renew-deadline`, whole seconds.
    #[arg(long, default_value_t = 3)]
    pub renew_deadline_seconds: u64,
    /// `--leader-elect-retry-period`, whole seconds.
    #[arg(long, default_value_t = 1)]
    pub retry_period_seconds: u64,
    /// Give up on one takeover after this many seconds.
    #[arg(long, default_value_t = 60)]
    pub timeout_seconds: u64,
    /// Operator binary to launch (default: `ferrvault-operator` beside this executable).
    #[arg(long, hide = true)]
    pub binary: Option<PathBuf>,
}

impl FailoverArgs {
    /// The flags that reproduce this run.
    pub fn flags(&self) -> String {
        format!(
            "--replicas {} --kills {} --lease-duration-seconds {} --renew-deadline-seconds {} --retry-period-seconds {}",
            self.replicas,
            self.kills,
            self.lease_duration_seconds,
            self.renew_deadline_seconds,
            self.retry_period_seconds
        )
    }

    /// The kill target: lease duration + retry period, seconds.
    pub fn kill_bound_seconds(&self) -> f64 {
        (self.lease_duration_seconds + self.retry_period_seconds) as f64
    }

    fn operator_flags(&self) -> Vec<String> {
        vec![
            "--leader-elect".into(),
            format!("--leader-elect-namespace={LEASE_NS}"),
            format!("--leader-elect-lease-duration={}s", self.lease_duration_seconds),
            format!("--leader-elect-renew-deadline={}s", self.renew_deadline_seconds),
            format!("--leader-elect-retry-period={}s", self.retry_period_seconds),
            "--shutdown-grace-period=10s".into(),
        ]
    }
}

/// How the leader is stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Signal {
    /// SIGKILL: no chance to release the Lease.
    Kill,
    /// SIGTERM: graceful stop.
    Term,
}

/// One round.
#[derive(Clone, Debug, Serialize)]
pub struct Round {
    /// The signal sent.
    pub signal: Signal,
    /// Seconds from the signal until another replica held the Lease; `None` on timeout.
    pub takeover_seconds: Option<f64>,
}

/// Median and max of one signal's rounds.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Summary {
    /// Median takeover, seconds.
    pub median: Option<f64>,
    /// Slowest takeover, seconds.
    pub max: Option<f64>,
    /// Rounds that timed out.
    pub timeouts: usize,
}

/// The whole benchmark.
#[derive(Clone, Debug, Serialize)]
pub struct FailoverReport {
    /// Flags that reproduce it.
    pub flags: String,
    /// Lease duration + retry period, seconds (the kill target).
    pub kill_bound_seconds: f64,
    /// Every round in order.
    pub rounds: Vec<Round>,
    /// SIGKILL rounds.
    pub kill: Summary,
    /// SIGTERM rounds.
    pub term: Summary,
}

/// Median, max and timeouts of the rounds that used `signal`.
pub fn summarize(rounds: &[Round], signal: Signal) -> Summary {
    let of_kind: Vec<&Round> = rounds.iter().filter(|r| r.signal == signal).collect();
    let times: Vec<f64> = of_kind.iter().filter_map(|r| r.takeover_seconds).collect();
    Summary {
        median: percentile(&times, 50.0),
        max: times.iter().copied().reduce(f64::max),
        timeouts: of_kind.len() - times.len(),
    }
}

/// A replica: its pod name (the identity prefix) and process.
struct Replica {
    name: String,
    process: Spawned,
}

/// Runs the rounds and prints the table.
///
/// # Errors
/// A simulator or replica failed to start, or no leader was ever elected.
pub async fn run(args: &FailoverArgs) -> Result<FailoverReport, String> {
    let binary = child::operator_binary(args.binary.as_deref())?;
    let world = World::start().await?;
    let leases = Api::<Lease>::namespaced(world.client.clone(), LEASE_NS);
    let timeout = Duration::from_secs(args.timeout_seconds);
    let mut launched = 0;
    let mut replicas = Vec::new();
    for _ in 0..args.replicas.max(2) {
        replicas.push(launch(&binary, &world, args, &mut launched).await?);
    }
    let mut rounds = Vec::new();
    for i in 0..args.kills * 2 {
        let signal = if i % 2 == 0 { Signal::Kill } else { Signal::Term };
        let (leader, holder) = wait_for_leader(&leases, &replicas, timeout).await?;
        let started = Instant::now();
        let mut stopped = replicas.remove(leader);
        match signal {
            Signal::Kill => stopped.process.sigkill(),
            Signal::Term => stopped.process.sigterm()?,
        }
        let takeover = wait_for_takeover(&leases, &replicas, &holder, started + timeout).await;
        let takeover_seconds = takeover.then(|| started.elapsed().as_secs_f64());
        println!(
            "round {:>2}  {:<4}  takeover {}",
            i + 1,
            format!("{signal:?}").to_uppercase(),
            takeover_seconds.map_or_else(|| "timed out".to_owned(), |s| format!("{s:.2}s"))
        );
        rounds.push(Round {
            signal,
            takeover_seconds,
        });
        stopped.process.stop(Duration::from_secs(15)).await;
        replicas.push(launch(&binary, &world, args, &mut launched).await?);
    }
    for replica in &mut replicas {
        replica.process.stop(Duration::from_secs(15)).await;
    }
    let report = FailoverReport {
        flags: args.flags(),
        kill_bound_seconds: args.kill_bound_seconds(),
        kill: summarize(&rounds, Signal::Kill),
        term: summarize(&rounds, Signal::Term),
        rounds,
    };
    println!(
        "\n{:<8}  {:>7}  {:>10}  {:>8}  {:>8}",
        "signal", "rounds", "median (s)", "max (s)", "timeouts"
    );
    for (label, s) in [("SIGKILL", report.kill), ("SIGTERM", report.term)] {
        println!(
            "{:<8}  {:>7}  {:>10}  {:>8}  {:>8}",
            label,
            args.kills,
            super::scale::opt(s.median, 2),
            super::scale::opt(s.max, 2),
            s.timeouts
        );
    }
    Ok(report)
}

async fn launch(
    binary: &std::path::Path,
    world: &World,
    args: &FailoverArgs,
    launched: &mut usize,
) -> Result<Replica, String> {
    let name = format!("bench-replica-{launched}");
    *launched += 1;
    let process = Driver::Operator
        .launch(
            binary,
            &world.kubeconfig,
            4,
            &args.operator_flags(),
            &[("POD_NAME", name.clone())],
        )
        .await?;
    Ok(Replica { name, process })
}

/// The Lease's holder, if any.
async fn holder(leases: &Api<Lease>) -> Option<String> {
    let lease = leases.get_opt(LEASE_NAME).await.ok()??;
    lease.spec?.holder_identity.filter(|h| !h.is_empty())
}

/// Which replica holds `holder` (identities are `<pod name>_<uuid>`).
fn replica_of(replicas: &[Replica], holder: &str) -> Option<usize> {
    replicas.iter().position(|r| {
        holder
            .strip_prefix(&r.name)
            .is_some_and(|rest| rest.starts_with('_'))
    })
}

/// Waits for a live replica to hold the Lease: its index and identity.
async fn wait_for_leader(
    leases: &Api<Lease>,
    replicas: &[Replica],
    within: Duration,
) -> Result<(usize, String), String> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(h) = holder(leases).await
            && let Some(i) = replica_of(replicas, &h)
        {
            return Ok((i, h));
        }
        if Instant::now() >= deadline {
            return Err(format!("no replica held the Lease within {within:?}"));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until a live replica other than `old` holds the Lease; `false` at `deadline`.
async fn wait_for_takeover(leases: &Api<Lease>, replicas: &[Replica], old: &str, deadline: Instant) -> bool {
    while Instant::now() < deadline {
        if let Some(h) = holder(leases).await
            && h != old
            && replica_of(replicas, &h).is_some()
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_should_take_median_and_max_per_signal_and_count_timeouts() {
        let round = |signal, s| Round {
            signal,
            takeover_seconds: s,
        };
        let rounds = [
            round(Signal::Kill, Some(5.0)),
            round(Signal::Term, Some(0.5)),
            round(Signal::Kill, Some(6.0)),
            round(Signal::Kill, None),
            round(Signal::Kill, Some(4.0)),
        ];
        let kill = summarize(&rounds, Signal::Kill);
        assert_eq!((kill.median, kill.max, kill.timeouts), (Some(5.0), Some(6.0), 1));
        let term = summarize(&rounds, Signal::Term);
        assert_eq!((term.median, term.max, term.timeouts), (Some(0.5), Some(0.5), 0));
    }
}
