//! One run of `bench shards` (issue 39 point 6) in one layout, on simulators the caller
//! started with the namespaces in place: R replicas of the operator, each `--leader-elect
//! --shards S` with its own kubeconfig identity (so the audit tells them apart), are launched at
//! once, as a Deployment's pods start; once every shard is held and balanced, M FerrVaultSecrets
//! are created over the namespaces and timed from the first create until a watch here sees
//! every one Ready=True. Each replica's peak RSS is read at that moment, and the budgeted
//! FerrVault requests are counted until the replicas are quiet. With more than one replica, the
//! takeover after a SIGKILL follows ([`super::shards_takeover`]).
//!
//! One replica with `--shards 1` (the same flags otherwise) is the yardstick, timed the same way
//! once it holds its Lease.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use futures::{StreamExt, TryStreamExt, future::try_join_all, stream};
use kube::Api;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::{
    driver::{Driver, LaunchOptions},
    failover::lease::{LEASE_NS, Replica},
    lease_timings::LeaseTimings,
    scale_run::STOP_GRACE,
    shards_takeover::{self, TakeoverSample},
    shards_world::{Layout, Plan, budgeted, spread, wait_until_quiet},
    watchers::{Counter, is_ready},
};
use ferrvault_operator::api::{FerrVaultConnection, FerrVaultSecret};
use ferrvault_testkit::bench_world::{CONNECTIONS, World};

/// Namespaces filled at once.
const NAMESPACE_CONCURRENCY: usize = 8;
/// Longest wait for every connection's first probe before the objects are created anyway.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// What one layout measured in one run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShardSample {
    /// Seconds from the launch until every object was Ready; `None`: the timeout came first.
    pub ready_seconds: Option<f64>,
    /// Objects Ready when that phase ended.
    pub ready: usize,
    /// Each replica's peak RSS at all Ready, MiB, in launch order.
    pub peak_rss_mib: Vec<f64>,
    /// Budgeted FerrVault requests from the launch until the replicas were quiet.
    pub ferrvault_requests: u64,
    /// After a SIGKILL of one replica; `None` with one replica or when not all were Ready.
    pub takeover: Option<TakeoverSample>,
}

/// Creates the namespaces of `plan`, each with the bench connections.
///
/// # Errors
/// The simulator refused a create.
pub async fn populate(world: &World, plan: &Plan) -> Result<(), String> {
    stream::iter(spread(plan.objects, plan.namespaces))
        .map(|(ns, _)| async move { world.add_tenant(&ns).await })
        .buffer_unordered(NAMESPACE_CONCURRENCY)
        .try_for_each(|()| async { Ok(()) })
        .await
}

/// Creates the FerrVaultSecrets of `plan` in its namespaces.
///
/// # Errors
/// The simulator refused a create.
pub async fn create_objects(world: &World, plan: &Plan) -> Result<(), String> {
    stream::iter(spread(plan.objects, plan.namespaces))
        .map(|(ns, count)| async move { world.create_secrets(&ns, "s", 0..count).await })
        .buffer_unordered(NAMESPACE_CONCURRENCY)
        .try_for_each(|()| async { Ok(()) })
        .await
}

/// The namespaces every bench world has besides the plan's (`bench`, `bench-probe`), each with
/// its connections.
const BENCH_NAMESPACES: usize = 2;

/// Whether `connection`'s status says Ready=True (its first probe succeeded).
fn connection_ready(connection: &FerrVaultConnection) -> bool {
    connection.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True")
    })
}

/// The identity (audit) and pod name (Lease holder prefix) of replica `r`.
pub fn identity(r: usize) -> String {
    format!("bench-replica-{r}")
}

/// Kubeconfig files, one per replica, removed on drop.
struct Kubeconfigs(Vec<PathBuf>);

impl Drop for Kubeconfigs {
    fn drop(&mut self) {
        for path in &self.0 {
            // A file already gone is what dropping wants.
            let _ = std::fs::remove_file(path);
        }
    }
}

fn operator_flags(layout: Layout, lease: LeaseTimings) -> Vec<String> {
    let mut flags = vec![
        "--leader-elect".into(),
        format!("--leader-elect-namespace={LEASE_NS}"),
    ];
    flags.extend(lease.operator_flags());
    flags.push(format!("--shards={}", layout.shards));
    flags.push("--shutdown-grace-period=10s".into());
    flags
}

