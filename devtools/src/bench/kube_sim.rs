//! `ferrvault-dev bench kube-sim`: throughput of the Kubernetes API simulator with
//! many objects of one kind: creates, paged and unpaged lists, a streaming-list initial
//! sync, watch fan-out (every change delivered to every watcher), and write throughput at
//! 1, 4, 16 and 64 concurrent clients (issue 39: what the server takes, against which the
//! drivers' write rates of `bench scale` are read).

use ferrvault_sim::kube::{KubeSim, SimError};
use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api,
    api::{ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams},
};
use serde_json::json;
use std::time::Duration;
use tokio::time::Instant;

/// Arguments of `bench kube-sim`.
#[derive(Debug, Clone, clap::Args)]
pub struct KubeSimBenchArgs {
    /// Number of Secrets in the namespace.
    #[arg(long, default_value_t = 10_000)]
    pub objects: usize,
    /// Concurrent watchers for the fan-out measurement.
    #[arg(long, default_value_t = 10)]
    pub watchers: usize,
    /// Page size for paged lists.
    #[arg(long, default_value_t = 500)]
    pub page_size: u32,
    /// Requests in flight while creating and patching.
    #[arg(long, default_value_t = 32)]
    pub concurrency: usize,
    /// Concurrent clients of the write-throughput rows: each its own client (connection),
    /// one request in flight at a time.
    #[arg(long, value_delimiter = ',', default_value = "1,4,16,64")]
    pub write_clients: Vec<usize>,
    /// Objects each write-throughput row creates (then merge-patches once each).
    #[arg(long, default_value_t = 4_000)]
    pub write_objects: usize,
}

/// Failures while benchmarking.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The simulator did not start.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// A request to the simulator failed.
    #[error("simulator request failed: {0}")]
    Kube(#[from] kube::Error),
    /// A watcher did not see every event in time.
    #[error("watch fan-out incomplete: {0}")]
    Incomplete(String),
}

/// One row of the result table.
struct Row {
    what: String,
    items: usize,
    elapsed: Duration,
}

