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
}

impl EgressResolver {
    pub(crate) fn new(gate: Arc<EgressGate>, endpoint: &Endpoint) -> Self {
        Self {
            gate,
            port: endpoint.port(),
        }
    }
}

impl Resolve for EgressResolver {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(allowed_addresses(
            self.gate.clone(),
            name.as_str().to_owned(),
            self.port,
        ))
    }
}

/// `host`'s addresses at `port` that the gate's policy allows.
///
/// # Errors
/// The lookup's failure; the [`EgressRefusal`] of the first address when every one is refused.
async fn allowed_addresses(
    gate: Arc<EgressGate>,
    host: String,
    port: u16,
) -> Result<Addrs, Box<dyn StdError + Send + Sync>> {
    let resolved = tokio::net::lookup_host((host.as_str(), port)).await?;
    let policy = gate.policy();
    let mut allowed = Vec::new();
    let mut refused: Option<EgressRefusal> = None;
    for address in resolved {
        match (policy.check(address), &mut refused) {
            (Ok(()), _) => allowed.push(address),
            (Err(_), Some(first)) => first.others += 1,
            (Err(rule), None) => refused = Some(EgressRefusal::new(Some(host.clone()), address, rule)),
        }
    }
    match refused {
        Some(refusal) if allowed.is_empty() => Err(Box::new(refusal)),
        _ => Ok(Box::new(allowed.into_iter())),
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
