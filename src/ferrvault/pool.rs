//! The pooled HTTP clients: one `reqwest::Client` (one connection pool) per [`Endpoint`]
//! (base URL + CA bundle + client certificate + pins), shared by every connection using that endpoint, and forgotten when
//! no connection uses it any more.
//!
//! # Guarantees
//! - A connection that moves to another endpoint (URL or CA bundle edited) or is forgotten
//!   (deleted, invalid) releases its previous endpoint; an endpoint no connection uses then is
//!   dropped at once, with its idle sockets. Editing one connection's URL a thousand times
//!   leaves one pooled client.
//! - Clients no connection claims (a caller that never said which connection it serves) are
//!   dropped once unused for [`UNCLAIMED_EVICTION`], and the pool never holds more than
//!   [`MAX_POOLED_CLIENTS`]: the least recently used go first, unclaimed before claimed.
//! - Every client shares the system's CA roots ([`trust`](super::trust)), parsed once.
//! - Every client resolves its host through the egress policy ([`EgressResolver`]) and uses no
//!   proxy (`HTTPS_PROXY` is ignored): the address it connects to is the one the policy judged.
//! - A dropped client does not break a call in flight: callers hold their own clone.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use tokio::time::Instant;

use super::{
    Endpoint, FerrVaultError,
    certificate_requests::CertificateRequests,
    egress_gate::{EgressGate, EgressResolver},
    trust,
};

/// Unclaimed clients unused this long are dropped when another client is added.
pub const UNCLAIMED_EVICTION: Duration = Duration::from_secs(10 * 60);
/// The most clients the pool holds.
pub const MAX_POOLED_CLIENTS: usize = 256;

/// A FerrVaultConnection, by namespace and name.
type ConnectionId = (String, String);

#[derive(Debug, Default)]
pub(crate) struct HttpPool {
    state: Mutex<PoolState>,
    /// The egress policy every client's resolver enforces.
    egress: Arc<EgressGate>,
}

#[derive(Debug, Default)]
struct PoolState {
    clients: HashMap<Endpoint, Pooled>,
    /// The endpoint each connection uses now.
    claims: HashMap<ConnectionId, Endpoint>,
}

#[derive(Debug)]
struct Pooled {
    client: EndpointClient,
    last_used: Instant,
}

/// One endpoint's client, and the count of its server's requests for a client certificate
/// (how `http.rs` recognises a refusal whose alert never reached the request).
#[derive(Clone, Debug)]
pub(crate) struct EndpointClient {
    pub(crate) http: reqwest::Client,
    pub(crate) certificate_requests: Arc<CertificateRequests>,
}

impl HttpPool {
    /// An empty pool whose clients connect only where `egress` allows.
    pub(crate) fn new(egress: Arc<EgressGate>) -> Self {
        Self {
            state: Mutex::default(),
            egress,
        }
    }

    /// The pooled client for an endpoint, built on first use.
    ///
    /// # Errors
    /// [`FerrVaultError::InvalidTls`] when the TLS client cannot be built.
    pub(crate) fn client_for(&self, endpoint: &Endpoint) -> Result<EndpointClient, FerrVaultError> {
        let mut state = self.lock();
        let now = Instant::now();
        if let Some(pooled) = state.clients.get_mut(endpoint) {
            pooled.last_used = now;
            return Ok(pooled.client.clone());
        }
        let client = build_client(endpoint, &self.egress)?;
        state.evict_for_one_more(now);
        state.clients.insert(
            endpoint.clone(),
            Pooled {
                client: client.clone(),
                last_used: now,
            },
        );
        Ok(client)
    }

    /// Records that connection `namespace/name` uses `endpoint` now, releasing the one it used
    /// before.
    pub(crate) fn claim(&self, namespace: &str, name: &str, endpoint: &Endpoint) {
        let mut state = self.lock();
        let id = (namespace.to_owned(), name.to_owned());
        if let Some(previous) = state.claims.insert(id, endpoint.clone())
            && previous != *endpoint
        {
            state.drop_if_unclaimed(&previous);
        }
    }

    /// Records that connection `namespace/name` uses no endpoint any more.
    pub(crate) fn release(&self, namespace: &str, name: &str) {
        let mut state = self.lock();
        if let Some(previous) = state.claims.remove(&(namespace.to_owned(), name.to_owned())) {
            state.drop_if_unclaimed(&previous);
        }
    }

