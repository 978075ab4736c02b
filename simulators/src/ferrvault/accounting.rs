//! Request accounting per token: what the tests and benchmarks read to prove a client's behaviour.
//!
//! Tokens are keyed by their configured label or their fingerprint ([`super::token_fingerprint`]),
//! never by the raw token, so stats can be printed and served over the admin path.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use super::{Endpoint, SimError};

/// The accounting key of requests that carry no bearer token.
pub const ANONYMOUS: &str = "anonymous";

/// Counters for one token, or for all requests together.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Requests received (every endpoint, every outcome).
    pub requests: u64,
    /// Requests that passed authentication and the rate limiter. Requests to the unlimited endpoints
    /// (`/healthz`, the OIDC exchange) count as accepted unless a latency/hang fault cut them short.
    pub accepted: u64,
    /// Requests answered 429.
    pub rate_limited: u64,
    /// Requests being handled right now.
    pub in_flight: u64,
    /// The highest `in_flight` seen.
    pub peak_in_flight: u64,
    /// Requests per vault name (both reveal modes, every outcome).
    pub vaults: BTreeMap<String, u64>,
    /// Requests per endpoint ([`Endpoint::as_str`]).
    pub endpoints: BTreeMap<String, u64>,
    /// Answers per HTTP status; `"reset"` for connections reset by a fault, `"abandoned"` for
    /// requests whose client hung up (or whose server shut down) before the answer.
    pub statuses: BTreeMap<String, u64>,
}

/// A snapshot of the simulator's accounting.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimStats {
    /// TLS handshakes that failed (HTTPS only): a client without the certificate the server
    /// requires, or one that distrusts the server. No request of theirs was read.
    #[serde(default)]
    pub tls_handshake_failures: u64,
    /// All requests together.
    pub total: Counters,
    /// Per token label or fingerprint; `oidc:<cluster_id>` for OIDC exchanges; [`ANONYMOUS`] for
    /// other requests without a token.
    pub tokens: BTreeMap<String, Counters>,
}

impl SimStats {
    /// The counters of one token label or fingerprint (zero when it never called).
    pub fn token(&self, key: &str) -> Counters {
        self.tokens.get(key).cloned().unwrap_or_default()
    }
}

/// How a request ended, for the counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// An HTTP answer with this status.
    Status(u16),
    /// The connection was reset without an answer.
    Reset,
}

impl Outcome {
    fn label(self) -> String {
        match self {
            Self::Status(code) => code.to_string(),
            Self::Reset => "reset".to_owned(),
        }
    }
}

/// The live counters, shared by every request.
#[derive(Debug)]
pub struct Accounting {
    stats: Mutex<SimStats>,
    /// Bumped after every change, so waiters re-check their condition.
    changes: watch::Sender<u64>,
}

impl Default for Accounting {
    fn default() -> Self {
        Self {
            stats: Mutex::new(SimStats::default()),
            changes: watch::Sender::new(0),
        }
    }
}

impl Accounting {
    /// Counts an arriving request and marks it in flight until the returned guard drops.
    pub fn begin(self: &Arc<Self>, key: &str, endpoint: Endpoint, vault: Option<&str>) -> InFlight {
        {
            let mut stats = self.lock();
            let SimStats { total, tokens, .. } = &mut *stats;
            for counters in [total, tokens.entry(key.to_owned()).or_default()] {
                counters.requests += 1;
                counters.in_flight += 1;
                counters.peak_in_flight = counters.peak_in_flight.max(counters.in_flight);
                *counters
                    .endpoints
                    .entry(endpoint.as_str().to_owned())
                    .or_default() += 1;
                if let Some(vault) = vault {
                    *counters.vaults.entry(vault.to_owned()).or_default() += 1;
                }
            }
        }
        self.changed();
        InFlight {
            accounting: Arc::clone(self),
            key: key.to_owned(),
            is_finished: false,
        }
    }

    /// Counts a failed TLS handshake.
    pub fn handshake_failed(&self) {
        self.lock().tls_handshake_failures += 1;
        self.changed();
    }

    /// A copy of the counters.
    pub fn snapshot(&self) -> SimStats {
        self.lock().clone()
    }

    /// Zeroes every counter except `in_flight` (requests still running keep being tracked).
    pub fn reset(&self) {
        let mut stats = self.lock();
        stats.tls_handshake_failures = 0;
        let fresh = |c: &Counters| Counters {
            in_flight: c.in_flight,
            peak_in_flight: c.in_flight,
            ..Counters::default()
        };
        stats.total = fresh(&stats.total);
        for counters in stats.tokens.values_mut() {
            *counters = fresh(counters);
        }
        drop(stats);
        self.changed();
    }