impl Row {
    fn per_second(&self) -> f64 {
        self.items as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Runs the benchmark and prints the table.
///
/// # Errors
/// Any simulator failure (none is expected).
pub async fn run(args: KubeSimBenchArgs) -> Result<(), BenchError> {
    let sim = KubeSim::start().await?;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let n = args.objects;
    let mut rows = Vec::new();

    let start = Instant::now();
    stream::iter(0..n)
        .map(|i| {
            let api = secrets.clone();
            async move {
                let s: Secret = serde_json::from_value(json!({"metadata": {"name": format!("s-{i:06}"), "labels": {"bench": "yes"}}, "stringData": {"k": "v"}}))
                    .expect("valid secret");
                api.create(&PostParams::default(), &s).await
            }
        })
        .buffer_unordered(args.concurrency)
        .try_for_each(|_| async { Ok(()) })
        .await?;
    rows.push(Row {
        what: format!("create ({} in flight)", args.concurrency),
        items: n,
        elapsed: start.elapsed(),
    });

    let start = Instant::now();
    let mut lp = ListParams::default().limit(args.page_size);
    let (mut listed, mut pages) = (0, 0);
    loop {
        let page = secrets.list(&lp).await?;
        listed += page.items.len();
        pages += 1;
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(c) => lp = lp.continue_token(&c),
            None => break,
        }
    }
    rows.push(Row {
        what: format!("paged list ({pages} pages of {})", args.page_size),
        items: listed,
        elapsed: start.elapsed(),
    });

    let start = Instant::now();
    let all = secrets.list(&ListParams::default()).await?;
    rows.push(Row {
        what: "unpaged list".into(),
        items: all.items.len(),
        elapsed: start.elapsed(),
    });

    let start = Instant::now();
    let wp = WatchParams::default().timeout(60);
    let initial = secrets
        .watch(&wp, "0")
        .await?
        .take(n)
        .try_fold(0usize, |c, _| async move { Ok(c + 1) })
        .await?;
    rows.push(Row {
        what: "watch from rv 0 (initial ADDED events)".into(),
        items: initial,
        elapsed: start.elapsed(),
    });

    rows.push(
        fan_out(
            &secrets,
            &args,
            &all.metadata.resource_version.unwrap_or_default(),
        )
        .await?,
    );
    for &clients in &args.write_clients {
        rows.extend(write_throughput(&sim, clients, args.write_objects).await?);
    }
    print_table(&rows, &args);
    sim.shutdown().await;
    Ok(())
}

/// Starts the watchers, patches every object once and times until every watcher has
/// seen every change.
async fn fan_out(secrets: &Api<Secret>, args: &KubeSimBenchArgs, rv: &str) -> Result<Row, BenchError> {
    let n = args.objects;
    let mut watchers = Vec::new();
    for _ in 0..args.watchers {
        let events = secrets.watch(&WatchParams::default().timeout(290), rv).await?;
        watchers.push(tokio::spawn(async move {
            let modified = events.try_filter(|e| std::future::ready(matches!(e, WatchEvent::Modified(_))));
            modified
                .take(n)
                .try_fold(0usize, |c, _| async move { Ok(c + 1) })
                .await
        }));
    }
    let start = Instant::now();
    stream::iter(0..n)
        .map(|i| {
            let api = secrets.clone();
            async move {
                let p = Patch::Merge(json!({"metadata": {"labels": {"round": "1"}}}));
                api.patch(&format!("s-{i:06}"), &PatchParams::default(), &p).await
            }
        })
        .buffer_unordered(args.concurrency)
        .try_for_each(|_| async { Ok(()) })
        .await?;
    let mut delivered = 0;
    for w in watchers {
        let seen = tokio::time::timeout(Duration::from_secs(300), w)
            .await
            .map_err(|_| BenchError::Incomplete("a watcher timed out".into()))?
            .map_err(|e| BenchError::Incomplete(e.to_string()))??;
        if seen != n {
            return Err(BenchError::Incomplete(format!(
                "a watcher saw {seen} of {n} changes"
            )));
        }
        delivered += seen;
    }
    Ok(Row {
        what: format!("watch fan-out: {n} patches x {} watchers", args.watchers),
        items: delivered,
        elapsed: start.elapsed(),
    })
}

/// `objects` Secret creates, then a merge patch of each, by `clients` clients at once (each
/// its own `kube::Client`, one request in flight, objects dealt round-robin): two rows.
async fn write_throughput(sim: &KubeSim, clients: usize, objects: usize) -> Result<Vec<Row>, BenchError> {
    let clients = clients.max(1);
    let apis: Vec<Api<Secret>> = (0..clients)
        .map(|_| Api::namespaced(sim.client(), "default"))
        .collect();
    let name = |i: usize| format!("w{clients}-{i:06}");
    let mut rows = Vec::new();
    for patch in [false, true] {
        let start = Instant::now();
        let each = apis.iter().enumerate().map(|(c, api)| {
            let names: Vec<String> = (c..objects).step_by(clients).map(name).collect();
            async move {
                for name in names {
                    if patch {
                        let p = Patch::Merge(json!({"metadata": {"labels": {"round": "1"}}}));
                        api.patch(&name, &PatchParams::default(), &p).await?;
                    } else {
                        let s: Secret = serde_json::from_value(
                            json!({"metadata": {"name": name}, "stringData": {"k": "v"}}),
                        )
                        .expect("valid secret");
                        api.create(&PostParams::default(), &s).await?;
                    }
                }
                Ok::<(), kube::Error>(())
            }
        });
        futures::future::try_join_all(each).await?;
        rows.push(Row {
            what: format!(
                "write: {} ({clients} clients)",
                if patch { "merge patch" } else { "create" }
            ),
            items: objects,
            elapsed: start.elapsed(),
        });
    }
    Ok(rows)
}

fn print_table(rows: &[Row], args: &KubeSimBenchArgs) {
    println!(
        "{:<48} {:>8} {:>10} {:>12}",
        "operation", "items", "seconds", "items/s"
    );
    for r in rows {
        println!(
            "{:<48} {:>8} {:>10.3} {:>12.0}",
            r.what,
            r.items,
            r.elapsed.as_secs_f64(),
            r.per_second()
        );
    }
    println!();
    println!(
        "reproduce: ferrvault-dev bench kube-sim --objects {} --watchers {} --page-size {} --concurrency {} \
         --write-clients {} --write-objects {}",
        args.objects,
        args.watchers,
        args.page_size,
        args.concurrency,
        args.write_clients
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(","),
        args.write_objects
    );
}
