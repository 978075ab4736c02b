//! `ferrvault-dev bench rate-limit`: N resources on one FerrVault token, against the
//! simulator at 1 request/s burst 5 (debt mode on and off), synced by three policies:
//!
//! - **limiter**: this operator's client (per-credential pacing, AIMD, `Retry-After`); a caller
//!   told "rate limited" asks again at once and the pacer makes it wait.
//! - **go-fixed-20s**: the Go operator before 5.2.9, a fixed 20s requeue after each 429.
//! - **go-backoff-5s-5m**: the Go operator since 5.2.9 (reference §3.6), per-resource
//!   `min(5s << attempt, 5m)` jittered uniformly in `[d/2, d)`.
//!
//! Each row reports the time until every resource succeeded divided by the ideal
//! `(N − burst) / rate`, the 429s the server sent, and the requests it received.
//!
//! # Time scale
//! `--time-scale S` multiplies the server's rate (and the limiter's configured rate) by S and
//! divides every policy delay (and the limiter's coalescing window) by S, so a run takes 1/S
//! of the real time; durations are reported scaled back (simulated seconds). Loopback latency
//! is not scaled: at large S it adds a little to every policy's time.
//! The server's `Retry-After` is whole seconds, so at S > 1 it overstates the wait the limiter
//! is told to honour; that only matters for runs that see 429s, which the limiter avoids.
//!
//! # Caveats
//! The Go policies are modelled as one task per resource retrying on its timer. The Go
//! operator has one worker, but a reveal takes milliseconds, so the requests still go out
//! together. A run that has not finished after `--max-ratio` × ideal (and at least 30 simulated
//! minutes) is stopped and shown as unfinished, with how many resources had synced.

use std::{
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};

use serde::Serialize;
use tokio::time::Instant;

use ferrvault_operator::ferrvault::{
    ClientConfig, Credential, Endpoint, FerrVault, FerrVaultError, KeySelector, RevealRequest, RevealScope,
};
use ferrvault_sim::ferrvault::{FerrVaultSim, SimConfig};

/// Server budget modelled: FerrVault's 60/min per token.
const SERVER_RATE: f64 = 1.0;
/// Server burst modelled.
const SERVER_BURST: u32 = 5;
/// Printed under the table: how to read a limiter 429 in a scaled run.
const SCALE_NOTE: &str = "note: at --time-scale S the client's one token of headroom absorbs only 1/S of the \
send-time jitter it absorbs at real speed, and the server's whole-second Retry-After costs S simulated \
seconds; a limiter 429 in a scaled run is that artefact (the zero-429 proof runs at real speed in \
tests/ferrvault_client_rate_limit.rs).";
/// Shortest run before giving up, in simulated seconds: long enough for the 5s→5m backoff to
/// reach its cap (5s + 10s + … + 300s ≈ 10 minutes) and show whether it then converges.
const MIN_BUDGET_SECONDS: f64 = 1800.0;
const ORG: &str = "bench";
const PROJECT: &str = "p";
const TOKEN: &str = "fft_bench-rate-limit";

/// Flags of `bench rate-limit`.
#[derive(Clone, Debug, clap::Args)]
pub struct RateLimitArgs {
    /// Numbers of resources sharing the token.
    #[arg(long, value_delimiter = ',', default_value = "29,200,1000")]
    pub sizes: Vec<usize>,
    /// Speed-up factor applied to the server's rate and to every policy delay.
    #[arg(long, default_value_t = 50.0)]
    pub time_scale: f64,
    /// Stop a run after this multiple of the ideal time and report it unfinished.
    #[arg(long, default_value_t = 5.0)]
    pub max_ratio: f64,
    /// Folder the JSON table is written to.
    #[arg(long, default_value = "bench-results")]
    pub out: PathBuf,
}

impl RateLimitArgs {
    /// The command line that reproduces this run, every flag spelled out.
    pub fn command(&self) -> String {
        let sizes: Vec<String> = self.sizes.iter().map(ToString::to_string).collect();
        format!(
            "ferrvault-dev bench rate-limit --sizes {} --time-scale {} --max-ratio {} --out {}",
            sizes.join(","),
            self.time_scale,
            self.max_ratio,
            self.out.display()
        )
    }
}

/// How resources react to a 429.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// This operator's client.
    Limiter,
    /// Fixed 20s requeue.
    GoFixed20s,
    /// Per-resource 5s→5m jittered backoff.
    GoBackoff5s5m,
}

