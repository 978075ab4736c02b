//! A FerrVault server simulator: the same endpoints and wire format as the real server
//! (reference-go-operator.md §2.2–§2.6), with per-token rate limiting, fault injection and request
//! accounting, for tests, benchmarks and `ferrvault-sim ferrvault`.
//!
//! # Layout
//! - [`config`]: vaults, secrets, tokens, limits ([`SimConfig`], builder and YAML).
//! - `routes.rs` and `operator_routes.rs` extract a request (with `extract.rs`), `handlers.rs`
//!   runs the pipeline, `endpoints.rs` (reveals, exchange), `operator_reads.rs` (list, me) and
//!   `operator_writes.rs` (create, update, delete) answer, `reply.rs` formats, `wire.rs` holds
//!   the bodies; `state.rs` is what requests share; `vaults.rs` the secrets and their versions;
//!   `server.rs` is the accept loop (it can reset connections), `tls.rs` its HTTPS and mTLS.
//! - [`rate_limit`]: the pure budgets (token bucket with debt or capped debt, sliding window). [`faults`]: per-endpoint faults.
//!   [`accounting`]: per-token counters. `identity.rs`: tokens and the OIDC exchange.
//! - `admin.rs`: the `/_sim/…` control paths. [`cli`]: the subcommand.
//!
//! # Endpoints
//! | Path | Auth | Limited |
//! |---|---|---|
//! | `GET /healthz` | none | no |
//! | `POST /operator/secrets/reveal` | `fvsat_` bound to one vault | yes |
//! | `GET /operator/secrets/list`, `GET /operator/me` | `fvsat_` | yes |
//! | `POST /operator/secrets`, `PUT`/`DELETE /operator/secrets/{name}` | `fvsat_`, role ≥ `writer` | yes |
//! | `GET /api/v1/orgs/{org}/projects/{project}/vaults/by-name/{vault}/secrets/reveal[?names=a,b]` | `fft_` or minted `ffclust_` (+ `X-FerrVault-Namespace`) | yes |
//! | `POST /api/v1/clusters/oidc-exchange` | the body | no |
//!
//! Status codes: 401 `{"error":"unauthorized"}` for a missing, unknown or expired token or one of the
//! wrong kind; 403 `{"message":"wrong vault"}` for a service-account token used on another vault (and
//! `{"message":…}` for other 403s); 404 `{"error":"vault not found"}`; 429 `{"error":…}` with
//! `Retry-After`; 400 for a bad body or a cluster token without namespace.
//!
//! Every `/operator/…` path is also served under `/v1/operator/…`: the Go operator dropped `v1`
//! in 5.2.0 while the CLI still sends it, and both are in production (README, "Path prefixes").
//!
//! # Caveats
//! The real server's limiter is 60/min per token; the default here is 1/s burst 5, the model of the
//! Go operator's tests. Whether the real server counts rejected requests is unknown, hence the switch.
//! Every authenticated endpoint spends the token's one budget (assumed: the README's "Metering").

pub mod accounting;
mod admin;
mod builder;
pub mod cli;
pub mod config;
mod endpoints;
mod error;
mod extract;
pub mod faults;
mod first_match;
mod handlers;
mod identity;
mod operator_reads;
mod operator_routes;
mod operator_writes;
pub mod rate_limit;
mod reply;
mod routes;
mod server;
mod state;
mod surface;
mod tls;
mod vaults;
mod wire;

use std::{net::SocketAddr, sync::Arc, time::Duration};

use tokio::{task::JoinHandle, time::Instant};
use tokio_util::sync::CancellationToken;

pub use accounting::{Counters, SimStats};
pub use config::{RetryAfterFormat, Role, SimConfig, TlsSpec, Unserved, token_fingerprint};
pub use error::SimError;
pub use faults::{Endpoint, FaultSpec, FerrVaultFaults};
pub use rate_limit::{LimiterMode, RateLimit};

use state::SimState;

/// A running simulator. Dropping it (or [`FerrVaultSim::shutdown`]) stops the server.
///
/// # Guarantees
/// Listens on loopback only when started with [`FerrVaultSim::start`]; every request the API paths
/// receive is counted before anything else happens to it.
#[derive(Debug)]
pub struct FerrVaultSim {
    addr: SocketAddr,
    /// `https` when TLS is configured, else `http`.
    scheme: &'static str,
    state: Arc<SimState>,
    shutdown: CancellationToken,
    server: Option<JoinHandle<()>>,
}

