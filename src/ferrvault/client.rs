//! [`FerrVault`]: the one client object the operator shares between all reconciles.

use std::{
    collections::HashMap,
    net::{IpAddr, SocketAddr},
    sync::{
        Arc, Mutex, OnceLock, PoisonError,
        atomic::{AtomicU32, Ordering},
    },
    time::Duration,
};

use tokio::time::Instant;

use super::{
    BudgetShare, ClientConfig, ClusterIdentity, Credential, Endpoint, FerrVaultError, IdentityRefusal,
    LimiterSnapshot,
    deadline::Deadline,
    egress_gate::EgressGate,
    http::{self, CallSettings, MAX_SMALL_BODY_BYTES},
    oidc::{OidcCache, OidcSource},
    pacer::Pacer,
    pool::{EndpointClient, HttpPool},
    reveal::{self, RevealRequest, RevealScope, Revealed},
    single_flight::{KEPT_ANSWER_BYTES, SingleFlight, WAVE_HORIZON},
};

mod account;

/// The FerrVault client. Cheap to clone; clones share the HTTP client pool, the
/// per-credential pacers, the single-flight table and the OIDC token cache.
///
/// # Guarantees
/// - Reveals are paced per credential (base URL + token): callers wait for budget within
///   their deadline instead of being rejected by the server. A credential every shard spends
///   ([`Credential::shared_across_shards`]) is paced at this replica's share of the budget
///   under [`ClientConfig::shards`], rescaled when the held shards change
///   ([`FerrVault::follow_held_shards`]).
/// - Concurrent reveals of one vault through one credential share one request; so do the
///   reveals of one wave ([`FerrVault::reveal_in_wave`]).
/// - No secret value is kept after the request that fetched it has been handed out, except the
///   answer of a wave, until the wave is over (at most [`FerrVault::wave_horizon`] after it
///   arrived); the answers kept hold together at most 4 MiB of names and values, whatever
///   tenants' servers answer (an answer that does not fit is not kept).
/// - Nothing is sent to a plain `http://` URL unless [`ClientConfig::allow_insecure_http`];
///   no connection is made to an address [`ClientConfig::egress`] refuses;
///   nothing of the cluster identity is sent outside [`ClusterIdentity::admits`], and a cluster
///   bearer is only sent in a cloud-mode reveal carrying `X-FerrVault-Namespace`.
#[derive(Clone)]
pub struct FerrVault {
    inner: Arc<Inner>,
}

struct Inner {
    config: ClientConfig,
    settings: Arc<CallSettings>,
    /// `config.egress`, plus the operator's own addresses once known; shared with the pool's
    /// resolvers.
    egress: Arc<EgressGate>,
    http: HttpPool,
    /// One pacer per (base URL, credential). Keyed by the credential itself, not its 48-bit
    /// fingerprint, so two tokens can never share (or leak into) each other's state.
    pacers: Mutex<HashMap<(String, Credential), Arc<Pacer>>>,
    /// How many shards this replica holds, when it follows a held set
    /// ([`FerrVault::follow_held_shards`]).
    held_shards: OnceLock<HeldShards>,
    /// The held count the shared pacers were last scaled to; read and written under `pacers`'
    /// lock only.
    scaled_to: AtomicU32,
    flights: SingleFlight<FlightKey>,
    pub(super) oidc: OidcCache,
}

/// Reads how many shards this replica holds now.
type HeldShards = Box<dyn Fn() -> u32 + Send + Sync>;

/// A credential's pacer is forgotten after this long unused (when nothing else is pending).
pub const PACER_IDLE_EVICTION: Duration = Duration::from_secs(30 * 60);

/// What makes two reveals the same request.
#[derive(Clone, PartialEq, Eq, Hash)]
struct FlightKey {
    endpoint: Endpoint,
    credential: Credential,
    scope: RevealScope,
    vault: String,
}

