//! The egress policy: which socket addresses a FerrVault URL may lead the operator to. A
//! tenant chooses `spec.url`, and the operator connects from its own network position (inside
//! the cluster, next to the API server, its own pod and the cloud's metadata service), so the
//! address a URL resolves to is judged before any connection is made (`egress_gate.rs` applies
//! it to the addresses actually used). Pure rules, no I/O.
//!
//! # Precedence
//! The first rule that applies decides:
//! 1. **Never a FerrVault**, whatever the flags say: one of the operator's own servers (metrics,
//!    probes, admin: its listening port on one of its own or loopback addresses), and the
//!    Kubernetes API server at the address and port the operator itself uses.
//! 2. **The flags**: of the `--ferrvault-allowed-cidrs` and `--ferrvault-denied-cidrs` entries
//!    containing the address, the most specific (longest prefix) decides; on a tie, denied wins.
//!    So `denied 10.0.0.0/8` with `allowed 10.96.7.7/32` reaches an in-cluster FerrVault and
//!    nothing else of the cluster.
//! 3. **Built-in denials**: unspecified (`0.0.0.0/8`, `::`), broadcast, multicast, cloud metadata
//!    addresses ([`CLOUD_METADATA`]), the API server's addresses on any port, loopback
//!    (`127.0.0.0/8`, `::1`), link-local (`169.254.0.0/16`, `fe80::/10`) and the operator's own
//!    interface addresses.
//! 4. Anything else is allowed.
//!
//! # Guarantees
//! - An IPv4-mapped IPv6 address (`::ffff:169.254.169.254`) is judged as the IPv4 address it
//!   reaches, in the rules and in the flags.
//! - A refusal names its rule and the address, never anything else of the request.
//!
//! # Caveats
//! The operator knows the API server by the URL it uses (kubeconfig or in-cluster) and
//! `KUBERNETES_SERVICE_HOST`; the control-plane endpoints behind the `kubernetes` Service are
//! not known to it: deny them with `--ferrvault-denied-cidrs` or a NetworkPolicy.

#[cfg(test)]
mod tests;

use std::{
    fmt,
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
};

use ipnet::IpNet;

/// Cloud metadata and credential services, refused by name so a refusal says what was asked.
/// Most are link-local (refused anyway); the others are not.
pub const CLOUD_METADATA: [IpAddr; 8] = [
    // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle: instance metadata.
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
    // AWS ECS task metadata and credentials.
    IpAddr::V4(Ipv4Addr::new(169, 254, 170, 2)),
    // AWS EKS Pod Identity agent.
    IpAddr::V4(Ipv4Addr::new(169, 254, 170, 23)),
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23)),
    // AWS instance metadata over IPv6.
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)),
    // Alibaba Cloud metadata.
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)),
    // Azure WireServer.
    IpAddr::V4(Ipv4Addr::new(168, 63, 129, 16)),
    // Oracle Cloud metadata (legacy address).
    IpAddr::V4(Ipv4Addr::new(192, 0, 0, 192)),
];

/// The rule that refused an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EgressRule {
    /// One of the operator's own servers (metrics, probes, admin). Never allowed.
    OwnServer,
    /// The Kubernetes API server, at the address and port the operator uses. Never allowed.
    ApiServer,
    /// The most specific `--ferrvault-denied-cidrs` entry containing the address.
    DeniedCidr(IpNet),
    /// `0.0.0.0/8` or `::`: the local host on most systems.
    Unspecified,
    /// `255.255.255.255`.
    Broadcast,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// One of [`CLOUD_METADATA`].
    CloudMetadata,
    /// An address of the Kubernetes API server, on another port.
    ApiServerAddress,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// An address of one of the operator's own network interfaces.
    OwnAddress,
}

impl EgressRule {
    /// Whether `--ferrvault-allowed-cidrs` can allow what this rule refuses.
    pub fn is_overridable(self) -> bool {
        !matches!(self, Self::OwnServer | Self::ApiServer | Self::DeniedCidr(_))
    }
}