impl Policy {
    /// All policies, in table order.
    pub const ALL: [Policy; 3] = [Policy::Limiter, Policy::GoFixed20s, Policy::GoBackoff5s5m];

    /// Table label.
    pub fn label(self) -> &'static str {
        match self {
            Policy::Limiter => "limiter (this client)",
            Policy::GoFixed20s => "go: fixed 20s",
            Policy::GoBackoff5s5m => "go: 5s->5m jittered",
        }
    }

    /// Unscaled wait of a Go policy after the `attempt`-th consecutive 429 (0-based), with
    /// `unit` in `[0, 1)` choosing the point inside the jitter range. `None` for the limiter.
    pub fn go_delay(self, attempt: u32, unit: f64) -> Option<Duration> {
        match self {
            Policy::Limiter => None,
            Policy::GoFixed20s => Some(Duration::from_secs(20)),
            Policy::GoBackoff5s5m => {
                let d = (Duration::from_secs(5) * (1u32 << attempt.min(8))).min(Duration::from_secs(300));
                Some(d / 2 + (d / 2).mul_f64(unit.clamp(0.0, 1.0)))
            }
        }
    }
}

/// The ideal time for `n` resources: the burst goes at once, the rest at the refill rate.
pub fn ideal_seconds(n: usize, rate: f64, burst: u32) -> f64 {
    (n.saturating_sub(burst as usize) as f64 / rate).max(0.0)
}

/// One row of the table.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Resources.
    pub n: usize,
    /// Whether rejected requests spent server budget.
    pub debt_mode: bool,
    /// Policy.
    pub policy: Policy,
    /// Resources that synced before the run ended.
    pub succeeded: usize,
    /// Simulated seconds until all succeeded (or until the run was stopped).
    pub seconds: f64,
    /// `seconds / ideal`, `None` when unfinished.
    pub ratio: Option<f64>,
    /// 429s received.
    pub rate_limited: u64,
    /// Requests sent.
    pub requests: u64,
}

/// The whole table plus how it was produced.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The reproducing command.
    pub command: String,
    /// Time scale used.
    pub time_scale: f64,
    /// Server rate (unscaled), requests per second.
    pub server_rate: f64,
    /// Server burst.
    pub server_burst: u32,
    /// Rows.
    pub rows: Vec<Row>,
}

/// Runs the benchmark, prints the table and writes `rate-limit.json` under `--out`.
///
/// # Errors
/// A message when the simulator cannot start or the JSON cannot be written.
pub async fn run(args: &RateLimitArgs) -> Result<Report, String> {
    if !(args.time_scale.is_finite() && args.time_scale > 0.0) {
        return Err("--time-scale must be positive".into());
    }
    let mut rows = Vec::new();
    println!("{}", header());
    for &n in &args.sizes {
        for debt in [true, false] {
            for policy in Policy::ALL {
                let row = run_one(n, debt, policy, args).await?;
                println!("{}", format_row(&row));
                rows.push(row);
            }
        }
    }
    let report = Report {
        command: args.command(),
        time_scale: args.time_scale,
        server_rate: SERVER_RATE,
        server_burst: SERVER_BURST,
        rows,
    };
    std::fs::create_dir_all(&args.out).map_err(|e| format!("create {}: {e}", args.out.display()))?;
    let path = args.out.join("rate-limit.json");
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    std::fs::write(&path, json).map_err(|e| format!("write {}: {e}", path.display()))?;
    println!("\n{SCALE_NOTE}");
    println!(
        "\nwritten to {}\nreproduce with: {}",
        path.display(),
        report.command
    );
    Ok(report)
}

fn header() -> String {
    format!(
        "{:>5}  {:<5}  {:<22}  {:>10}  {:>9}  {:>6}  {:>8}  {:>9}",
        "N", "debt", "policy", "time/ideal", "time (s)", "429s", "requests", "synced"
    )
}

fn format_row(row: &Row) -> String {
    let ratio = row
        .ratio
        .map_or_else(|| "unfinished".to_owned(), |r| format!("{r:.3}"));
    format!(
        "{:>5}  {:<5}  {:<22}  {:>10}  {:>9.1}  {:>6}  {:>8}  {:>9}",
        row.n,
        if row.debt_mode { "on" } else { "off" },
        row.policy.label(),
        ratio,
        row.seconds,
        row.rate_limited,
        row.requests,
        format!("{}/{}", row.succeeded, row.n)
    )
}