impl FerrVaultSim {
    /// Starts a simulator on `127.0.0.1:0` (a free port).
    ///
    /// # Errors
    /// [`SimError::InvalidConfig`] when `config` does not validate, [`SimError::Bind`] when binding fails.
    pub async fn start(config: SimConfig) -> Result<Self, SimError> {
        Self::start_on(config, SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// Starts a simulator on `addr`.
    ///
    /// # Errors
    /// As [`FerrVaultSim::start`]; also [`SimError::InvalidConfig`] for unusable TLS settings.
    pub async fn start_on(config: SimConfig, addr: SocketAddr) -> Result<Self, SimError> {
        config.validate()?;
        let acceptor = config.tls.as_ref().map(tls::acceptor).transpose()?;
        let listener = server::bind(addr).await?;
        let addr = listener
            .local_addr()
            .map_err(|source| SimError::Bind { addr, source })?;
        let state = Arc::new(SimState::new(&config));
        let (scheme, transport) = match acceptor {
            None => ("http", server::Transport::Plain),
            Some(acceptor) => (
                "https",
                server::Transport::Tls {
                    acceptor,
                    accounting: Arc::clone(&state.accounting),
                },
            ),
        };
        let shutdown = CancellationToken::new();
        let server = tokio::spawn(server::serve(
            listener,
            routes::all(Arc::clone(&state)),
            transport,
            shutdown.clone(),
        ));
        Ok(Self {
            addr,
            scheme,
            state,
            shutdown,
            server: Some(server),
        })
    }

    /// The base URL, e.g. `http://127.0.0.1:43121` (`https://` with TLS; no trailing slash).
    pub fn url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A snapshot of the counters: totals and per token label or fingerprint.
    pub fn stats(&self) -> SimStats {
        self.state.accounting.snapshot()
    }

    /// One token's counters, addressed by label or fingerprint (a labelled token's fingerprint
    /// resolves to its label); zero when it never called.
    pub fn token_stats(&self, token_label_or_fingerprint: &str) -> Counters {
        self.stats()
            .token(&self.state.tokens.canonical_key(token_label_or_fingerprint))
    }

    /// Zeroes the counters (requests still in flight stay counted as in flight).
    pub fn reset_stats(&self) {
        self.state.accounting.reset();
    }

    /// Waits until at least `at_least` API requests arrived in total.
    ///
    /// # Errors
    /// [`SimError::WaitTimedOut`] after `within`, naming the count seen.
    pub async fn wait_for_requests(&self, at_least: u64, within: Duration) -> Result<SimStats, SimError> {
        self.state.accounting.wait_for_requests(at_least, within).await
    }

    /// Waits until `condition` holds for the counters (re-checked after every change), e.g.
    /// `|s| s.token("prod-sat").accepted >= 29`.
    ///
    /// # Errors
    /// [`SimError::WaitTimedOut`] after `within`, naming `what`.
    pub async fn wait_until(
        &self,
        condition: impl FnMut(&SimStats) -> bool,
        within: Duration,
        what: &str,
    ) -> Result<SimStats, SimError> {
        self.state.accounting.wait_until(condition, within, what).await
    }

    /// Sets one token's bucket from now on; the bucket keeps what it earned, capped at `burst`.
    /// A labelled token can be addressed by its label or its fingerprint.
    ///
    /// # Panics
    /// When `per_second` is not finite and positive or `burst` is 0: a test setup bug.
    pub fn set_rate_limit(&self, token_label_or_fingerprint: &str, per_second: f64, burst: u32) {
        let limit = valid_limit(per_second, burst);
        self.state.set_token_limit(token_label_or_fingerprint, limit);
    }

    /// Sets the bucket of every token without its own limit.
    ///
    /// # Panics
    /// As [`FerrVaultSim::set_rate_limit`].
    pub fn set_default_rate_limit(&self, per_second: f64, burst: u32) {
        self.state
            .limiter
            .set_default_limit(valid_limit(per_second, burst), Instant::now());
    }

    /// Switches "debt" mode (rejected requests also spend budget).
    pub fn set_debt_mode(&self, rejected_requests_spend_budget: bool) {
        self.state.limiter.set_debt_mode(rejected_requests_spend_budget);
    }

    /// Switches the `Retry-After` format of 429s.
    pub fn set_retry_after_format(&self, format: RetryAfterFormat) {
        *self
            .state
            .retry_after
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = format;
    }

    /// The fault handle (cloneable; changes apply to the next requests).
    pub fn faults(&self) -> FerrVaultFaults {
        self.state.faults.clone()
    }

    /// Sets a secret (bumping its version). Returns false when the vault does not exist.
    pub fn put_secret(&self, vault: &str, name: &str, value: &str) -> bool {
        self.state.vaults.put_secret(vault, name, value)
    }

    /// Deletes a secret (a later one of the same name continues its versions). Returns false
    /// when the vault does not exist.
    pub fn remove_secret(&self, vault: &str, name: &str) -> bool {
        self.state.vaults.remove_secret(vault, name)
    }

    /// A secret's current version, or `None` when the vault or the secret does not exist.
    pub fn secret_version(&self, vault: &str, name: &str) -> Option<u64> {
        self.state
            .vaults
            .read(vault, |v| v.secrets.get(name).map(|s| s.version))
            .flatten()
    }

    /// Stops serving `endpoint` (answering as [`Unserved`] says), or serves it again (`None`).
    pub fn set_unserved(&self, endpoint: Endpoint, how: Option<Unserved>) {
        self.state.set_unserved(endpoint, how);
    }

    /// Expires every minted cluster token now: their next use gets 401.
    pub fn expire_cluster_tokens(&self) {
        self.state.tokens.expire_minted();
    }

    /// Stops accepting, aborts open connections (ending hanging requests) and waits for the server.
    pub async fn shutdown(mut self) {
        self.shutdown.cancel();
        if let Some(server) = self.server.take() {
            // A panic in the accept loop already surfaced in the tests that caused it; stopping is all
            // that is left to do.
            let _ = server.await;
        }
    }
}

impl Drop for FerrVaultSim {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

fn valid_limit(per_second: f64, burst: u32) -> RateLimit {
    let limit = RateLimit { per_second, burst };
    if let Err(error) = limit.validate() {
        panic!("invalid rate limit for the FerrVault simulator: {error}");
    }
    limit
}
