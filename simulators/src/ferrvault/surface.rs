//! What the simulated server offers besides its vaults: what a token's role lets it do, which
//! endpoints it lacks (an older FerrVault), and whether it speaks HTTPS. Part of
//! [`SimConfig`](super::SimConfig).

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a service-account token may do, weakest first (the CLI's `Role`: `viewer`, `writer`,
/// `admin`). Reading needs any role; creating, updating and deleting secrets need `writer`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads only (the default: what an operator's token needs).
    #[default]
    Viewer,
    /// Reads and writes secrets.
    Writer,
    /// Everything.
    Admin,
}

/// How the simulator answers an endpoint it is told not to serve, as an older server would:
/// one without the route (404), or one whose `/operator/secrets/{name}` route takes the path
/// with other methods only (405, e.g. `GET /operator/secrets/list` on a server with
/// update and delete but no list).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unserved {
    /// 404 `{"error":"Not Found"}`, like an unknown path.
    NotFound,
    /// 405 `{"error":"Method Not Allowed"}`, like a wrong method.
    MethodNotAllowed,
}

impl Unserved {
    /// The status answered.
    pub fn status(self) -> u16 {
        match self {
            Self::NotFound => 404,
            Self::MethodNotAllowed => 405,
        }
    }
}

/// HTTPS instead of plain HTTP, optionally requiring a client certificate (mTLS).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsSpec {
    /// The server's certificate chain, PEM (leaf first).
    pub cert_pem: String,
    /// The server's private key, PEM (not shown by `Debug`).
    pub key_pem: String,
    /// When set, a client must present a certificate chaining to one of these CAs (PEM), or
    /// the handshake fails and no request is read.
    #[serde(default)]
    pub client_ca_pem: Option<String>,
}

impl fmt::Debug for TlsSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsSpec")
            .field("cert_pem_bytes", &self.cert_pem.len())
            .field("key_pem", &"<redacted>")
            .field("requires_client_cert", &self.client_ca_pem.is_some())
            .finish()
    }
}