/// Shared counters of one run.
#[derive(Default)]
struct Tally {
    succeeded: AtomicUsize,
    rate_limited: AtomicU64,
    requests: AtomicU64,
}

async fn run_one(n: usize, debt: bool, policy: Policy, args: &RateLimitArgs) -> Result<Row, String> {
    let scale = args.time_scale;
    let sim = start_sim(n, debt, scale).await?;
    let endpoint = Endpoint::parse(&sim.url()).map_err(|e| e.to_string())?;
    let ideal = ideal_seconds(n, SERVER_RATE, SERVER_BURST);
    let budget = Duration::from_secs_f64((ideal * args.max_ratio).max(MIN_BUDGET_SECONDS) / scale);
    let tally = Arc::new(Tally::default());
    let (limiter, http) = warmed_up_clients(&endpoint, scale).await?;
    let started = Instant::now();
    let stop_at = started + budget;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..n {
        let tally = tally.clone();
        match policy {
            Policy::Limiter => {
                tasks.spawn(limiter_resource(
                    limiter.clone(),
                    endpoint.clone(),
                    i,
                    tally,
                    stop_at,
                ));
            }
            Policy::GoFixed20s | Policy::GoBackoff5s5m => {
                let url = endpoint.base_url().to_owned();
                tasks.spawn(go_resource(http.clone(), url, i, policy, scale, tally, stop_at));
            }
        }
    }
    let mut finished_at = started;
    while let Some(done) = tasks.join_next().await {
        if let Ok(Some(at)) = done {
            finished_at = finished_at.max(at);
        }
    }
    let succeeded = tally.succeeded.load(Ordering::Relaxed);
    let all = succeeded == n;
    let end = if all {
        finished_at
    } else {
        Instant::now().min(stop_at)
    };
    let seconds = (end - started).as_secs_f64() * scale;
    let (rate_limited, requests) = match policy {
        // The pacer counts every HTTP attempt, retries included.
        Policy::Limiter => limiter.limiter_snapshots().pop().map_or((0, 0), |snapshot| {
            (snapshot.rate_limited_total, snapshot.requests.total())
        }),
        Policy::GoFixed20s | Policy::GoBackoff5s5m => (
            tally.rate_limited.load(Ordering::Relaxed),
            tally.requests.load(Ordering::Relaxed),
        ),
    };
    drop(sim);
    Ok(Row {
        n,
        debt_mode: debt,
        policy,
        succeeded,
        seconds,
        ratio: all.then(|| if ideal > 0.0 { seconds / ideal } else { 0.0 }),
        rate_limited,
        requests,
    })
}

/// This client (scaled) and a plain HTTP client for the Go policies, both with a connection
/// open: client set-up (loading the system roots) is a one-off the time scale would magnify.
async fn warmed_up_clients(endpoint: &Endpoint, scale: f64) -> Result<(FerrVault, reqwest::Client), String> {
    let limiter = FerrVault::new(ClientConfig {
        rate_per_second: SERVER_RATE * scale,
        burst: SERVER_BURST,
        coalesce_window: ClientConfig::DEFAULT_COALESCE_WINDOW.div_f64(scale),
        allow_insecure_http: true, // the simulator speaks plain http
        ..ClientConfig::default()
    });
    let warm_up = Instant::now() + Duration::from_secs(10);
    limiter
        .probe(endpoint, warm_up)
        .await
        .map_err(|e| format!("probe the simulator: {e}"))?;
    // reqwest is built without a default crypto provider; an error means one is already
    // installed (the probe above did it), which is all that is needed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder().build().map_err(|e| e.to_string())?;
    http.get(format!("{}/healthz", endpoint.base_url()))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    Ok((limiter, http))
}

fn vault_name(i: usize) -> String {
    format!("vault-{i:04}")
}

async fn start_sim(n: usize, debt: bool, scale: f64) -> Result<FerrVaultSim, String> {
    let mut config = SimConfig::default();
    for i in 0..n {
        config = config.cloud_vault(ORG, PROJECT, &vault_name(i), [("KEY", "value")]);
    }
    let config = config
        .org_token(TOKEN, ORG)
        .rate_limit(SERVER_RATE * scale, SERVER_BURST)
        .debt_mode(debt);
    FerrVaultSim::start(config)
        .await
        .map_err(|e| format!("start the FerrVault simulator: {e}"))
}

