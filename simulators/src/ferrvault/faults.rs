//! Fault injection per endpoint: latency, hang-until-cleared, 5xx at a seeded rate, malformed JSON,
//! connection reset, oversized body; optionally for one token's requests only.
//!
//! Each request takes one [`FaultPlan`] when it arrives ([`FerrVaultFaults::plan`]): the RNG is rolled
//! and a `times` budget is spent at that moment, so a run with the same seed and the same request order
//! sees the same faults.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use rand::{RngExt, SeedableRng, rngs::StdRng};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

/// The simulator's endpoints, as fault and accounting keys. The `/operator/…` ones are also
/// served under `/v1/operator/…` (see the README: both prefixes are in production use).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Endpoint {
    /// `GET /healthz`.
    Healthz,
    /// `POST /operator/secrets/reveal` (ferrvault mode).
    Reveal,
    /// `GET /api/v1/orgs/{org}/projects/{project}/vaults/by-name/{vault}/secrets/reveal` (cloud mode).
    CloudReveal,
    /// `POST /api/v1/clusters/oidc-exchange`.
    OidcExchange,
    /// `GET /operator/secrets/list`: every name of the token's vault with its version, no value.
    List,
    /// `GET /operator/me`: what the service-account token is.
    Me,
    /// `POST /operator/secrets`: create a secret (409 when it exists).
    Create,
    /// `PUT /operator/secrets/{name}`: change a secret's value.
    Update,
    /// `DELETE /operator/secrets/{name}?vault=`: delete a secret.
    Delete,
}

impl Endpoint {
    /// Every endpoint.
    pub const ALL: [Endpoint; 9] = [
        Self::Healthz,
        Self::Reveal,
        Self::CloudReveal,
        Self::OidcExchange,
        Self::List,
        Self::Me,
        Self::Create,
        Self::Update,
        Self::Delete,
    ];

    /// The name used in stats and admin paths (`healthz`, `reveal`, `cloud_reveal`,
    /// `oidc_exchange`, `list`, `me`, `create`, `update`, `delete`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Healthz => "healthz",
            Self::Reveal => "reveal",
            Self::CloudReveal => "cloud_reveal",
            Self::OidcExchange => "oidc_exchange",
            Self::List => "list",
            Self::Me => "me",
            Self::Create => "create",
            Self::Update => "update",
            Self::Delete => "delete",
        }
    }

    /// Parses [`Endpoint::as_str`] back.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == name)
    }
}

/// What to do to requests of one endpoint. Fields combine; the default does nothing.
///
/// Latency and hang apply before authentication (the server is slow for everyone). The other faults
/// replace the answer of a request that passed authentication and the rate limiter, in this order of
/// precedence: reset, 5xx (drawn at `error_rate`), malformed JSON, oversized body.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FaultSpec {
    /// Added delay before the request is handled, in milliseconds.
    pub latency_ms: u64,
    /// Hold requests without answering until this endpoint's faults are set or cleared again.
    pub hang: bool,
    /// Fraction (0..=1) of requests answered with `error_status`.
    pub error_rate: f64,
    /// The 5xx status sent at `error_rate` (default 503).
    pub error_status: Option<u16>,
    /// Answer 200 with a truncated JSON body.
    pub malformed_json: bool,
    /// Close the connection without a response (TCP reset).
    pub reset_connection: bool,
    /// Answer 200 with a valid JSON body of at least this many bytes.
    pub oversized_body_bytes: Option<usize>,
    /// Apply to this many requests, then remove itself; `None` means until cleared.
    pub times: Option<u32>,
    /// Apply only to requests of this token, named as in the stats (its label, or its
    /// fingerprint when it has none); `None` means every caller. A test control: one tenant's
    /// credential misbehaves while another's works.
    pub token: Option<String>,
}

/// The 5xx status used when a spec names none.
pub const DEFAULT_ERROR_STATUS: u16 = 503;

impl FaultSpec {
    /// Adds latency.
    #[must_use]
    pub fn with_latency(mut self, latency: Duration) -> Self {
        self.latency_ms = u64::try_from(latency.as_millis()).unwrap_or(u64::MAX);
        self
    }
    /// Holds requests until the endpoint's faults change.
    #[must_use]
    pub fn with_hang(mut self) -> Self {
        self.hang = true;
        self
    }
    /// Answers `status` to a `rate` fraction of requests.
    #[must_use]
    pub fn with_server_errors(mut self, rate: f64, status: u16) -> Self {
        self.error_rate = rate;
        self.error_status = Some(status);
        self
    }
    /// Answers truncated JSON.
    #[must_use]
    pub fn with_malformed_json(mut self) -> Self {
        self.malformed_json = true;
        self
    }
    /// Resets the connection instead of answering.
    #[must_use]
    pub fn with_connection_reset(mut self) -> Self {
        self.reset_connection = true;
        self
    }
    /// Answers a body of at least `bytes` bytes.
    #[must_use]
    pub fn with_oversized_body(mut self, bytes: usize) -> Self {
        self.oversized_body_bytes = Some(bytes);
        self
    }
    /// Applies to the next `n` requests only.
    #[must_use]
    pub fn times(mut self, n: u32) -> Self {
        self.times = Some(n);
        self
    }
    /// Applies to the requests of one token only (its label, or its fingerprint).
    #[must_use]
    pub fn for_token(mut self, label_or_fingerprint: &str) -> Self {
        self.token = Some(label_or_fingerprint.to_owned());
        self
    }
}

