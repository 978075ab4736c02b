//! One measured row of `bench freshness` ([`super::freshness`]): the world, the operator, a quiet
//! window counting FerrVault requests, then a window of rotations timed from the rotation to
//! the target Secret's write seen on a watch of the Kubernetes simulator.
//!
//! # Layout of the world
//! One token (connection `conn-0`, vault `vault-0`) with `objects` names `KEY-<i>`; FerrVaultSecret
//! `f-<i>` selects `KEY-<i>` alone (so no two objects need the same value: the layout where
//! each object's read is its own). The simulator holds the token to 60 requests a minute
//! (1/s, burst 10) from the moment the operator starts; the operator's own limiter is set
//! just below it (0.95/s, burst 5).

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api, ResourceExt,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;
use tokio::{task::JoinHandle, time::Instant};

use super::{
    child,
    driver::{Driver, DriverProcess, LaunchOptions},
    scale_run::STOP_GRACE,
    watchers::{ReadyCounter, on_each_applied},
};
use ferrvault_operator::api::SecretSelector;
use ferrvault_sim::ferrvault::SimStats;
use ferrvault_testkit::bench_world::{NS, World, secret_name, secret_spec, vault};

/// How long the initial sync may take.
const SYNC_TIMEOUT: Duration = Duration::from_secs(900);
/// The change-hint key (a bench-only value).
const HINT_KEY: &str = "bench-freshness-hint-key-0123456789";
/// The hint key Secret's name (the operator's default).
const HINT_SECRET: &str = "ferrvault-operator-hint-key";

/// How the objects learn of a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detection {
    /// `changeDetection: {mode: Versions, interval}` on the connection; objects refresh daily.
    Versions(Duration),
    /// `Poll` (refresh hourly) and a signed hint sent right after each rotation.
    Hints,
}

/// What one measured row saw.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// The quiet window's length.
    pub quiet: Duration,
    /// `list` calls in the quiet window.
    pub quiet_lists: u64,
    /// Reveals in the quiet window.
    pub quiet_reveals: u64,
    /// Rotation → target write, seconds, of each rotation that arrived.
    pub latencies: Vec<f64>,
    /// Rotations made.
    pub rotations: usize,
    /// FerrVault requests (list + reveal) in the rotating window (stragglers' wait included).
    pub rotating_requests: u64,
    /// The rotating window's length.
    pub rotating: Duration,
    /// 429s from the limit's start to the end.
    pub rate_limited: u64,
}

/// Runs one row with `objects` objects, windows of `window` each, `rotations` rotations.
///
/// # Errors
/// A simulator or the operator failed to start, or the objects never all became Ready.
pub async fn measure(
    detection: Detection,
    (objects, window, rotations): (usize, Duration, usize),
    binary: Option<&std::path::Path>,
) -> Result<Measured, String> {
    let binary = child::operator_binary(binary)?;
    let world = World::start().await?;
    for i in 0..objects {
        world.fv.put_secret(&vault(0), &key(i), "initial");
    }
    prepare(&world, detection).await?;
    let refresh = match detection {
        Detection::Versions(_) => "24h",
        Detection::Hints => "1h",
    };
    world
        .create_secrets_with(NS, "f", 0..objects, |i| {
            let mut spec = secret_spec(0, refresh);
            spec.selector = Some(SecretSelector { names: vec![key(i)] });
            spec
        })
        .await?;
    world.limit_token(0, 1.0, 10);
    let before_all = world.fv.stats();
    let mut ready = ReadyCounter::start(&world.client, NS);
    let mut child = Driver::Operator
        .launch(&binary, &world.kubeconfig, &options(detection))
        .await?;
    if !ready.wait_for(objects, SYNC_TIMEOUT).await {
        child.process.stop(STOP_GRACE).await;
        return Err(format!("only {} of {objects} Ready", ready.ready()));
    }
    // Past the first `list` (or the key's first read): the quiet window starts settled.
    tokio::time::sleep(settle(detection)).await;
    let quiet_from = (world.fv.stats(), Instant::now());
    tokio::time::sleep(window).await;
    let quiet_to = world.fv.stats();
    let mut measured = Measured {
        quiet: quiet_from.1.elapsed(),
        quiet_lists: endpoint(&quiet_to, "list") - endpoint(&quiet_from.0, "list"),
        quiet_reveals: reveals(&quiet_to) - reveals(&quiet_from.0),
        rotations,
        ..Measured::default()
    };
    let arrivals = ValueArrivals::start(&world.client);
    // The watch's first list, so a rotation's write is never first seen in it (that would only
    // add to its time).
    tokio::time::sleep(Duration::from_secs(2)).await;
    let hints = hint_url(&child);
    let rotating_from = (world.fv.stats(), Instant::now());
    let rotated = rotate(&world, (objects, window, rotations), hints.as_deref()).await;
    let stragglers = match detection {
        Detection::Versions(interval) => interval + Duration::from_secs(30),
        Detection::Hints => Duration::from_secs(30),
    };
    let deadline = Instant::now() + stragglers;
    while Instant::now() < deadline && rotated.iter().any(|r| arrivals.seen(r).is_none()) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let after = world.fv.stats();
    measured.latencies = rotated
        .iter()
        .filter_map(|r| Some(arrivals.seen(r)?.saturating_duration_since(r.at).as_secs_f64()))
        .collect();
    measured.rotating = rotating_from.1.elapsed();
    measured.rotating_requests = endpoint(&after, "list") + reveals(&after)
        - endpoint(&rotating_from.0, "list")
        - reveals(&rotating_from.0);
    measured.rate_limited = status(&after, "429") - status(&before_all, "429");
    child.process.stop(STOP_GRACE).await;
    Ok(measured)
}

