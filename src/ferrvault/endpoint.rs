//! Where a FerrVault server is and how to trust it.
//!
//! An [`Endpoint`] is the key of the HTTP client pool: one pooled client per (base URL, TLS
//! settings). It is validated once, when built from the connection spec.

use std::{
    fmt,
    net::{IpAddr, SocketAddr},
    sync::Arc,
};

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::Url;

use super::{ClientIdentity, FerrVaultError, Pins};

/// Escaped in a path segment: everything but RFC 3986 unreserved characters.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// A validated FerrVault base URL plus its TLS settings.
///
/// # Guarantees
/// - The scheme is `http` or `https` (whether `http` may be used is the client's decision, see
///   [`Endpoint::is_plain_http`]), there is a host, no user info (a password in a URL
///   would end up in logs), no query and no fragment.
/// - The base URL has no trailing slash; endpoint paths are appended to it.
/// - An extra CA bundle, if any, parsed as PEM when it was set; a client identity, if any,
///   checked (chain, key, and that they match) when it was set.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// Normalised base URL, without a trailing slash.
    base_url: Arc<str>,
    /// Extra PEM CA bundle trusted in addition to the system roots. Part of the pool key, so
    /// two connections to one URL with different bundles never share a TLS client.
    extra_ca_pem: Option<Arc<[u8]>>,
    /// The client certificate presented (`clientCertSecretRef`). Part of the pool key, so a
    /// connection's identity is never presented for another connection.
    client_identity: Option<ClientIdentity>,
    /// The leaf certificates accepted (`pinSha256`). Part of the pool key.
    pins: Option<Pins>,
}

impl Endpoint {
    /// Validates a base URL (`spec.url`).
    ///
    /// # Errors
    /// [`FerrVaultError::InvalidEndpoint`] naming what is wrong.
    pub fn parse(url: &str) -> Result<Self, FerrVaultError> {
        let invalid = |why: &str| FerrVaultError::InvalidEndpoint(why.to_owned());
        let parsed = Url::parse(url.trim()).map_err(|e| invalid(&format!("not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(invalid("the scheme must be http or https"));
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(invalid("the URL has no host"));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(invalid(
                "the URL must not carry user info; use tokenSecretRef or oidc",
            ));
        }
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(invalid("the URL must not carry a query or a fragment"));
        }
        let base = parsed.as_str().trim_end_matches('/');
        Ok(Self {
            base_url: Arc::from(base),
            extra_ca_pem: None,
            client_identity: None,
            pins: None,
        })
    }

    /// Trusts the CA certificates of a PEM bundle in addition to the system roots.
    ///
    /// # Errors
    /// [`FerrVaultError::InvalidTls`] when the bundle holds no parseable certificate.
    pub fn with_extra_ca_pem(mut self, pem: &[u8]) -> Result<Self, FerrVaultError> {
        let certs = reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| FerrVaultError::InvalidTls(e.to_string()))?;
        if certs.is_empty() {
            return Err(FerrVaultError::InvalidTls(
                "the PEM bundle holds no certificate".into(),
            ));
        }
        self.extra_ca_pem = Some(Arc::from(pem));
        Ok(self)
    }

    /// Presents `identity` as the client certificate.
    #[must_use]
    pub fn with_client_identity(mut self, identity: ClientIdentity) -> Self {
        self.client_identity = Some(identity);
        self
    }

    /// Accepts only a server whose leaf certificate matches one of `pins`, besides the CA check.
    #[must_use]
    pub fn with_pins(mut self, pins: Pins) -> Self {
        self.pins = Some(pins);
        self
    }

    /// The client certificate, if any.
    pub(crate) fn client_identity(&self) -> Option<&ClientIdentity> {
        self.client_identity.as_ref()
    }

    /// The pins, if any.
    pub(crate) fn pins(&self) -> Option<&Pins> {
        self.pins.as_ref()
    }

    /// The base URL, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Whether the URL is plain `http://`: refused unless the operator opted in
    /// (`--allow-insecure-http`), since tokens and values would travel in clear.
    pub fn is_plain_http(&self) -> bool {
        self.base_url.starts_with("http://")
    }

    /// The port the URL names, or its scheme's default.
    pub(crate) fn port(&self) -> u16 {
        self.parsed().port_or_known_default().unwrap_or(443)
    }