    /// Waits until at least `at_least` requests arrived in total, or `within` passes.
    ///
    /// # Errors
    /// [`SimError::WaitTimedOut`] when the count stays below `at_least`.
    pub async fn wait_for_requests(&self, at_least: u64, within: Duration) -> Result<SimStats, SimError> {
        let what = format!("{at_least} requests in total");
        self.wait_until(|stats| stats.total.requests >= at_least, within, &what)
            .await
    }

    /// Waits until `condition` holds for the counters, or `within` passes.
    ///
    /// # Errors
    /// [`SimError::WaitTimedOut`] naming `what` and the last total seen.
    pub async fn wait_until(
        &self,
        mut condition: impl FnMut(&SimStats) -> bool,
        within: Duration,
        what: &str,
    ) -> Result<SimStats, SimError> {
        let mut changes = self.changes.subscribe();
        let waiting = async {
            loop {
                // Subscribed before the check: a change in between wakes the next `changed()`.
                let stats = self.snapshot();
                if condition(&stats) {
                    return stats;
                }
                if changes.changed().await.is_err() {
                    // The sender lives in `self`, which outlives this future.
                    std::future::pending::<()>().await;
                }
            }
        };
        tokio::time::timeout(within, waiting)
            .await
            .map_err(|_| SimError::WaitTimedOut {
                what: format!("{what} (last seen: {} requests)", self.snapshot().total.requests),
                waited_ms: within.as_millis(),
            })
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SimStats> {
        // Counters stay meaningful across a panic elsewhere; keep counting.
        self.stats
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// One request in flight. Record its admission and outcome; dropping it (even when the client hung up
/// and the handler was cancelled) ends the in-flight period.
#[derive(Debug)]
pub struct InFlight {
    accounting: Arc<Accounting>,
    key: String,
    /// Whether an outcome was recorded; a request dropped without one counts as abandoned.
    is_finished: bool,
}

impl InFlight {
    /// The request passed authentication and the rate limiter.
    pub fn accepted(&self) {
        self.update(|c| c.accepted += 1);
    }

    /// The request ended with `outcome`.
    pub fn finished(&mut self, outcome: Outcome) {
        self.is_finished = true;
        let label = outcome.label();
        self.update(|c| {
            *c.statuses.entry(label.clone()).or_default() += 1;
            if outcome == Outcome::Status(429) {
                c.rate_limited += 1;
            }
        });
    }

    fn update(&self, mut f: impl FnMut(&mut Counters)) {
        {
            let mut stats = self.accounting.lock();
            f(&mut stats.total);
            f(stats.tokens.entry(self.key.clone()).or_default());
        }
        self.accounting.changed();
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let is_abandoned = !self.is_finished;
        self.update(|c| {
            c.in_flight = c.in_flight.saturating_sub(1);
            if is_abandoned {
                *c.statuses.entry("abandoned".to_owned()).or_default() += 1;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounting_should_count_per_token_and_in_total_and_track_peak_concurrency() {
        let accounting = Arc::new(Accounting::default());
        let mut first = accounting.begin("prod-sat", Endpoint::Reveal, Some("prod"));
        let mut second = accounting.begin("prod-sat", Endpoint::Reveal, Some("prod"));
        second.accepted();
        second.finished(Outcome::Status(200));
        first.finished(Outcome::Status(429));
        drop((first, second));
        let abandoned = accounting.begin(ANONYMOUS, Endpoint::Healthz, None);
        drop(abandoned);

        let stats = accounting.snapshot();
        let sat = stats.token("prod-sat");
        assert_eq!((sat.requests, sat.accepted, sat.rate_limited), (2, 1, 1));
        assert_eq!((sat.in_flight, sat.peak_in_flight), (0, 2));
        assert_eq!(sat.vaults.get("prod"), Some(&2));
        assert_eq!(stats.total.requests, 3);
        assert_eq!(stats.total.endpoints.get("healthz"), Some(&1));
        assert_eq!(stats.total.statuses.get("429"), Some(&1));
        assert_eq!(stats.token(ANONYMOUS).vaults.len(), 0);
        assert_eq!(stats.token(ANONYMOUS).statuses.get("abandoned"), Some(&1));
    }

    #[tokio::test]
    async fn wait_for_requests_should_fail_with_the_count_seen_when_the_total_stays_short() {
        let accounting = Arc::new(Accounting::default());
        drop(accounting.begin(ANONYMOUS, Endpoint::Healthz, None));
        assert_eq!(
            accounting
                .wait_for_requests(1, Duration::from_secs(5))
                .await
                .unwrap()
                .total
                .requests,
            1
        );
        let err = accounting
            .wait_for_requests(2, Duration::from_millis(20))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("last seen: 1 requests"), "{err}");
    }
}