impl FerrVault {
    /// A client with empty pools.
    ///
    /// # Panics
    /// When `config` fails [`ClientConfig::validate`]; validate user input first.
    pub fn new(config: ClientConfig) -> Self {
        if let Err(why) = config.validate() {
            panic!("invalid FerrVault client configuration: {why}");
        }
        let settings = Arc::new(CallSettings {
            attempt_timeout: config.attempt_timeout,
            retry: config.retry.clone(),
            max_body_bytes: config.max_body_bytes,
        });
        let flights = SingleFlight::new(config.coalesce_window, WAVE_HORIZON, KEPT_ANSWER_BYTES);
        let egress = Arc::new(EgressGate::new(config.egress.clone()));
        Self {
            inner: Arc::new(Inner {
                config,
                settings,
                http: HttpPool::new(egress.clone()),
                egress,
                pacers: Mutex::default(),
                held_shards: OnceLock::new(),
                scaled_to: AtomicU32::new(1),
                flights,
                oidc: OidcCache::default(),
            }),
        }
    }

    /// Reveals the requested keys of a vault.
    ///
    /// Waits for the credential's budget, shares the request with concurrent reveals of the
    /// same vault, retries 5xx and transport failures, and gives up at `deadline`.
    ///
    /// # Errors
    /// Any [`FerrVaultError`]; [`FerrVaultError::is_rate_limited`] ones mean "try later".
    ///
    /// # Caveats
    /// - Every reveal waits [`ClientConfig::coalesce_window`] (25ms by default) for company
    ///   before asking for a token.
    /// - A 429 is returned, not retried: the credential is paused, so asking again right away
    ///   simply waits for the pause to end (within the new call's deadline).
    pub async fn reveal(
        &self,
        endpoint: &Endpoint,
        credential: &Credential,
        request: RevealRequest,
        deadline: Instant,
    ) -> Result<Revealed, FerrVaultError> {
        self.reveal_as((None, None), endpoint, credential, request, deadline)
            .await
    }

    /// [`FerrVault::reveal`] for `caller` (a stable identity, such as a FerrVaultSecret's UID)
    /// as one of a wave: besides joining concurrent reveals, it is served by the last successful
    /// answer for the same vault, credential and scope if that answer covers its keys, its wave
    /// is not over (it served someone within the last 2s, and arrived less than
    /// [`FerrVault::wave_horizon`] ago) and it has not served `caller` yet. So the
    /// FerrVaultSecrets of one vault that refresh, start or resync together cost one request
    /// however many there are, while each one's own next reveal reads FerrVault again.
    ///
    /// # Errors
    /// As [`FerrVault::reveal`]. Failures are never kept for the wave.
    pub async fn reveal_in_wave(
        &self,
        caller: &str,
        endpoint: &Endpoint,
        credential: &Credential,
        request: RevealRequest,
        deadline: Instant,
    ) -> Result<Revealed, FerrVaultError> {
        self.reveal_as((Some(caller), None), endpoint, credential, request, deadline)
            .await
    }

    /// [`FerrVault::reveal_in_wave`], reading nothing requested before `fresh_after`: a kept
    /// answer or a request in flight made earlier is not taken, one made since is (a change
    /// hint's passes share the one read that follows the hints).
    ///
    /// # Errors
    /// As [`FerrVault::reveal`].
    pub async fn reveal_in_wave_fresh_after(
        &self,
        caller: &str,
        endpoint: &Endpoint,
        credential: &Credential,
        request: RevealRequest,
        (deadline, fresh_after): (Instant, Instant),
    ) -> Result<Revealed, FerrVaultError> {
        self.reveal_as(
            (Some(caller), Some(fresh_after)),
            endpoint,
            credential,
            request,
            deadline,
        )
        .await
    }

