//! Why the operator's cluster identity may not be used for a request: an error of its own file, so
//! the error type and the identity rules do not depend on each other.

use std::fmt;

/// Why the cluster identity may not be used for a request. Nothing was sent when this is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdentityRefusal {
    /// The operator runs without a cluster identity (`--oidc-cluster-id` unset).
    NotConfigured,
    /// The URL is not one of `--oidc-trusted-urls`.
    UntrustedUrl,
    /// The connection adds its own CA bundle, which could vouch for any host under a trusted name.
    TenantCaBundle,
    /// The request would not carry `X-FerrVault-Namespace` (ferrvault mode, or no namespace),
    /// so the server could not scope the cluster token to the namespace asking.
    NoNamespace,
}

impl IdentityRefusal {
    /// A fixed name for logs and metric labels (the condition reason the reconcilers report).
    pub fn reason(self) -> &'static str {
        match self {
            Self::NotConfigured | Self::NoNamespace => "ClusterIdentityUnavailable",
            Self::UntrustedUrl | Self::TenantCaBundle => "UntrustedUrl",
        }
    }
}

impl fmt::Display for IdentityRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotConfigured => "the operator has no cluster identity (--oidc-cluster-id is unset)",
            Self::UntrustedUrl => "the URL is not one of the operator's --oidc-trusted-urls",
            Self::TenantCaBundle => {
                "a connection's own CA bundle cannot vouch for the cluster identity's server"
            }
            Self::NoNamespace => "a cluster token is only sent with X-FerrVault-Namespace (cloud mode)",
        })
    }
}
