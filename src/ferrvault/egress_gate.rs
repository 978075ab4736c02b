//! Where the egress policy ([`egress`](super::egress)) is enforced: on the addresses the client
//! actually connects to. Every pooled `reqwest` client resolves host names through an
//! [`EgressResolver`], which hands the connector only the addresses the policy allows, and
//! uses no proxy; an IP-literal host, which `reqwest` connects to without asking the resolver,
//! is judged by [`EgressGate::admit`] before any request is built.
//!
//! # Guarantees
//! - A connection only ever goes to an address the policy allowed at the moment it was
//!   resolved: a name that resolves elsewhere the next time (DNS rebinding) is judged again,
//!   and what was checked is what is used.
//! - A name whose every address is refused fails resolution with the [`EgressRefusal`], which
//!   [`refusal_in`] finds again in the `reqwest` error; nothing was connected to.
//! - The policy a client enforces is the configured one until the operator knows its own
//!   addresses and servers ([`EgressGate::know_own`], once, after its servers are bound and
//!   before any reconcile runs); from then on it includes them.

use std::{
    error::Error as StdError,
    net::{IpAddr, SocketAddr},
    sync::{Arc, OnceLock},
};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::{
    Endpoint,
    egress::{EgressPolicy, EgressRefusal},
};

/// The egress policy a client enforces.
#[derive(Debug, Default)]
pub(crate) struct EgressGate {
    /// From the flags (and the API server's addresses, when `run` knows them).
    configured: EgressPolicy,
    /// The configured policy plus the operator's own addresses and servers, once known.
    with_own: OnceLock<EgressPolicy>,
}

impl EgressGate {
    pub(crate) fn new(configured: EgressPolicy) -> Self {
        Self {
            configured,
            with_own: OnceLock::new(),
        }
    }

    /// The policy in force.
    pub(crate) fn policy(&self) -> &EgressPolicy {
        self.with_own.get().unwrap_or(&self.configured)
    }

    /// Adds the operator's interface addresses and its servers' listening addresses. Only the
    /// first call counts; returns whether this one did.
    pub(crate) fn know_own(&self, addresses: &[IpAddr], servers: &[SocketAddr]) -> bool {
        self.with_own
            .set(self.configured.clone().with_own(addresses, servers))
            .is_ok()
    }

    /// Judges an IP-literal endpoint (a host name is judged when it is resolved).
    ///
    /// # Errors
    /// The [`EgressRefusal`] of its address.
    pub(crate) fn admit(&self, endpoint: &Endpoint) -> Result<(), EgressRefusal> {
        let Some(address) = endpoint.ip_literal() else {
            return Ok(());
        };
        self.policy()
            .check(address)
            .map_err(|rule| EgressRefusal::new(None, address, rule))
    }
}

/// Resolves the host of one endpoint (each pooled client serves one) and keeps only the
/// addresses the policy allows at the endpoint's port.
pub(crate) struct EgressResolver {
    gate: Arc<EgressGate>,
    port: u16,
    /// What a test's name resolves to, instead of the system resolver's answer.
    #[cfg(test)]
    fixed: Option<Vec<IpAddr>>,
}

impl EgressResolver {
    pub(crate) fn new(gate: Arc<EgressGate>, endpoint: &Endpoint) -> Self {
        Self {
            gate,
            port: endpoint.port(),
            #[cfg(test)]
            fixed: None,
        }
    }

    /// Every address of `host` at the endpoint's port.
    async fn lookup(&self, host: &str) -> std::io::Result<Vec<SocketAddr>> {
        #[cfg(test)]
        if let Some(fixed) = &self.fixed {
            return Ok(fixed.iter().map(|ip| SocketAddr::new(*ip, self.port)).collect());
        }
        Ok(tokio::net::lookup_host((host, self.port)).await?.collect())
    }
}

impl Resolve for EgressResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let resolver = Self {
            gate: self.gate.clone(),
            port: self.port,
            #[cfg(test)]
            fixed: self.fixed.clone(),
        };
        Box::pin(async move {
            let host = name.as_str();
            let resolved = resolver.lookup(host).await?;
            match allowed(resolver.gate.policy(), host, resolved) {
                Ok(addresses) => Ok(Box::new(addresses.into_iter()) as Addrs),
                Err(refusal) => Err(Box::new(refusal) as Box<dyn StdError + Send + Sync>),
            }
        })
    }
}

/// The addresses of `resolved` that `policy` allows, in their order.
///
/// # Errors
/// The [`EgressRefusal`] of the first address (counting the others) when every one is refused.
/// An empty answer is not a refusal: the connector reports it.
fn allowed(
    policy: &EgressPolicy,
    host: &str,
    resolved: Vec<SocketAddr>,
) -> Result<Vec<SocketAddr>, EgressRefusal> {
    let mut allowed = Vec::new();
    let mut refused: Option<EgressRefusal> = None;
    for address in resolved {
        match (policy.check(address), &mut refused) {
            (Ok(()), _) => allowed.push(address),
            (Err(_), Some(first)) => first.others += 1,
            (Err(rule), None) => refused = Some(EgressRefusal::new(Some(host.to_owned()), address, rule)),
        }
    }
    match refused {
        Some(refusal) if allowed.is_empty() => Err(refusal),
        _ => Ok(allowed),
    }
}