    async fn reveal_as(
        &self,
        caller: (Option<&str>, Option<Instant>),
        endpoint: &Endpoint,
        credential: &Credential,
        request: RevealRequest,
        deadline: Instant,
    ) -> Result<Revealed, FerrVaultError> {
        endpoint.url(&reveal::url_segments(&request.scope, &request.vault))?;
        if credential.is_cluster() {
            self.admit_cluster_reveal(endpoint, &request.scope)?;
        }
        let client = self.client_for(endpoint)?;
        let pacer = self.pacer(endpoint, credential);
        let settings = self.inner.settings.clone();
        let key = FlightKey {
            endpoint: endpoint.clone(),
            credential: credential.clone(),
            scope: request.scope.clone(),
            vault: request.vault.clone(),
        };
        let (endpoint, credential) = (endpoint.clone(), credential.clone());
        let token = credential.clone();
        let RevealRequest { scope, vault, keys } = request;
        self.inner
            .flights
            .reveal(key, caller, keys, deadline, move |flight| async move {
                http::call(
                    &client,
                    &settings,
                    Some(&pacer),
                    flight.deadline(),
                    settings.max_body_bytes,
                    |client| {
                        reveal::build_request(
                            client,
                            &endpoint,
                            &credential,
                            &scope,
                            &vault,
                            &flight.freeze(),
                        )
                    },
                    |body| reveal::decode::decode(&scope, body),
                )
                .await
            })
            .await
            .map_err(|error| error.redact(token.bearer()))
    }

    /// Checks that the server answers `GET /healthz` with a 2xx. Unauthenticated and not paced
    /// (the server does not rate-limit it); 5xx and transport failures are retried. An answer
    /// longer than [`MAX_SMALL_BODY_BYTES`](crate::ferrvault::MAX_SMALL_BODY_BYTES) is
    /// [`FerrVaultError::ResponseTooLarge`] (a healthy one takes a few bytes).
    ///
    /// # Errors
    /// The mapped status or transport failure, or [`FerrVaultError::Deadline`].
    pub async fn probe(&self, endpoint: &Endpoint, deadline: Instant) -> Result<(), FerrVaultError> {
        let client = self.client_for(endpoint)?;
        let url = endpoint.url(&["healthz"])?;
        let deadline = Deadline::new(deadline);
        http::call(
            &client,
            &self.inner.settings,
            None,
            &deadline,
            MAX_SMALL_BODY_BYTES,
            |client| {
                Ok(client
                    .get(url.clone())
                    .header(reqwest::header::ACCEPT, "application/json"))
            },
            |_| Ok(()),
        )
        .await
    }

    /// A bearer for a connection using the operator's cluster identity: the cached one while it
    /// has more than 60s left, else a fresh exchange of the operator's projected ServiceAccount
    /// token at `source.endpoint`. Concurrent callers for one connection share one exchange.
    ///
    /// # Errors
    /// [`FerrVaultError::ClusterIdentity`] when no identity is configured or the endpoint is not
    /// trusted, [`FerrVaultError::InsecureUrl`] (nothing is read or sent then);
    /// [`FerrVaultError::TokenFile`] when the token file is unreadable; the mapped exchange
    /// failure otherwise.
    pub async fn oidc_token(
        &self,
        source: &OidcSource,
        deadline: Instant,
    ) -> Result<Credential, FerrVaultError> {
        let identity = self.trusted_identity(&source.endpoint)?;
        let client = self.client_for(&source.endpoint)?;
        self.inner
            .oidc
            .token(
                &client,
                &self.inner.settings,
                identity,
                source,
                &Deadline::new(deadline),
            )
            .await
    }

    /// Refuses an endpoint the client will not talk to: plain `http://` unless
    /// [`ClientConfig::allow_insecure_http`], an IP-literal host the egress policy refuses. Every
    /// call checks this before sending; callers can ask first to report it before doing anything
    /// else. A host name is judged when it is resolved, at each new connection.
    ///
    /// # Errors
    /// [`FerrVaultError::InsecureUrl`], [`FerrVaultError::EgressDenied`].
    pub fn admit(&self, endpoint: &Endpoint) -> Result<(), FerrVaultError> {
        if endpoint.is_plain_http() && !self.inner.config.allow_insecure_http {
            return Err(FerrVaultError::InsecureUrl);
        }
        self.inner
            .egress
            .admit(endpoint)
            .map_err(FerrVaultError::EgressDenied)
    }

    /// Tells the egress policy the operator's own interface addresses and where its servers
    /// listen (`run` does, once its servers are bound and before any reconcile). Only the first
    /// call counts; returns whether this one did.
    pub fn know_own_addresses(&self, addresses: &[IpAddr], servers: &[SocketAddr]) -> bool {
        self.inner.egress.know_own(addresses, servers)
    }

