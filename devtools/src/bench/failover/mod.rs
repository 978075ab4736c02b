//! `ferrvault-dev bench failover`: `--replicas` operator processes with leader election against
//! the Kubernetes simulator, `OBJECTS` FerrVaultSecrets synced. Each round finds the leader from
//! the Lease, waits for its next renewal, then a uniformly random part of the retry period (the
//! kill's phase against the renew cycle), and signals it. Right after the signal it changes one
//! FerrVaultSecret (a new key prefix), and measures
//! - **takeover**: from the signal until the Lease names another live replica;
//! - **changed object synced**: from the change until its target Secret holds the new keys,
//!   written by the new leader.
//!
//! The signalled process is replaced before the next round, so every round starts with the same
//! number of candidates. SIGKILL and SIGTERM rounds are interleaved. Expected: SIGTERM releases
//! the Lease, so a standby takes over within about one retry period; SIGKILL leaves it held
//! until it expires: the target is lease duration + retry period + 0.5 s, at every phase.

use std::{path::PathBuf, time::Duration};

use k8s_openapi::api::coordination::v1::Lease;
use kube::{
    Api,
    api::{Patch, PatchParams},
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::time::Instant;

pub mod lease;

use self::lease::{LEASE_NS, Replica, wait_for_leader, wait_for_renewal, wait_for_takeover};
use super::{
    child,
    driver::{Driver, LaunchOptions},
    lease_timings::LeaseTimings,
    stats::percentile,
    watchers::{ReadyCounter, SecretArrivals},
};
use ferrvault_operator::api::FerrVaultSecret;
use ferrvault_testkit::bench_world::{NS, VAULT_KEYS, World, secret_name};

/// FerrVaultSecrets synced before the rounds.
const OBJECTS: usize = 20;
/// Name prefix of those objects; the first one is changed every round.
const PREFIX: &str = "failover";

/// Flags of `bench failover`.
#[derive(Clone, Debug, clap::Args)]
pub struct FailoverArgs {
    /// Operator processes competing for the Lease.
    #[arg(long, default_value_t = 3)]
    pub replicas: usize,
    /// SIGKILL rounds.
    #[arg(long, default_value_t = 20)]
    pub kills: usize,
    /// SIGTERM rounds.
    #[arg(long, default_value_t = 10)]
    pub terms: usize,
    /// The replicas' leader-election timings.
    #[command(flatten)]
    pub lease: LeaseTimings,
    /// Give up on one takeover (or sync) after this many seconds.
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
            "--replicas {} --kills {} --terms {} {}",
            self.replicas,
            self.kills,
            self.terms,
            self.lease.flags()
        )
    }

    fn operator_flags(&self) -> Vec<String> {
        let mut flags = vec![
            "--leader-elect".into(),
            format!("--leader-elect-namespace={LEASE_NS}"),
        ];
        flags.extend(self.lease.operator_flags());
        flags.push("--shutdown-grace-period=10s".into());
        flags
    }
}

/// How the leader is stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Signal {
    /// SIGKILL: no chance to release the Lease.
    Kill,
    /// SIGTERM: graceful stop.
    Term,
}

/// `kills` SIGKILLs and `terms` SIGTERMs, interleaved while both last.
pub fn schedule(kills: usize, terms: usize) -> Vec<Signal> {
    let mut order = Vec::with_capacity(kills + terms);
    let (mut k, mut t) = (kills, terms);
    while k + t > 0 {
        if k > 0 && (t == 0 || order.last() != Some(&Signal::Kill)) {
            order.push(Signal::Kill);
            k -= 1;
        } else {
            order.push(Signal::Term);
            t -= 1;
        }
    }
    order
}

/// One round.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Round {
    /// The signal sent.
    pub signal: Signal,
    /// Seconds after the leader's renewal at which it was signalled.
    pub phase_seconds: f64,
    /// Seconds from the signal until another replica held the Lease; `None` on timeout.
    pub takeover_seconds: Option<f64>,
    /// Seconds from the change until the new leader wrote it; `None` on timeout.
    pub changed_synced_seconds: Option<f64>,
}

/// One signal's rounds.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Summary {
    /// Rounds.
    pub rounds: usize,
    /// Median takeover, seconds.
    pub median: Option<f64>,
    /// Worst takeover, seconds.
    pub max: Option<f64>,
    /// Takeovers that timed out.
    pub timeouts: usize,
    /// Median time until the changed object was synced, seconds.
    pub synced_median: Option<f64>,
    /// Worst time until the changed object was synced, seconds.
    pub synced_max: Option<f64>,
    /// Changed objects not synced before the timeout.
    pub synced_timeouts: usize,
}