/// Waits up to the plan's timeout for every object Ready, checking each second that every
/// replica still runs: the objects of a replica that exited would never be Ready, and the run
/// would wait out its timeout for them.
///
/// # Errors
/// A replica exited; the message holds its last lines.
async fn wait_all_ready(ready: &mut Counter, replicas: &mut [Replica], plan: &Plan) -> Result<bool, String> {
    let deadline = Instant::now() + plan.timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if ready
            .wait_for(plan.objects, left.min(Duration::from_secs(1)))
            .await
        {
            return Ok(true);
        }
        for replica in replicas.iter_mut() {
            if let Some(status) = replica.process.process.exit_status() {
                return Err(format!(
                    "{} exited ({status}) with {} of {} objects Ready; its last lines:\n{}",
                    replica.name,
                    ready.count(),
                    plan.objects,
                    replica.process.process.tail()
                ));
            }
        }
        if left.is_zero() {
            return Ok(false);
        }
    }
}

/// Runs `layout` once against `world` (its namespaces created with [`populate`]): launches the
/// replicas, waits until every shard is held and balanced and (up to a minute) every connection
/// probed Ready (otherwise a FerrVaultSecret reconciled before its connection's first probe
/// fails and waits out a backoff, which measures the backoff), then creates the objects and times them from the
/// first create until all are Ready.
///
/// NOTE: the objects are created after the split, as in `tests/scenarios/scenario_shards.rs`:
/// with the objects already there when the replicas start together, the first replica takes
/// every shard, starts reconciling, then hands shards over, and objects of the handed-over
/// shards stayed without status (found with this benchmark; see `docs/performance.md`).
///
/// # Errors
/// A replica did not start, the shards never settled, or the simulator refused a create.
pub async fn measure(
    world: &World,
    layout: Layout,
    plan: &Plan,
    binary: &Path,
) -> Result<ShardSample, String> {
    static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir();
    let configs = Kubeconfigs(
        (0..layout.replicas)
            .map(|r| {
                dir.join(format!(
                    "ferrvault-shards-{}-{run}-{r}.kubeconfig",
                    std::process::id()
                ))
            })
            .collect(),
    );
    for (r, path) in configs.0.iter().enumerate() {
        world
            .kube
            .write_kubeconfig_as(path, &identity(r))
            .map_err(|e| format!("write kubeconfig: {e}"))?;
    }
    let mut ready = Counter::start(Api::<FerrVaultSecret>::all(world.client.clone()), is_ready);
    let mut probed = Counter::start(
        Api::<FerrVaultConnection>::all(world.client.clone()),
        connection_ready,
    );
    let before = budgeted(world);
    let launches = configs.0.iter().enumerate().map(|(r, path)| {
        let options = LaunchOptions {
            operator_flags: operator_flags(layout, plan.lease),
            env: vec![("POD_NAME".to_owned(), identity(r))],
            ..LaunchOptions::unlimited(plan.concurrency)
        };
        async move {
            let process = Driver::Operator.launch(binary, path, &options).await?;
            Ok::<_, String>(Replica {
                name: identity(r),
                process,
            })
        }
    });
    let mut replicas = try_join_all(launches).await?;
    shards_takeover::wait_for_split(world, &replicas, layout, plan.timeout).await?;
    let connections = (plan.namespaces.max(1) + BENCH_NAMESPACES) * CONNECTIONS;
    if !probed
        .wait_for(connections, PROBE_TIMEOUT.min(plan.timeout))
        .await
    {
        // Measured anyway: objects of an unprobed connection wait out a backoff, in the time.
        println!(
            "{}: {} of {connections} connections Ready after {PROBE_TIMEOUT:?}; creating the objects anyway",
            layout.label(),
            probed.count()
        );
    }
    let started = Instant::now();
    create_objects(world, plan).await?;
    let all = wait_all_ready(&mut ready, &mut replicas, plan).await?;
    let ready_seconds = all.then(|| started.elapsed().as_secs_f64());
    if !all {
        for replica in &replicas {
            eprintln!(
                "{} left objects not Ready; its last lines:\n{}",
                replica.name,
                replica.process.process.tail()
            );
        }
    }
    let peak_rss_mib = replicas
        .iter()
        .map(|r| r.process.process.stats().map_or(0.0, |s| s.peak_rss_mib()))
        .collect();
    wait_until_quiet(world).await;
    let ferrvault_requests = budgeted(world) - before;
    let takeover = if all && layout.replicas > 1 {
        Some(shards_takeover::measure(world, &mut replicas, layout, plan).await?)
    } else {
        None
    };
    for replica in &mut replicas {
        replica.process.process.stop(STOP_GRACE).await;
    }
    Ok(ShardSample {
        ready_seconds,
        ready: ready.count(),
        peak_rss_mib,
        ferrvault_requests,
        takeover,
    })
}
