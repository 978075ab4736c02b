//! The clients of a rate-limit row: this operator's FerrVault client (scaled), or one task per
//! resource retrying the Go operator's way, all against the simulator of the row.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use tokio::time::Instant;

use super::{
    policy::Policy,
    server::{CLIENT_BURST, CLIENT_RATE},
};
use ferrvault_operator::ferrvault::{
    ClientConfig, Credential, EgressPolicy, Endpoint, FerrVault, FerrVaultError, KeySelector, RevealRequest,
    RevealScope,
};

/// The organisation of the simulated vaults.
pub const ORG: &str = "bench";
/// Their project.
pub const PROJECT: &str = "p";
/// The one token every resource shares.
pub const TOKEN: &str = "fft_bench-rate-limit";

/// Shared counters of one run.
#[derive(Default)]
pub struct Tally {
    /// Resources synced.
    pub succeeded: AtomicUsize,
}

/// This client (scaled) and a plain HTTP client for the Go policies, both with a connection
/// open: client set-up (loading the system roots) is a one-off the time scale would magnify.
pub async fn warmed_up_clients(
    endpoint: &Endpoint,
    scale: f64,
) -> Result<(FerrVault, reqwest::Client), String> {
    let limiter = FerrVault::new(ClientConfig {
        rate_per_second: CLIENT_RATE * scale,
        burst: CLIENT_BURST,
        coalesce_window: ClientConfig::DEFAULT_COALESCE_WINDOW.div_f64(scale),
        allow_insecure_http: true, // the simulator speaks plain http
        // ...on loopback, which the egress policy refuses by default.
        egress: EgressPolicy::from_flags(&["127.0.0.1/32".to_owned()], &[])?,
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

pub fn vault_name(i: usize) -> String {
    format!("vault-{i:04}")
}

/// One resource synced by this client: ask, and on "rate limited" ask again (the pacer waits).
pub async fn limiter_resource(
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
pub async fn go_resource(
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
        match response.map(|r| r.status().as_u16()) {
            Ok(200) => {
                tally.succeeded.fetch_add(1, Ordering::Relaxed);
                return Some(Instant::now());
            }
            Ok(429) => {
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