/// The whole benchmark.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FailoverReport {
    /// Flags that reproduce it.
    pub flags: String,
    /// The SIGKILL target, seconds.
    pub kill_bound_seconds: f64,
    /// Where a round that timed out stopped, seconds.
    pub timeout_seconds: u64,
    /// Every round in order.
    pub rounds: Vec<Round>,
    /// SIGKILL rounds.
    pub kill: Summary,
    /// SIGTERM rounds.
    pub term: Summary,
}

/// Median, worst and timeouts of the rounds that used `signal`.
pub fn summarize(rounds: &[Round], signal: Signal) -> Summary {
    let of_kind: Vec<&Round> = rounds.iter().filter(|r| r.signal == signal).collect();
    let times: Vec<f64> = of_kind.iter().filter_map(|r| r.takeover_seconds).collect();
    let synced: Vec<f64> = of_kind.iter().filter_map(|r| r.changed_synced_seconds).collect();
    Summary {
        rounds: of_kind.len(),
        median: percentile(&times, 50.0),
        max: times.iter().copied().reduce(f64::max),
        timeouts: of_kind.len() - times.len(),
        synced_median: percentile(&synced, 50.0),
        synced_max: synced.iter().copied().reduce(f64::max),
        synced_timeouts: of_kind.len() - synced.len(),
    }
}

/// Runs the rounds and prints the table.
///
/// # Errors
/// A simulator or replica failed to start, no leader was ever elected, or the objects never
/// became Ready.
pub async fn run(args: &FailoverArgs) -> Result<FailoverReport, String> {
    let binary = child::operator_binary(args.binary.as_deref())?;
    let world = World::start().await?;
    world.create_secrets(NS, PREFIX, 0..OBJECTS).await?;
    let mut ready = ReadyCounter::start(&world.client, NS);
    let arrivals = SecretArrivals::start(&world.client, NS);
    let leases = Api::<Lease>::namespaced(world.client.clone(), LEASE_NS);
    let crs = Api::<FerrVaultSecret>::namespaced(world.client.clone(), NS);
    let timeout = Duration::from_secs(args.timeout_seconds);
    let mut launched = 0;
    let mut replicas = Vec::new();
    for _ in 0..args.replicas.max(2) {
        replicas.push(launch(&binary, &world, args, &mut launched).await?);
    }
    if !ready.wait_for(OBJECTS, timeout).await {
        return Err(format!("only {} of {OBJECTS} objects Ready", ready.ready()));
    }
    let changed = secret_name(PREFIX, 0);
    let retry = Duration::from_secs(args.lease.retry_period);
    let mut rounds = Vec::new();
    for (i, signal) in schedule(args.kills, args.terms).into_iter().enumerate() {
        let (leader, holder) = wait_for_leader(&leases, &replicas, timeout).await?;
        wait_for_renewal(&leases, retry * 3).await;
        let phase = retry.mul_f64(rand::random_range(0.0..1.0));
        tokio::time::sleep(phase).await;
        let started = Instant::now();
        let mut stopped = replicas.remove(leader);
        match signal {
            Signal::Kill => stopped.process.process.sigkill(),
            Signal::Term => stopped.process.process.sigterm()?,
        }
        let prefix = format!("R{i}_");
        let patch = json!({ "spec": { "transforms": [{ "type": "prefix", "value": prefix }] } });
        crs.patch(&changed, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|e| format!("change {changed}: {e}"))?;
        let changed_at = Instant::now();
        let takeover = wait_for_takeover(&leases, &replicas, &holder, started + timeout).await;
        let synced = arrivals
            .wait_for_key(&changed, &format!("{prefix}{}", VAULT_KEYS[0]), timeout)
            .await;
        let round = Round {
            signal,
            phase_seconds: phase.as_secs_f64(),
            takeover_seconds: takeover.then(|| started.elapsed().as_secs_f64()),
            changed_synced_seconds: synced.map(|at| at.saturating_duration_since(changed_at).as_secs_f64()),
        };
        println!(
            "round {:>2}  {:<4}  phase {:.2}s  takeover {}  changed object synced {}",
            i + 1,
            format!("{signal:?}").to_uppercase(),
            round.phase_seconds,
            seconds(round.takeover_seconds),
            seconds(round.changed_synced_seconds)
        );
        rounds.push(round);
        stopped.process.process.stop(Duration::from_secs(15)).await;
        replicas.push(launch(&binary, &world, args, &mut launched).await?);
    }
    for replica in &mut replicas {
        replica.process.process.stop(Duration::from_secs(15)).await;
    }
    let report = FailoverReport {
        flags: args.flags(),
        kill_bound_seconds: args.lease.takeover_bound_seconds(),
        timeout_seconds: args.timeout_seconds,
        kill: summarize(&rounds, Signal::Kill),
        term: summarize(&rounds, Signal::Term),
        rounds,
    };
    print(&report);
    Ok(report)
}