/// A fault that replaces a request's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disruption {
    /// Close the socket without answering.
    ResetConnection,
    /// Answer this 5xx status.
    ServerError(u16),
    /// Answer 200 with a truncated JSON body.
    MalformedJson,
    /// Answer 200 with a JSON body of at least this many bytes.
    OversizedBody(usize),
}

/// What one request will suffer, decided when it arrives.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultPlan {
    /// Delay before handling.
    pub latency: Duration,
    /// `Some(epoch)`: hang until the endpoint's epoch moves past it.
    pub hang_epoch: Option<u64>,
    /// Replacement answer, applied after authentication and rate limiting.
    pub disruption: Option<Disruption>,
}

#[derive(Debug)]
struct FaultState {
    /// Active specs.
    specs: BTreeMap<Endpoint, FaultSpec>,
    /// Per endpoint, bumped by every explicit set/clear; releases requests hanging on an older epoch.
    epochs: BTreeMap<Endpoint, u64>,
    /// Seeded, so fault sequences replay.
    rng: StdRng,
}

/// A cloneable handle on the running simulator's faults.
#[derive(Clone, Debug)]
pub struct FerrVaultFaults {
    state: Arc<Mutex<FaultState>>,
    /// Bumped on every explicit change so hanging requests re-check.
    changed: Arc<watch::Sender<u64>>,
}