    /// The socket address of an IP-literal host (`https://10.0.0.5:8443`, `http://[::1]`, and
    /// every IPv4 form the URL parser reads, such as `0x7f.1`), which the client connects to
    /// without resolving it; `None` for a host name.
    pub fn ip_literal(&self) -> Option<SocketAddr> {
        let url = self.parsed();
        // The parser writes an IP host in its canonical form, an IPv6 one in brackets.
        let host = url.host_str()?;
        let ip: IpAddr = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host)
            .parse()
            .ok()?;
        Some(SocketAddr::new(ip, url.port_or_known_default().unwrap_or(443)))
    }

    /// The base URL, parsed again (it was validated by [`Endpoint::parse`]).
    fn parsed(&self) -> Url {
        Url::parse(&self.base_url).expect("invariant violated: an Endpoint's base URL parses")
    }

    /// The extra CA bundle, if any.
    pub(crate) fn extra_ca_pem(&self) -> Option<&[u8]> {
        self.extra_ca_pem.as_deref()
    }

    /// `base_url` joined with path segments, each percent-escaped as exactly one segment
    /// (`/`, `?`, `#`, `%`, spaces and non-ASCII are escaped).
    ///
    /// # Errors
    /// [`FerrVaultError::InvalidRequest`] for an empty, `.` or `..` segment: URL parsers
    /// resolve those (even escaped as `%2E%2E`), so a vault named `..` could walk up the path.
    pub(crate) fn url(&self, segments: &[&str]) -> Result<Url, FerrVaultError> {
        let mut path = String::from(&*self.base_url);
        for segment in segments {
            if matches!(*segment, "" | "." | "..") {
                return Err(FerrVaultError::InvalidRequest(format!(
                    "a name must not be empty, \".\" or \"..\" (got {segment:?})"
                )));
            }
            path.push('/');
            path.extend(utf8_percent_encode(segment, SEGMENT));
        }
        Url::parse(&path).map_err(|e| FerrVaultError::InvalidRequest(e.to_string()))
    }
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("extra_ca", &self.extra_ca_pem.is_some())
            .field("client_identity", &self.client_identity.is_some())
            .field("pins", &self.pins.as_ref().map_or(0, Pins::len))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_should_accept_http_urls_and_drop_the_trailing_slash() {
        let ep = Endpoint::parse("https://vault.example.com/api/").unwrap();
        assert_eq!(ep.base_url(), "https://vault.example.com/api");
        assert_eq!(
            ep.url(&["healthz"]).unwrap().as_str(),
            "https://vault.example.com/api/healthz"
        );
        let root = Endpoint::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!(
            root.url(&["healthz"]).unwrap().as_str(),
            "http://127.0.0.1:8080/healthz"
        );
    }

    #[test]
    fn endpoint_should_refuse_other_schemes_user_info_and_queries() {
        for bad in [
            "ftp://x",
            "not a url",
            "http://user:pw@x",
            "http://x/?a=b",
            "http://x/#f",
        ] {
            assert!(Endpoint::parse(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn endpoint_should_escape_each_segment() {
        let ep = Endpoint::parse("http://x").unwrap();
        let url = ep.url(&["orgs", "a/b c?#%", "v.1", "ü"]).unwrap();
        assert_eq!(url.as_str(), "http://x/orgs/a%2Fb%20c%3F%23%25/v.1/%C3%BC");
        for bad in ["..", ".", ""] {
            assert!(
                ep.url(&["vaults", bad, "reveal"]).is_err(),
                "{bad:?} was accepted"
            );
        }
    }

    #[test]
    fn endpoint_should_know_its_port_and_an_ip_literal_host() {
        for (url, port, literal) in [
            ("https://vault.example.com/api", 443, None),
            ("http://vault.example.com:8200", 8200, None),
            ("https://10.0.0.5:8443", 8443, Some("10.0.0.5:8443")),
            ("http://2130706433", 80, Some("127.0.0.1:80")),
            (
                "https://[::ffff:a9fe:a9fe]",
                443,
                Some("[::ffff:169.254.169.254]:443"),
            ),
        ] {
            let ep = Endpoint::parse(url).unwrap();
            assert_eq!(ep.port(), port, "{url}");
            assert_eq!(ep.ip_literal(), literal.map(|a| a.parse().unwrap()), "{url}");
        }
    }

    #[test]
    fn endpoint_should_refuse_a_bundle_without_certificates() {
        let ep = Endpoint::parse("https://x").unwrap();
        assert!(ep.with_extra_ca_pem(b"not pem").is_err());
    }
}
