//! The messages of a spec the operator cannot act on: a connection not found or invalid, a
//! refresh interval that does not parse or is below the operator's floor, an object that
//! bypassed the CRD schema.

use std::time::Duration;

use super::budget::bounded;
use crate::{api::SpecProblem, reconcile::rules::schedule::duration::format_go_duration};

/// Ready=False/`ConnectionNotFound`: `FerrVaultConnection "NAME": CAUSE`.
pub(crate) fn connection_not_found(name: &str, cause: &str) -> String {
    bounded(format_args!("FerrVaultConnection {name:?}: {cause}"))
}

/// Ready=False/`ConnectionNotFound` for a cluster connection:
/// `ClusterFerrVaultConnection "NAME": CAUSE`.
pub(crate) fn cluster_connection_not_found(name: &str, cause: &str) -> String {
    bounded(format_args!("ClusterFerrVaultConnection {name:?}: {cause}"))
}

/// Ready=False/`InvalidConnection` for a cluster connection stored past its schema.
pub(crate) fn cluster_connection_spec_invalid(name: &str, problem: &SpecProblem) -> String {
    bounded(format_args!(
        "ClusterFerrVaultConnection {name:?} has an invalid spec ({problem}); fix it (it bypassed the CRD schema)"
    ))
}

/// Ready=False/`ConnectionNotAllowed`: the namespace is not in the cluster connection's
/// `allowedNamespaces`.
pub(crate) fn connection_not_allowed(name: &str, namespace: &str) -> String {
    bounded(format_args!(
        "namespace {namespace:?} is not in the allowedNamespaces of ClusterFerrVaultConnection {name:?}: \
         nothing was read or written"
    ))
}

/// Ready=False/`TokenUnreadable`: the cluster connection's token Secret is in a namespace the
/// operator does not watch.
pub(crate) fn cluster_token_not_watched(name: &str, namespace: &str) -> String {
    bounded(format_args!(
        "the token Secret of ClusterFerrVaultConnection {name:?} is in namespace {namespace:?}, \
         which the operator does not watch (--watch-namespace): nothing was read"
    ))
}

/// Ready=False/`InvalidRefreshInterval`.
pub(crate) fn invalid_refresh_interval(cause: &str) -> String {
    bounded(format_args!("spec.refreshInterval: {cause}"))
}

/// Ready=False/`InvalidSpec`: "PATH: WHAT; fix the object (it bypassed the CRD schema)".
/// `problem` names a field and the expected type, never the value found there.
pub(crate) fn invalid_spec(problem: &SpecProblem) -> String {
    bounded(format_args!(
        "{problem}; fix the object (it bypassed the CRD schema)"
    ))
}

/// Secret Ready=False/`InvalidConnection` when the connection itself is `InvalidSpec`.
pub(crate) fn connection_spec_invalid(name: &str, problem: &SpecProblem) -> String {
    bounded(format_args!(
        "FerrVaultConnection {name:?} has an invalid spec ({problem}); fix it (it bypassed the CRD schema)"
    ))
}

/// `<Field>Clamped`=True/`BelowMinimum`: "refreshInterval 1s is below the operator's minimum of 30s;
/// refreshing every 30s".
pub(crate) fn interval_clamped(
    field: &str,
    activity: &str,
    requested: Duration,
    minimum: Duration,
) -> String {
    let minimum = format_go_duration(minimum);
    format!(
        "{field} {} is below the operator's minimum of {minimum}; {activity} every {minimum}",
        format_go_duration(requested)
    )
}
