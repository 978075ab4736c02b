//! The messages of reaching FerrVault through a connection (reachable, redirected, refused URLs,
//! the cluster identity, credentials not opted in) and of a connection's blocked deletion.

use super::budget::{bounded, first_names};
use crate::reconcile::rules::access::credential_opt_in::{
    CREDENTIAL_LABEL, CREDENTIAL_LABEL_VALUE, CREDENTIAL_TYPE_PREFIX,
};

/// How many dependants a `DeletionBlocked` message names before summarising the rest.
pub(crate) const DELETION_BLOCKED_NAMES_SHOWN: usize = 5;

/// Connection Ready=True/`Reachable`: "URL responded to /healthz", with any `user:password@`
/// in the URL replaced by `<redacted>@` so a credential embedded in `spec.url` never reaches status.
pub(crate) fn reachable(url: &str) -> String {
    bounded(format_args!("{} responded to /healthz", redact_userinfo(url)))
}

/// `url` with the userinfo part of its authority (before the last `@`) replaced by `<redacted>`.
pub(crate) fn redact_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_len].rfind('@') {
        Some(at) => format!("{scheme}://<redacted>{}", &rest[at..]),
        None => url.to_owned(),
    }
}

/// Ready=False/`InsecureUrl`.
pub(crate) const INSECURE_URL: &str = "spec.url is plain http://, refused: tokens and values would travel in clear \
     and the operator was not started with --allow-insecure-http; nothing was sent. Use https://";

/// Ready=False/`Redirected`: "FerrVault answered the WHAT with STATUS (a redirect) …".
pub(crate) fn redirected(what: &str, status: u16) -> String {
    format!(
        "FerrVault answered the {what} with {status} (a redirect): redirects are never followed, so \
         nothing was sent to the location it named; point spec.url at the final address"
    )
}

/// Ready=False/`UntrustedUrl`: the cluster identity goes to the operator's trusted URLs only.
pub(crate) const UNTRUSTED_URL: &str = "spec.url is not one of the operator's trusted FerrVault URLs \
     (--oidc-trusted-urls): the cluster identity is only sent there; nothing was sent";

/// Ready=False/`UntrustedUrl` for a connection that adds its own CA bundle.
pub(crate) const CLUSTER_IDENTITY_WITH_CA_BUNDLE: &str = "a connection using the cluster identity cannot set \
     caBundleSecretRef: its own CA could vouch for any host under the trusted name; nothing was sent";

/// Ready=False/`ClusterIdentityMismatch`: `FIELD` differs from the operator's `FLAG`.
pub(crate) fn cluster_identity_mismatch(field: &str, flag: &str) -> String {
    format!(
        "{field} differs from the operator's {flag} and is not used: the cluster identity is configured \
         by the operator; remove {field} (or set it to the operator's value)"
    )
}

/// Ready=False/`ClusterIdentityUnavailable` when the operator runs without one.
pub(crate) const CLUSTER_IDENTITY_NOT_CONFIGURED: &str = "spec.oidc asks for the cluster identity but the operator has none (--oidc-cluster-id is unset); \
     use tokenSecretRef, or ask the operator's administrators to configure it";

/// Ready=False/`ClusterIdentityUnavailable` for a connection outside cloud mode.
pub(crate) const CLUSTER_IDENTITY_NEEDS_CLOUD_MODE: &str = "the cluster identity works in mode cloud only: \
     a cluster token travels with the namespace (X-FerrVault-Namespace) the server scopes it to";

/// Ready=False/`CredentialNotOptedIn`: the `WHAT` (token, CA bundle) Secret `NAMESPACE/NAME` did
/// not opt in, and how its owner opts it in.
pub(crate) fn credential_not_opted_in(what: &str, namespace: &str, name: &str) -> String {
    format!(
        "{what} Secret {namespace}/{name} is not opted in as a FerrVault credential \
         (--require-credential-opt-in): its owner labels it {CREDENTIAL_LABEL}={CREDENTIAL_LABEL_VALUE} \
         (or gives it a {CREDENTIAL_TYPE_PREFIX}* type) to let connections use it; nothing was sent"
    )
}

/// Connection Ready=False/`DeletionBlocked`: "cannot delete: still referenced by N
/// FerrVaultSecret(s): [a b c d e] (and K more)"; `dependants` should be sorted for a stable text.
pub(crate) fn deletion_blocked(dependants: &[String]) -> String {
    let (shown, hidden) = first_names(dependants, DELETION_BLOCKED_NAMES_SHOWN);
    let more = match hidden {
        0 => String::new(),
        hidden => format!(" (and {hidden} more)"),
    };
    format!(
        "cannot delete: still referenced by {} FerrVaultSecret(s): [{shown}]{more}",
        dependants.len(),
    )
}