impl fmt::Display for EgressRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OwnServer => f.write_str("one of the operator's own servers"),
            Self::ApiServer => f.write_str("the Kubernetes API server"),
            Self::DeniedCidr(net) => write!(f, "--ferrvault-denied-cidrs {net}"),
            Self::Unspecified => f.write_str("an unspecified address, the local host"),
            Self::Broadcast => f.write_str("the broadcast address"),
            Self::Multicast => f.write_str("a multicast address"),
            Self::CloudMetadata => f.write_str("a cloud metadata address"),
            Self::ApiServerAddress => f.write_str("an address of the Kubernetes API server"),
            Self::Loopback => f.write_str("a loopback address"),
            Self::LinkLocal => f.write_str("a link-local address"),
            Self::OwnAddress => f.write_str("one of the operator's own addresses"),
        }
    }
}

/// Why no connection was made to a FerrVault URL: the address refused and the rule, plus how
/// many other addresses the host resolved to were refused too.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct EgressRefusal {
    /// The host name resolved, or `None` for an IP-literal URL.
    pub host: Option<String>,
    /// The (first) address refused.
    pub address: SocketAddr,
    /// The rule that refused it.
    pub rule: EgressRule,
    /// Further addresses of `host`, all refused.
    pub others: usize,
}

impl EgressRefusal {
    /// The refusal of `address` (shown as the IPv4 address it reaches, when mapped) by `rule`.
    pub fn new(host: Option<String>, address: SocketAddr, rule: EgressRule) -> Self {
        Self {
            host,
            address: canonical(address),
            rule,
            others: 0,
        }
    }
}

impl fmt::Display for EgressRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            Some(host) => write!(f, "the FerrVault URL's host {host} resolves to {}", self.address)?,
            None => write!(f, "the FerrVault URL's address {}", self.address)?,
        }
        if self.others > 0 {
            write!(f, " (and {} more address(es), all refused)", self.others)?;
        }
        write!(
            f,
            ", refused by the operator's egress policy: {}; no connection was made",
            self.rule
        )?;
        if self.rule.is_overridable() {
            f.write_str(". If FerrVault really is there, the operator's administrators can allow it with --ferrvault-allowed-cidrs")?;
        }
        Ok(())
    }
}

/// The egress policy: the operator's flags and what it knows of its own network position.
/// The default refuses the built-in denials and allows everything else.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EgressPolicy {
    /// `--ferrvault-allowed-cidrs`.
    allowed: Vec<IpNet>,
    /// `--ferrvault-denied-cidrs`.
    denied: Vec<IpNet>,
    /// Where the operator reaches the Kubernetes API server (resolved at start).
    api_server: Vec<SocketAddr>,
    /// The addresses of the operator's network interfaces.
    own_addresses: Vec<IpAddr>,
    /// Where the operator's own servers listen (an unspecified address: every own address).
    own_servers: Vec<SocketAddr>,
}

impl EgressPolicy {
    /// The policy of `--ferrvault-allowed-cidrs` and `--ferrvault-denied-cidrs` (entries as
    /// [`parse_cidrs`] reads them).
    ///
    /// # Errors
    /// A message naming the flag and the entry that is not a CIDR or an IP address.
    pub fn from_flags(allowed: &[String], denied: &[String]) -> Result<Self, String> {
        Ok(Self {
            allowed: parse_cidrs("--ferrvault-allowed-cidrs", allowed)?,
            denied: parse_cidrs("--ferrvault-denied-cidrs", denied)?,
            ..Self::default()
        })
    }

    /// Adds where the operator reaches the Kubernetes API server.
    #[must_use]
    pub fn with_api_server(mut self, endpoints: impl IntoIterator<Item = SocketAddr>) -> Self {
        self.api_server.extend(endpoints.into_iter().map(canonical));
        self
    }

    /// Adds the operator's interface addresses and its servers' listening addresses.
    #[must_use]
    pub fn with_own(mut self, addresses: &[IpAddr], servers: &[SocketAddr]) -> Self {
        self.own_addresses
            .extend(addresses.iter().map(|ip| ip.to_canonical()));
        self.own_servers.extend(servers.iter().copied().map(canonical));
        self
    }

    /// `--ferrvault-allowed-cidrs`, normalised.
    pub fn allowed(&self) -> &[IpNet] {
        &self.allowed
    }

    /// `--ferrvault-denied-cidrs`, normalised.
    pub fn denied(&self) -> &[IpNet] {
        &self.denied
    }