impl FerrVaultFaults {
    /// No faults, RNG seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            state: Arc::new(Mutex::new(FaultState {
                specs: BTreeMap::new(),
                epochs: BTreeMap::new(),
                rng: StdRng::seed_from_u64(seed),
            })),
            changed: Arc::new(watch::Sender::new(0)),
        }
    }

    /// Replaces `endpoint`'s faults (and releases requests hanging on the previous ones).
    pub fn set(&self, endpoint: Endpoint, spec: FaultSpec) {
        self.change(endpoint, Some(spec));
    }

    /// Removes `endpoint`'s faults and releases its hanging requests.
    pub fn clear(&self, endpoint: Endpoint) {
        self.change(endpoint, None);
    }

    /// Removes every fault and releases every hanging request.
    pub fn clear_all(&self) {
        for endpoint in Endpoint::ALL {
            self.clear(endpoint);
        }
    }

    /// Re-seeds the RNG behind `error_rate`.
    pub fn reseed(&self, seed: u64) {
        self.lock().rng = StdRng::seed_from_u64(seed);
    }

    /// The active specs.
    pub fn active(&self) -> BTreeMap<Endpoint, FaultSpec> {
        self.lock().specs.clone()
    }

    /// Decides what one arriving request of `endpoint` from `caller` (its label or fingerprint,
    /// as in the stats) suffers, spending a `times` budget.
    pub fn plan(&self, endpoint: Endpoint, caller: &str) -> FaultPlan {
        let mut guard = self.lock();
        let FaultState { specs, epochs, rng } = &mut *guard;
        let Some(spec) = specs
            .get_mut(&endpoint)
            .filter(|spec| spec.token.as_deref().is_none_or(|t| t == caller))
        else {
            return FaultPlan::default();
        };
        let is_server_error = spec.error_rate > 0.0 && rng.random::<f64>() < spec.error_rate;
        let disruption = if spec.reset_connection {
            Some(Disruption::ResetConnection)
        } else if is_server_error {
            Some(Disruption::ServerError(
                spec.error_status.unwrap_or(DEFAULT_ERROR_STATUS),
            ))
        } else if spec.malformed_json {
            Some(Disruption::MalformedJson)
        } else {
            spec.oversized_body_bytes.map(Disruption::OversizedBody)
        };
        let plan = FaultPlan {
            latency: Duration::from_millis(spec.latency_ms),
            hang_epoch: spec.hang.then(|| epochs.get(&endpoint).copied().unwrap_or(0)),
            disruption,
        };
        if let Some(left) = spec.times.as_mut() {
            *left = left.saturating_sub(1);
            if *left == 0 {
                specs.remove(&endpoint);
            }
        }
        plan
    }

    /// Sleeps the plan's latency, then, if it hangs, waits until `endpoint`'s faults change.
    pub async fn delay(&self, endpoint: Endpoint, plan: &FaultPlan) {
        if !plan.latency.is_zero() {
            tokio::time::sleep(plan.latency).await;
        }
        let Some(epoch) = plan.hang_epoch else { return };
        let mut changes = self.changed.subscribe();
        // Subscribe first, then check: a change between the two is not lost.
        while self.lock().epochs.get(&endpoint).copied().unwrap_or(0) == epoch {
            if changes.changed().await.is_err() {
                return; // the sender lives in `self`; unreachable while we hold it
            }
        }
    }

    fn change(&self, endpoint: Endpoint, spec: Option<FaultSpec>) {
        {
            let mut state = self.lock();
            match spec {
                Some(spec) => state.specs.insert(endpoint, spec),
                None => state.specs.remove(&endpoint),
            };
            *state.epochs.entry(endpoint).or_insert(0) += 1;
        }
        self.changed.send_modify(|n| *n += 1);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FaultState> {
        // Fault specs stay consistent across a panic elsewhere; keep serving.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_should_be_empty_without_faults() {
        let faults = FerrVaultFaults::new(1);
        assert_eq!(faults.plan(Endpoint::Reveal, "any"), FaultPlan::default());
    }

    #[test]
    fn error_rate_should_be_reproducible_for_a_seed_and_close_to_the_fraction() {
        let draw = |seed| {
            let faults = FerrVaultFaults::new(seed);
            faults.set(
                Endpoint::Reveal,
                FaultSpec::default().with_server_errors(0.3, 502),
            );
            (0..1000)
                .map(|_| faults.plan(Endpoint::Reveal, "any").disruption)
                .collect::<Vec<_>>()
        };
        let first = draw(7);
        assert_eq!(first, draw(7));
        let errors = first
            .iter()
            .filter(|d| **d == Some(Disruption::ServerError(502)))
            .count();
        assert!(
            (250..350).contains(&errors),
            "expected ~300 of 1000 at rate 0.3, got {errors}"
        );
    }

    #[test]
    fn times_should_remove_the_spec_after_that_many_requests() {
        let faults = FerrVaultFaults::new(1);
        faults.set(
            Endpoint::Reveal,
            FaultSpec::default().with_connection_reset().times(2),
        );
        assert_eq!(
            faults.plan(Endpoint::Reveal, "any").disruption,
            Some(Disruption::ResetConnection)
        );
        assert_eq!(
            faults.plan(Endpoint::Reveal, "any").disruption,
            Some(Disruption::ResetConnection)
        );
        assert_eq!(faults.plan(Endpoint::Reveal, "any").disruption, None);
        assert!(faults.active().is_empty());
    }

    #[test]
    fn faults_should_only_touch_their_endpoint() {
        let faults = FerrVaultFaults::new(1);
        faults.set(Endpoint::CloudReveal, FaultSpec::default().with_malformed_json());
        assert_eq!(faults.plan(Endpoint::Reveal, "any").disruption, None);
        assert_eq!(
            faults.plan(Endpoint::CloudReveal, "any").disruption,
            Some(Disruption::MalformedJson)
        );
    }

    #[test]
    fn a_fault_for_one_token_should_spare_every_other_caller_and_their_budget() {
        let faults = FerrVaultFaults::new(1);
        faults.set(
            Endpoint::Reveal,
            FaultSpec::default()
                .with_connection_reset()
                .for_token("tenant-a")
                .times(1),
        );
        assert_eq!(faults.plan(Endpoint::Reveal, "tenant-b").disruption, None);
        assert_eq!(
            faults.plan(Endpoint::Reveal, "tenant-a").disruption,
            Some(Disruption::ResetConnection),
            "the other caller spent none of the budget"
        );
        assert_eq!(faults.plan(Endpoint::Reveal, "tenant-a").disruption, None);
    }

    #[tokio::test]
    async fn hang_should_last_until_the_endpoint_faults_are_cleared() {
        let faults = FerrVaultFaults::new(1);
        faults.set(Endpoint::Reveal, FaultSpec::default().with_hang().times(1));
        let plan = faults.plan(Endpoint::Reveal, "any");
        let waiter = tokio::spawn({
            let faults = faults.clone();
            async move { faults.delay(Endpoint::Reveal, &plan).await }
        });
        tokio::task::yield_now().await;
        assert!(
            !waiter.is_finished(),
            "a hanging request should not finish on its own"
        );
        faults.clear(Endpoint::Reveal);
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("clearing the fault should release the hanging request")
            .expect("waiter task panicked");
    }
}