    /// Forgets the cached OIDC bearer of connection `namespace/name` (spec change, deletion).
    pub fn invalidate_oidc(&self, namespace: &str, name: &str) {
        self.inner.oidc.invalidate(namespace, name);
    }

    /// Records that connection `namespace/name` uses `endpoint` now: the pooled client of the
    /// endpoint it used before is dropped when no other connection uses that one.
    pub fn claim_endpoint(&self, namespace: &str, name: &str, endpoint: &Endpoint) {
        self.inner.http.claim(namespace, name, endpoint);
    }

    /// Records that connection `namespace/name` is gone (or unusable): its endpoint's pooled
    /// client is dropped when no other connection uses it.
    pub fn release_endpoint(&self, namespace: &str, name: &str) {
        self.inner.http.release(namespace, name);
    }

    /// Makes the pacers of shared credentials ([`Credential::shared_across_shards`]) follow
    /// this replica's share of their budget under [`ClientConfig::shards`]: `held` says how many
    /// shards it holds now, read whenever a pacer is taken, so a change of the held set rescales
    /// them before the next request of any of them ([`BudgetShare`]). Only the first call counts
    /// (`run` calls it once, with `--shards N > 1`); without one a replica paces one shard's share.
    pub fn follow_held_shards(&self, held: impl Fn() -> u32 + Send + Sync + 'static) {
        // A second call would change nothing `run` wires: ignoring it keeps one source.
        let _ = self.inner.held_shards.set(Box::new(held));
    }

    /// This replica's current share of a shared credential's budget.
    pub fn budget_share(&self) -> BudgetShare {
        let held = self.inner.held_shards.get().map_or(1, |held| held());
        BudgetShare::new(held, self.inner.config.shards)
    }

    /// Every credential's limiter state, sorted by base URL then fingerprint.
    pub fn limiter_snapshots(&self) -> Vec<LimiterSnapshot> {
        let pacers: Vec<Arc<Pacer>> = self.lock_pacers().values().cloned().collect();
        let mut snapshots: Vec<LimiterSnapshot> = pacers.iter().map(|p| p.snapshot()).collect();
        snapshots.sort_by(|a, b| (&a.base_url, &a.credential).cmp(&(&b.base_url, &b.credential)));
        snapshots
    }

    /// The longest one call can legitimately take once its request is sent: every attempt
    /// timing out, every backoff at its maximum, plus the coalescing window. A reconcile
    /// timeout shorter than this cancels healthy calls. Waiting for budget is not included:
    /// it is bounded by the caller's deadline and reported as
    /// [`crate::ferrvault::DeadlineStage::WaitingForBudget`].
    pub fn longest_call(&self) -> Duration {
        self.inner
            .config
            .retry
            .longest_call(self.inner.config.attempt_timeout)
            + self.inner.config.coalesce_window
    }

    /// The configuration this client was built with.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    /// Number of vaults with a reveal gathering callers or in flight.
    pub fn reveals_in_progress(&self) -> usize {
        self.inner.flights.in_progress()
    }

    /// Number of vaults whose last answer is kept for the rest of its wave.
    pub fn wave_answers_kept(&self) -> usize {
        self.inner.flights.answers_kept()
    }

    /// The longest the answer of a wave serves its other callers after it arrived.
    pub fn wave_horizon(&self) -> Duration {
        WAVE_HORIZON.cap
    }

    /// Number of pooled HTTP clients (one per endpoint in use).
    pub fn pooled_clients(&self) -> usize {
        self.inner.http.len()
    }

    /// The pooled HTTP client for an endpoint the client may talk to.
    fn client_for(&self, endpoint: &Endpoint) -> Result<EndpointClient, FerrVaultError> {
        self.admit(endpoint)?;
        self.inner.http.client_for(endpoint)
    }