/// The egress refusal behind a `reqwest` error, if a resolution was refused.
pub(crate) fn refusal_in(error: &reqwest::Error) -> Option<EgressRefusal> {
    let mut source: Option<&(dyn StdError + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(refusal) = current.downcast_ref::<EgressRefusal>() {
            return Some(refusal.clone());
        }
        source = current.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ferrvault::EgressRule;

    fn endpoint(url: &str) -> Endpoint {
        Endpoint::parse(url).expect("valid URL")
    }

    #[test]
    fn an_ip_literal_endpoint_should_be_judged_at_its_port_and_a_name_left_to_the_resolver() {
        let gate = EgressGate::default();
        let refused = gate.admit(&endpoint("https://[::ffff:a9fe:a9fe]")).unwrap_err();
        assert_eq!(refused.address, "169.254.169.254:443".parse().unwrap());
        assert!(
            gate.admit(&endpoint("http://0x7f.1:8200")).is_err(),
            "the URL parser's IPv4 forms"
        );
        assert_eq!(gate.admit(&endpoint("https://203.0.113.7")), Ok(()));
        assert_eq!(gate.admit(&endpoint("https://localhost:8200")), Ok(()));
    }

    #[test]
    fn a_name_should_keep_only_its_allowed_addresses_and_be_refused_when_none_is() {
        let policy = EgressPolicy::from_flags(&["127.0.0.1/32".into()], &[]).unwrap();
        let at = |a: &str| -> SocketAddr { a.parse().unwrap() };
        assert_eq!(
            allowed(&policy, "vault", vec![at("[::1]:8200"), at("127.0.0.1:8200")]),
            Ok(vec![at("127.0.0.1:8200")])
        );
        let refusal = allowed(
            &policy,
            "vault",
            vec![at("169.254.169.254:80"), at("[::1]:80"), at("127.0.0.2:80")],
        )
        .unwrap_err();
        assert_eq!(
            (refusal.address, refusal.rule, refusal.others),
            (at("169.254.169.254:80"), EgressRule::CloudMetadata, 2)
        );
        assert_eq!(allowed(&policy, "vault", Vec::new()), Ok(Vec::new()));
    }

    /// A client built as the pool builds one, whose resolver answers `fixed` for every name.
    fn client_resolving_to(gate: EgressGate, port: u16, fixed: &[&str]) -> reqwest::Client {
        let resolver = EgressResolver {
            gate: Arc::new(gate),
            port,
            fixed: Some(fixed.iter().map(|ip| ip.parse().unwrap()).collect()),
        };
        reqwest::Client::builder()
            .no_proxy()
            .dns_resolver(resolver)
            .build()
            .expect("client")
    }

    /// Accepts connections on `ip`, counting them and answering each request `200 ok`.
    async fn counting_listener(ip: &str, port: u16) -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind((ip, port)).await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = count.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buffer = [0u8; 4096];
                    // The request is read and answered; a client gone early is fine.
                    if stream.read(&mut buffer).await.is_ok() {
                        let reply = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";
                        let _ = stream.write_all(reply.as_bytes()).await; // the test reads the count
                    }
                });
            }
        });
        (port, count)
    }

    #[tokio::test]
    async fn a_name_resolving_to_a_refused_and_an_allowed_address_should_connect_to_the_allowed_one_only() {
        let _ = rustls::crypto::ring::default_provider().install_default(); // first caller wins
        let (port, refused_hits) = counting_listener("::1", 0).await;
        let (_, allowed_hits) = counting_listener("127.0.0.1", port).await;
        let gate = EgressGate::new(EgressPolicy::from_flags(&["127.0.0.1/32".into()], &[]).unwrap());
        // IPv6 first, as glibc orders `localhost`: unfiltered, the connector would try it first.
        let client = client_resolving_to(gate, port, &["::1", "127.0.0.1"]);
        let answer = client
            .get(format!("http://vault.test:{port}/healthz"))
            .send()
            .await
            .expect("the allowed address answers");
        assert_eq!(answer.status(), 200);
        assert_eq!(
            refused_hits.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "::1 was connected to"
        );
        assert_eq!(allowed_hits.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_name_resolving_to_refused_addresses_only_should_fail_with_the_refusal_and_connect_nowhere() {
        let _ = rustls::crypto::ring::default_provider().install_default(); // first caller wins
        let (port, hits) = counting_listener("127.0.0.1", 0).await;
        let client = client_resolving_to(EgressGate::default(), port, &["127.0.0.1", "::1"]);
        let error = client
            .get(format!("http://vault.test:{port}/healthz"))
            .send()
            .await
            .expect_err("refused");
        let refusal = refusal_in(&error).expect("the refusal is found in the reqwest error");
        assert_eq!(
            (refusal.host.as_deref(), refusal.rule, refusal.others),
            (Some("vault.test"), EgressRule::Loopback, 1)
        );
        assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 0);
    }

    #[test]
    fn own_servers_should_be_refused_once_known_and_only_the_first_facts_count() {
        let gate = EgressGate::new(EgressPolicy::from_flags(&["127.0.0.1/32".into()], &[]).unwrap());
        let metrics = endpoint("http://127.0.0.1:9090");
        assert_eq!(
            gate.admit(&metrics),
            Ok(()),
            "allowed before the servers are known"
        );
        assert!(gate.know_own(&[], &["127.0.0.1:9090".parse().unwrap()]));
        assert!(!gate.know_own(&[], &[]), "set once");
        assert!(gate.admit(&metrics).is_err());
        assert_eq!(gate.admit(&endpoint("http://127.0.0.1:9091")), Ok(()));
    }
}