    /// Number of pooled clients.
    pub(crate) fn len(&self) -> usize {
        self.lock().clients.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl PoolState {
    fn claimed(&self, endpoint: &Endpoint) -> bool {
        self.claims.values().any(|claimed| claimed == endpoint)
    }

    fn drop_if_unclaimed(&mut self, endpoint: &Endpoint) {
        if !self.claimed(endpoint) {
            self.clients.remove(endpoint);
        }
    }

    /// Makes room for one more client: drops unclaimed clients idle too long, then the least
    /// recently used (unclaimed first) while the pool is full.
    fn evict_for_one_more(&mut self, now: Instant) {
        let stale: Vec<Endpoint> = self
            .clients
            .iter()
            .filter(|(endpoint, pooled)| {
                now.duration_since(pooled.last_used) >= UNCLAIMED_EVICTION && !self.claimed(endpoint)
            })
            .map(|(endpoint, _)| endpoint.clone())
            .collect();
        for endpoint in stale {
            self.clients.remove(&endpoint);
        }
        while self.clients.len() >= MAX_POOLED_CLIENTS {
            let Some(victim) = self
                .clients
                .iter()
                .min_by_key(|(endpoint, pooled)| (self.claimed(endpoint), pooled.last_used))
                .map(|(endpoint, _)| endpoint.clone())
            else {
                return;
            };
            self.clients.remove(&victim);
        }
    }
}

fn build_client(endpoint: &Endpoint, egress: &Arc<EgressGate>) -> Result<EndpointClient, FerrVaultError> {
    let certificate_requests = Arc::new(CertificateRequests::default());
    let http = reqwest::Client::builder()
        .user_agent(concat!("ferrvault-operator/", env!("CARGO_PKG_VERSION")))
        // A proxy would resolve (and connect to) the host itself, out of the policy's sight.
        .no_proxy()
        .dns_resolver(EgressResolver::new(egress.clone(), endpoint))
        // Our own loop decides retries; reqwest's protocol-level retries would hide attempts.
        .retry(reqwest::retry::never())
        // A redirect would re-send the Authorization header or the OIDC exchange body to a
        // host nobody checked; a 3xx is an error instead (see `FerrVaultError::Redirected`).
        .redirect(reqwest::redirect::Policy::none())
        .pool_idle_timeout(Duration::from_secs(90))
        .tls_backend_preconfigured(trust::client_config(endpoint, certificate_requests.clone())?)
        .build()
        .map_err(|e| FerrVaultError::InvalidTls(e.to_string()))?;
    Ok(EndpointClient {
        http,
        certificate_requests,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(url: &str) -> Endpoint {
        Endpoint::parse(url).expect("valid URL")
    }

    #[test]
    fn a_connection_moving_to_another_endpoint_should_release_the_previous_one() {
        let pool = HttpPool::default();
        let (first, second) = (endpoint("http://a.test"), endpoint("http://b.test"));
        pool.claim("team", "conn", &first);
        pool.client_for(&first).expect("client");
        pool.claim("team", "other", &first);
        pool.claim("team", "conn", &second);
        pool.client_for(&second).expect("client");
        assert_eq!(pool.len(), 2, "another connection still uses the first endpoint");
        pool.release("team", "other");
        assert_eq!(pool.len(), 1, "nobody uses the first endpoint any more");
        pool.release("team", "conn");
        assert_eq!(pool.len(), 0);
    }

    #[test]
    fn connections_presenting_different_client_certificates_should_never_share_a_client() {
        let identity = |name: &str| {
            let key = rcgen::KeyPair::generate().expect("key");
            let cert = rcgen::CertificateParams::new(vec![name.to_owned()])
                .expect("params")
                .self_signed(&key)
                .expect("cert");
            crate::ferrvault::ClientIdentity::from_pem(cert.pem().as_bytes(), key.serialize_pem().as_bytes())
                .expect("a valid identity")
        };
        let pool = HttpPool::default();
        let url = "https://fv.test";
        let (mine, theirs) = (
            endpoint(url).with_client_identity(identity("a")),
            endpoint(url).with_client_identity(identity("b")),
        );
        assert_ne!(mine, theirs, "the identity is part of the pool key");
        pool.claim("team-a", "conn", &mine);
        pool.client_for(&mine).expect("client");
        pool.claim("team-b", "conn", &theirs);
        pool.client_for(&theirs).expect("client");
        pool.client_for(&endpoint(url)).expect("client");
        assert_eq!(pool.len(), 3, "one client per identity, and one without");
    }

    #[test]
    fn the_pool_should_never_hold_more_than_its_bound_dropping_unclaimed_clients_first() {
        let pool = HttpPool::default();
        let kept = endpoint("http://kept.test");
        pool.claim("team", "conn", &kept);
        pool.client_for(&kept).expect("client");
        for i in 0..MAX_POOLED_CLIENTS + 10 {
            pool.client_for(&endpoint(&format!("http://{i}.test")))
                .expect("client");
        }
        assert_eq!(pool.len(), MAX_POOLED_CLIENTS);
        assert!(
            pool.lock().clients.contains_key(&kept),
            "the claimed client is kept"
        );
    }
}