/// Name `i` of the vault.
fn key(i: usize) -> String {
    format!("KEY-{i}")
}

/// What the connection or the operator needs before the objects exist.
async fn prepare(world: &World, detection: Detection) -> Result<(), String> {
    match detection {
        Detection::Versions(interval) => {
            let patch = json!({ "spec": { "changeDetection": {
                "mode": "Versions", "interval": format!("{}s", interval.as_secs()) } } });
            Api::<ferrvault_operator::api::FerrVaultConnection>::namespaced(world.client.clone(), NS)
                .patch("conn-0", &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map(drop)
                .map_err(|e| format!("changeDetection on conn-0: {e}"))
        }
        Detection::Hints => {
            let secret: Secret = serde_json::from_value(json!({
                "metadata": { "name": HINT_SECRET },
                "stringData": { "key": HINT_KEY },
            }))
            .map_err(|e| e.to_string())?;
            Api::<Secret>::namespaced(world.client.clone(), NS)
                .create(&PostParams::default(), &secret)
                .await
                .map(drop)
                .map_err(|e| format!("hint key Secret: {e}"))
        }
    }
}

/// The operator's launch: a budget just below the simulator's, hints on for [`Detection::Hints`]
/// (its key Secret read from [`NS`]).
fn options(detection: Detection) -> LaunchOptions {
    let mut options = LaunchOptions::unlimited(16);
    options.ferrvault_rate = 0.95;
    options.ferrvault_burst = 5;
    options.env.push(("POD_NAMESPACE".into(), NS.into()));
    if detection == Detection::Hints {
        options
            .operator_flags
            .push("--hint-bind-address=127.0.0.1:0".into());
    }
    options
}

/// How long after every object is Ready the quiet window starts.
fn settle(detection: Detection) -> Duration {
    match detection {
        Detection::Versions(interval) => interval + Duration::from_secs(2),
        Detection::Hints => Duration::from_secs(5),
    }
}

/// The hint endpoint's URL, from the operator's `http servers listening` line.
fn hint_url(child: &DriverProcess) -> Option<String> {
    let line = child.process.last_line_containing("http servers listening")?;
    let json: serde_json::Value = serde_json::from_str(&line).ok()?;
    let address = json["hints"].as_str().filter(|a| *a != "disabled")?;
    Some(format!("http://{address}/hooks/ferrvault"))
}

/// A rotation: which target, what value, when.
struct Rotation {
    /// The target Secret's name.
    target: String,
    /// Its key.
    key: String,
    /// The new value.
    value: String,
    /// When FerrVault held it.
    at: Instant,
}

/// Makes `rotations` rotations of distinct objects at pseudo-random times over `window` (a fixed
/// seed: the same times every run); with `hints`, signs and sends a hint after each.
async fn rotate(
    world: &World,
    (objects, window, rotations): (usize, Duration, usize),
    hints: Option<&str>,
) -> Vec<Rotation> {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let start = Instant::now();
    let mut times: Vec<(Duration, usize)> = (0..rotations.min(objects))
        .map(|n| {
            let at = window.mul_f64((next() % 10_000) as f64 / 10_000.0);
            (
                at,
                (n * objects / rotations.max(1) + (next() as usize % objects.max(1))) % objects,
            )
        })
        .collect();
    times.sort();
    times.dedup_by_key(|(_, i)| *i);
    let client = reqwest::Client::new();
    let mut done = Vec::new();
    for (n, (offset, i)) in times.into_iter().enumerate() {
        tokio::time::sleep_until(start + offset).await;
        let value = format!("rotated-{n}");
        world.fv.put_secret(&vault(0), &key(i), &value);
        let at = Instant::now();
        if let Some(url) = hints {
            send_hint(&client, url, &key(i)).await;
        }
        done.push(Rotation {
            target: secret_name("f", i),
            key: key(i),
            value,
            at,
        });
    }
    tokio::time::sleep_until(start + window).await;
    done
}

/// Sends a hint for `name` of `vault-0` to `url`, signed with [`HINT_KEY`].
async fn send_hint(client: &reqwest::Client, url: &str, name: &str) {
    let body = serde_json::to_vec(&json!({ "vault": vault(0), "names": [name] })).unwrap_or_default();
    let timestamp = jiff::Timestamp::now().as_second().to_string();
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, HINT_KEY.as_bytes());
    let mut message = timestamp.as_bytes().to_vec();
    message.push(b'.');
    message.extend_from_slice(&body);
    let signature = format!("sha256={}", hex::encode(ring::hmac::sign(&key, &message)));
    let sent = client
        .post(url)
        .header("X-FerrVault-Timestamp", timestamp)
        .header("X-FerrVault-Signature", signature)
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await;
    if let Err(e) = sent {
        eprintln!("hint not sent: {e}");
    }
}