    /// The cluster identity, when it may be sent to `endpoint`.
    fn trusted_identity(&self, endpoint: &Endpoint) -> Result<&ClusterIdentity, FerrVaultError> {
        let identity = self
            .inner
            .config
            .cluster_identity
            .as_ref()
            .ok_or(FerrVaultError::ClusterIdentity(IdentityRefusal::NotConfigured))?;
        identity
            .admits(endpoint)
            .map_err(FerrVaultError::ClusterIdentity)?;
        Ok(identity)
    }

    /// A cluster bearer goes only to a trusted endpoint, and only in a cloud-mode reveal that
    /// names its namespace (the server scopes the cluster token by it).
    fn admit_cluster_reveal(&self, endpoint: &Endpoint, scope: &RevealScope) -> Result<(), FerrVaultError> {
        self.trusted_identity(endpoint)?;
        match scope {
            RevealScope::Cloud { namespace, .. } if !namespace.is_empty() => Ok(()),
            _ => Err(FerrVaultError::ClusterIdentity(IdentityRefusal::NoNamespace)),
        }
    }

    fn pacer(&self, endpoint: &Endpoint, credential: &Credential) -> Arc<Pacer> {
        let key = (endpoint.base_url().to_owned(), credential.clone());
        let mut pacers = self.lock_pacers();
        if !pacers.contains_key(&key) {
            let now = Instant::now();
            // Only pacers no call holds (strong count 1: the map's) can go.
            pacers
                .retain(|_, pacer| Arc::strong_count(pacer) > 1 || !pacer.is_idle(PACER_IDLE_EVICTION, now));
        }
        let share = self.budget_share();
        let (rate, burst) = (self.inner.config.rate_per_second, self.inner.config.burst);
        if share.is_split() && self.inner.scaled_to.swap(share.held(), Ordering::Relaxed) != share.held() {
            for pacer in pacers.values().filter(|pacer| pacer.is_shared()) {
                pacer.share(share.rate(rate), share.burst(burst));
            }
        }
        let pacer = pacers
            .entry(key)
            .or_insert_with(|| {
                Arc::new(Pacer::new(
                    credential.fingerprint(endpoint.base_url()),
                    endpoint.base_url().to_owned(),
                    rate,
                    burst,
                ))
            })
            .clone();
        if share.is_split() && credential.is_shared() && !pacer.is_shared() {
            pacer.share(share.rate(rate), share.burst(burst));
        }
        pacer
    }

    fn lock_pacers(&self) -> std::sync::MutexGuard<'_, HashMap<(String, Credential), Arc<Pacer>>> {
        self.inner.pacers.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for FerrVault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FerrVault")
            .field("config", &self.inner.config)
            .field("credentials", &self.lock_pacers().len())
            .field("pooled_clients", &self.inner.http.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU32;

    use super::*;

    #[tokio::test]
    async fn a_shared_credential_should_be_paced_at_the_held_shards_share_and_follow_their_count() {
        let client = FerrVault::new(ClientConfig {
            rate_per_second: 6.0,
            burst: 6,
            shards: 6,
            ..ClientConfig::default()
        });
        let held = Arc::new(AtomicU32::new(2));
        let count = held.clone();
        client.follow_held_shards(move || count.load(Ordering::Relaxed));
        let endpoint = Endpoint::parse("https://ferrvault.example").expect("a URL");
        let token = || Credential::new("fvsat_shared").expect("a token");
        let configured = |pacer: Arc<Pacer>| {
            let snapshot = pacer.snapshot();
            (snapshot.configured_rate, snapshot.burst)
        };
        assert_eq!(
            configured(client.pacer(&endpoint, &token().shared_across_shards())),
            (2.0, 2),
            "two of six shards: 2/6 of 6/s, floor(6 × 2 / 6)"
        );
        let own = Credential::new("fvsat_own").expect("a token");
        assert_eq!(
            configured(client.pacer(&endpoint, &own)),
            (6.0, 6),
            "not shared: whole"
        );
        held.store(3, Ordering::Relaxed);
        assert_eq!(
            configured(client.pacer(&endpoint, &own)),
            (6.0, 6),
            "a held change rescales shared pacers only"
        );
        assert_eq!(
            configured(client.pacer(&endpoint, &token())),
            (3.0, 3),
            "the shared pacer follows the held count, whoever takes it next"
        );
    }
}