fn seconds(value: Option<f64>) -> String {
    value.map_or_else(|| "timed out".to_owned(), |s| format!("{s:.2}s"))
}

fn print(report: &FailoverReport) {
    println!(
        "\n{:<8}  {:>6}  {:>17}  {:>17}  {:>8}  {:>22}  {:>20}",
        "signal",
        "rounds",
        "takeover median",
        "takeover worst",
        "timeouts",
        "changed synced median",
        "changed synced worst"
    );
    for (label, s) in [("SIGKILL", report.kill), ("SIGTERM", report.term)] {
        println!(
            "{:<8}  {:>6}  {:>17}  {:>17}  {:>8}  {:>22}  {:>20}",
            label,
            s.rounds,
            super::scale::opt(s.median, 2),
            super::scale::opt(s.max, 2),
            s.timeouts,
            super::scale::opt(s.synced_median, 2),
            super::scale::opt(s.synced_max, 2)
        );
    }
}

async fn launch(
    binary: &std::path::Path,
    world: &World,
    args: &FailoverArgs,
    launched: &mut usize,
) -> Result<Replica, String> {
    let name = format!("bench-replica-{launched}");
    *launched += 1;
    let options = LaunchOptions {
        operator_flags: args.operator_flags(),
        env: vec![("POD_NAME".to_owned(), name.clone())],
        ..LaunchOptions::unlimited(4)
    };
    let process = Driver::Operator
        .launch(binary, &world.kubeconfig, &options)
        .await?;
    Ok(Replica { name, process })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_should_take_median_and_worst_per_signal_and_count_timeouts() {
        let round = |signal, s, synced| Round {
            signal,
            phase_seconds: 0.5,
            takeover_seconds: s,
            changed_synced_seconds: synced,
        };
        let rounds = [
            round(Signal::Kill, Some(5.0), Some(5.5)),
            round(Signal::Term, Some(0.5), Some(1.0)),
            round(Signal::Kill, Some(6.0), None),
            round(Signal::Kill, None, None),
            round(Signal::Kill, Some(4.0), Some(4.2)),
        ];
        let kill = summarize(&rounds, Signal::Kill);
        assert_eq!(
            (kill.rounds, kill.median, kill.max, kill.timeouts),
            (4, Some(5.0), Some(6.0), 1)
        );
        assert_eq!((kill.synced_max, kill.synced_timeouts), (Some(5.5), 2));
        let term = summarize(&rounds, Signal::Term);
        assert_eq!((term.median, term.max, term.timeouts), (Some(0.5), Some(0.5), 0));
    }

    #[test]
    fn the_schedule_should_interleave_then_finish_with_the_larger_kind() {
        use Signal::{Kill as K, Term as T};
        assert_eq!(schedule(2, 2), [K, T, K, T]);
        assert_eq!(schedule(4, 2), [K, T, K, T, K, K]);
        assert_eq!(schedule(0, 2), [T, T]);
        let twenty = schedule(20, 10);
        assert_eq!(twenty.iter().filter(|s| **s == K).count(), 20);
        assert_eq!(twenty.len(), 30);
    }

    #[test]
    fn the_kill_target_should_add_half_a_second_to_lease_and_retry() {
        let args = FailoverArgs {
            replicas: 3,
            kills: 20,
            terms: 10,
            lease: LeaseTimings::DEFAULT,
            timeout_seconds: 60,
            binary: None,
        };
        assert_eq!(args.lease.takeover_bound_seconds(), 6.5);
        assert!(args.flags().contains("--kills 20 --terms 10"));
    }
}