/// `endpoint`'s requests in `stats`.
fn endpoint(stats: &SimStats, endpoint: &str) -> u64 {
    stats.total.endpoints.get(endpoint).copied().unwrap_or(0)
}

/// Reveals in `stats` (only `vault-0` is read).
fn reveals(stats: &SimStats) -> u64 {
    endpoint(stats, "reveal")
}

/// Answers with HTTP `code` in `stats`.
fn status(stats: &SimStats, code: &str) -> u64 {
    stats.total.statuses.get(code).copied().unwrap_or(0)
}

/// A Secret's name, one of its keys, and a value that key held.
type Held = (String, String, Vec<u8>);

/// When each (Secret, key, value) of [`NS`] was first seen, from a watch.
struct ValueArrivals {
    seen: Arc<Mutex<HashMap<Held, Instant>>>,
    task: JoinHandle<()>,
}

impl ValueArrivals {
    fn start(client: &kube::Client) -> Self {
        let api = Api::<Secret>::namespaced(client.clone(), NS);
        let seen = Arc::new(Mutex::new(HashMap::new()));
        let record = seen.clone();
        let task = on_each_applied(api, move |secret: Secret| {
            let now = Instant::now();
            let name = secret.name_any();
            let mut seen = record.lock().expect("arrivals lock");
            for (key, value) in secret.data.iter().flatten() {
                seen.entry((name.clone(), key.clone(), value.0.clone()))
                    .or_insert(now);
            }
        });
        Self { seen, task }
    }

    /// When `rotation`'s value was first seen in its target.
    fn seen(&self, rotation: &Rotation) -> Option<Instant> {
        let id = (
            rotation.target.clone(),
            rotation.key.clone(),
            rotation.value.as_bytes().to_vec(),
        );
        self.seen.lock().expect("arrivals lock").get(&id).copied()
    }
}

impl Drop for ValueArrivals {
    fn drop(&mut self) {
        self.task.abort();
    }
}