/// One resource synced by this client: ask, and on "rate limited" ask again (the pacer waits).
async fn limiter_resource(
    client: FerrVault,
    endpoint: Endpoint,
    i: usize,
    tally: Arc<Tally>,
    stop_at: Instant,
) -> Option<Instant> {
    let credential = Credential::new(TOKEN).expect("invariant violated: the bench token is valid");
    let request = RevealRequest {
        scope: RevealScope::Cloud {
            organization: ORG.into(),
            project: PROJECT.into(),
            namespace: String::new(),
        },
        vault: vault_name(i),
        keys: KeySelector::All,
    };
    while Instant::now() < stop_at {
        match client
            .reveal(&endpoint, &credential, request.clone(), stop_at)
            .await
        {
            Ok(_) => {
                tally.succeeded.fetch_add(1, Ordering::Relaxed);
                return Some(Instant::now());
            }
            // A 429 got through: ask again, the pacer now holds this caller back.
            Err(FerrVaultError::RateLimited { .. }) => {}
            // The run's time budget ran out while waiting for a token.
            Err(error) if error.is_rate_limited() => return None,
            Err(error) => {
                tracing::warn!(reason = error.reason(), "bench reveal failed");
                return None;
            }
        }
    }
    None
}

/// One resource synced the Go operator's way: send, and after a 429 wait the policy's delay.
async fn go_resource(
    http: reqwest::Client,
    base_url: String,
    i: usize,
    policy: Policy,
    scale: f64,
    tally: Arc<Tally>,
    stop_at: Instant,
) -> Option<Instant> {
    let url = format!(
        "{base_url}/api/v1/orgs/{ORG}/projects/{PROJECT}/vaults/by-name/{}/secrets/reveal",
        vault_name(i)
    );
    let mut attempt = 0;
    while Instant::now() < stop_at {
        let sent = tokio::time::timeout_at(stop_at, http.get(&url).bearer_auth(TOKEN).send()).await;
        let Ok(response) = sent else { return None };
        tally.requests.fetch_add(1, Ordering::Relaxed);
        match response.map(|r| r.status().as_u16()) {
            Ok(200) => {
                tally.succeeded.fetch_add(1, Ordering::Relaxed);
                return Some(Instant::now());
            }
            Ok(429) => {
                tally.rate_limited.fetch_add(1, Ordering::Relaxed);
                let delay = policy.go_delay(attempt, rand::random_range(0.0..1.0))?;
                attempt += 1;
                tokio::time::sleep_until((Instant::now() + delay.div_f64(scale)).min(stop_at)).await;
            }
            Ok(status) => {
                tracing::warn!(status, "bench request failed");
                return None;
            }
            Err(error) => {
                tracing::warn!(%error, "bench request failed");
                return None;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_backoff_should_double_from_5s_to_a_5m_cap_with_half_range_jitter() {
        let p = Policy::GoBackoff5s5m;
        let lows: Vec<u64> = [0, 1, 2, 5, 6, 99]
            .iter()
            .map(|&a| p.go_delay(a, 0.0).unwrap().as_secs())
            .collect();
        assert_eq!(lows, [2, 5, 10, 80, 150, 150]);
        assert!(p.go_delay(0, 0.999).unwrap() < Duration::from_secs(5));
        assert_eq!(Policy::GoFixed20s.go_delay(7, 0.5), Some(Duration::from_secs(20)));
        assert_eq!(Policy::Limiter.go_delay(0, 0.5), None);
    }

    #[test]
    fn ideal_time_should_subtract_the_burst() {
        assert_eq!(ideal_seconds(29, 1.0, 5), 24.0);
        assert_eq!(ideal_seconds(200, 20.0, 5), 9.75);
        assert_eq!(ideal_seconds(3, 1.0, 5), 0.0);
    }

    #[test]
    fn command_should_spell_out_every_flag() {
        let args = RateLimitArgs {
            sizes: vec![29, 200],
            time_scale: 50.0,
            max_ratio: 5.0,
            out: "bench-results".into(),
        };
        assert_eq!(
            args.command(),
            "ferrvault-dev bench rate-limit --sizes 29,200 --time-scale 50 --max-ratio 5 --out bench-results"
        );
    }
}
