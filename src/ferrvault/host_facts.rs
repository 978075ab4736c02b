//! What the operator knows of its own network position, for the egress policy: the addresses of
//! its network interfaces and where it reaches the Kubernetes API server. Read once at start.
//!
//! # Guarantees
//! - Neither function fails: what cannot be read is logged and left out (the built-in loopback
//!   and link-local denials still hold).
//!
//! # Caveats
//! A host name of the API server is resolved once, at start; the addresses behind the
//! `kubernetes` Service (the control plane's own) are not known to the operator.

use std::{
    io,
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
};

/// The addresses of every network interface of the host (the pod), IPv4 and IPv6.
pub fn own_interface_addresses() -> Vec<IpAddr> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs(3) stores the head of a list it allocated into `head`, freed below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        tracing::warn!(
            error = %io::Error::last_os_error(),
            "cannot list the network interfaces: the egress policy refuses loopback and link-local \
             but not the operator's other addresses"
        );
        return Vec::new();
    }
    let mut addresses = Vec::new();
    let mut cursor = head;
    while !cursor.is_null() {
        // SAFETY: a node of the list getifaddrs returned, alive until freeifaddrs.
        let entry = unsafe { &*cursor };
        // SAFETY: `ifa_addr` is null or points to a socket address of its `sa_family`.
        if let Some(ip) = unsafe { ip_of(entry.ifa_addr) }
            && !addresses.contains(&ip)
        {
            addresses.push(ip);
        }
        cursor = entry.ifa_next;
    }
    // SAFETY: the list getifaddrs returned, freed once; no reference into it is kept.
    unsafe { libc::freeifaddrs(head) };
    addresses
}

/// The IP address of an `AF_INET` or `AF_INET6` socket address; `None` for others.
///
/// # Safety
/// `address` is null or points to a socket address whose size matches its `sa_family`.
unsafe fn ip_of(address: *const libc::sockaddr) -> Option<IpAddr> {
    if address.is_null() {
        return None;
    }
    // SAFETY: non-null, and the family tells the size (the caller's promise).
    match libc::c_int::from(unsafe { (*address).sa_family }) {
        libc::AF_INET => {
            let v4 = unsafe { &*address.cast::<libc::sockaddr_in>() };
            Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr))))
        }
        libc::AF_INET6 => {
            let v6 = unsafe { &*address.cast::<libc::sockaddr_in6>() };
            Some(IpAddr::V6(Ipv6Addr::from(v6.sin6_addr.s6_addr)))
        }
        _ => None,
    }
}

/// Where the operator reaches the Kubernetes API server: `cluster_url` (its kubeconfig or
/// in-cluster configuration) and `KUBERNETES_SERVICE_HOST`:`KUBERNETES_SERVICE_PORT`, host
/// names resolved.
pub async fn api_server_endpoints(cluster_url: &http::Uri) -> Vec<SocketAddr> {
    let mut targets = Vec::new();
    if let Some(host) = cluster_url.host() {
        let default_port = if cluster_url.scheme_str() == Some("http") {
            80
        } else {
            443
        };
        targets.push((
            unbracketed(host).to_owned(),
            cluster_url.port_u16().unwrap_or(default_port),
        ));
    }
    if let Ok(host) = std::env::var("KUBERNETES_SERVICE_HOST") {
        let port = std::env::var("KUBERNETES_SERVICE_PORT")
            .ok()
            .and_then(|port| port.trim().parse().ok())
            .unwrap_or(443);
        targets.push((unbracketed(host.trim()).to_owned(), port));
    }
    let mut endpoints = Vec::new();
    for (host, port) in targets {
        match tokio::net::lookup_host((host.as_str(), port)).await {
            Ok(resolved) => endpoints.extend(resolved),
            Err(error) => tracing::warn!(
                %host,
                %error,
                "cannot resolve the API server: the egress policy does not know its addresses"
            ),
        }
    }
    endpoints.sort_unstable();
    endpoints.dedup();
    endpoints
}

/// An IPv6 host without its URL brackets.
fn unbracketed(host: &str) -> &str {
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_addresses_should_include_loopback() {
        let own = own_interface_addresses();
        assert!(own.contains(&IpAddr::V4(Ipv4Addr::LOCALHOST)), "{own:?}");
    }

    #[tokio::test]
    async fn the_api_server_should_be_known_at_its_url_port_or_scheme_default() {
        let at = |uri: &str| {
            let uri: http::Uri = uri.parse().unwrap();
            async move { api_server_endpoints(&uri).await }
        };
        let explicit = at("https://127.0.0.3:6443").await;
        assert!(
            explicit.contains(&"127.0.0.3:6443".parse().unwrap()),
            "{explicit:?}"
        );
        let default = at("https://[::1]").await;
        assert!(default.contains(&"[::1]:443".parse().unwrap()), "{default:?}");
        let named = at("http://localhost:8001").await;
        assert!(named.contains(&"127.0.0.1:8001".parse().unwrap()), "{named:?}");
    }
}