    /// Judges one address a connection would go to.
    ///
    /// # Errors
    /// The rule refusing it (see the module's precedence).
    pub fn check(&self, to: SocketAddr) -> Result<(), EgressRule> {
        let to = canonical(to);
        if self.own_servers.iter().any(|server| self.reaches(*server, to)) {
            return Err(EgressRule::OwnServer);
        }
        if self.api_server.contains(&to) {
            return Err(EgressRule::ApiServer);
        }
        let ip = to.ip();
        let most_specific = |nets: &[IpNet]| {
            nets.iter()
                .filter(|net| net.contains(&ip))
                .max_by_key(|net| net.prefix_len())
                .copied()
        };
        match (most_specific(&self.allowed), most_specific(&self.denied)) {
            (Some(allowed), Some(denied)) if allowed.prefix_len() > denied.prefix_len() => return Ok(()),
            (_, Some(denied)) => return Err(EgressRule::DeniedCidr(denied)),
            (Some(_), None) => return Ok(()),
            (None, None) => {}
        }
        self.built_in_denial(ip).map_or(Ok(()), Err)
    }

    /// Whether a connection to `to` reaches the server listening on `server`.
    fn reaches(&self, server: SocketAddr, to: SocketAddr) -> bool {
        server.port() == to.port()
            && (server.ip() == to.ip()
                || to.ip().is_unspecified()
                || (server.ip().is_unspecified()
                    && (to.ip().is_loopback() || self.own_addresses.contains(&to.ip()))))
    }

    /// The built-in rule refusing `ip`, if any.
    fn built_in_denial(&self, ip: IpAddr) -> Option<EgressRule> {
        let rule = match ip {
            _ if ip.is_unspecified() || is_this_network(ip) => EgressRule::Unspecified,
            IpAddr::V4(v4) if v4.is_broadcast() => EgressRule::Broadcast,
            _ if ip.is_multicast() => EgressRule::Multicast,
            _ if CLOUD_METADATA.contains(&ip) => EgressRule::CloudMetadata,
            _ if self.api_server.iter().any(|server| server.ip() == ip) => EgressRule::ApiServerAddress,
            _ if ip.is_loopback() => EgressRule::Loopback,
            IpAddr::V4(v4) if v4.is_link_local() => EgressRule::LinkLocal,
            IpAddr::V6(v6) if v6.is_unicast_link_local() => EgressRule::LinkLocal,
            _ if self.own_addresses.contains(&ip) => EgressRule::OwnAddress,
            _ => return None,
        };
        Some(rule)
    }
}

/// `0.0.0.0/8`: "this host on this network", which Linux connects to locally.
fn is_this_network(ip: IpAddr) -> bool {
    matches!(ip, IpAddr::V4(v4) if v4.octets()[0] == 0)
}

/// `to` with an IPv4-mapped IPv6 address replaced by the IPv4 address it reaches.
fn canonical(to: SocketAddr) -> SocketAddr {
    SocketAddr::new(to.ip().to_canonical(), to.port())
}

/// Parses a flag's comma-separated entries (already split): CIDRs (`10.0.0.0/8`, `fd00::/8`) or
/// single addresses (`203.0.113.7`, a /32 or /128). Blank entries are skipped; host bits are
/// cleared (`10.1.2.3/8` is `10.0.0.0/8`); an IPv4-mapped IPv6 CIDR becomes the IPv4 one.
///
/// # Errors
/// A message naming `flag` and the first entry that is neither.
pub(super) fn parse_cidrs(flag: &str, entries: &[String]) -> Result<Vec<IpNet>, String> {
    entries
        .iter()
        .map(|entry| entry.trim())
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            entry
                .parse::<IpNet>()
                .or_else(|_| entry.parse::<IpAddr>().map(IpNet::from))
                .map(|net| unmapped(net.trunc()))
                .map_err(|_| format!("{flag}: {entry:?} is not a CIDR (10.0.0.0/8) or an IP address"))
        })
        .collect()
}

/// `::ffff:a.b.c.d/n` (n ≥ 96) as `a.b.c.d/(n-96)`, so it matches the canonical addresses.
fn unmapped(net: IpNet) -> IpNet {
    match net {
        IpNet::V6(v6) if v6.prefix_len() >= 96 => v6.addr().to_ipv4_mapped().map_or(net, |v4| {
            IpNet::new(IpAddr::V4(v4), v6.prefix_len() - 96).unwrap_or(net)
        }),
        _ => net,
    }
}
