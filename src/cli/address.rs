//! Bind addresses in the forms Kubernetes operators use: `:8080` (every interface, as in
//! controller-runtime), `127.0.0.1:8082`, `[::1]:8082`, `localhost:8082`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// Why a bind address is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value:?} is not a bind address ({problem}); use :PORT, IP:PORT or localhost:PORT")]
pub struct AddressError {
    /// The text given.
    pub value: String,
    /// What is wrong with it.
    pub problem: &'static str,
}

/// A parsed bind address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BindAddress(SocketAddr);

impl BindAddress {
    /// Parses `:PORT` (all IPv4 interfaces), `IP:PORT`, `[IPv6]:PORT` or `localhost:PORT`.
    ///
    /// # Errors
    /// Anything else, naming the problem.
    pub fn parse(value: &str) -> Result<Self, AddressError> {
        let fail = |problem| AddressError {
            value: value.to_owned(),
            problem,
        };
        let value = value.trim();
        if let Some(port) = value.strip_prefix(':') {
            let port = port
                .parse::<u16>()
                .map_err(|_| fail("the port is not a number 0-65535"))?;
            return Ok(Self(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port)));
        }
        if let Some(port) = value.strip_prefix("localhost:") {
            let port = port
                .parse::<u16>()
                .map_err(|_| fail("the port is not a number 0-65535"))?;
            return Ok(Self(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)));
        }
        value
            .parse::<SocketAddr>()
            .map(Self)
            .map_err(|_| fail("expected an IP address and a port"))
    }

    /// The socket address to bind.
    pub fn socket_addr(self) -> SocketAddr {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_port_should_mean_every_interface() {
        assert_eq!(
            BindAddress::parse(":8080").unwrap().socket_addr(),
            "0.0.0.0:8080".parse().unwrap()
        );
    }

    #[test]
    fn ip_ipv6_and_localhost_forms_should_parse() {
        for (input, expected) in [
            ("127.0.0.1:8082", "127.0.0.1:8082"),
            ("[::1]:9000", "[::1]:9000"),
            ("localhost:0", "127.0.0.1:0"),
            ("0.0.0.0:9102", "0.0.0.0:9102"),
        ] {
            assert_eq!(
                BindAddress::parse(input).unwrap().socket_addr(),
                expected.parse().unwrap(),
                "{input}"
            );
        }
    }

    #[test]
    fn malformed_addresses_should_be_refused_with_the_value() {
        for input in ["8080", ":http", ":70000", "example.com:80", "localhost", ""] {
            let error = BindAddress::parse(input).expect_err(input);
            assert!(error.to_string().contains(&format!("{input:?}")), "{error}");
        }
    }
}
