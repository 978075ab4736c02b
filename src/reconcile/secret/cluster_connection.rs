//! A FerrVaultSecret's ClusterFerrVaultConnection (`connectionRef.kind:
//! ClusterFerrVaultConnection`): found, checked against its bounds, its `allowedNamespaces`
//! matched against the FerrVaultSecret's namespace, and seen as the FerrVaultConnection the
//! rest of the sync reads (connection access, recorded inputs), so a cluster connection goes
//! through exactly the code a namespaced one does.
//!
//! # Guarantees
//! - A namespace the connection does not allow is refused (`ConnectionNotAllowed`) before any
//!   credential is read or anything is revealed or written, with no timer: the Namespace and
//!   ClusterFerrVaultConnection watches enqueue the FerrVaultSecret when that can change.
//! - The connection and the namespace's labels come from their watches' stores, never a GET: a
//!   connection or namespace the store does not show yet is "not found" / "not allowed" until
//!   its first sighting, which enqueues the FerrVaultSecret again.
//! - The view's namespace is the one its token Secret lives in (for `oidc`, the FerrVaultSecret's
//!   own: FerrVault then authorises each namespace separately); its name is
//!   `ClusterFerrVaultConnection/<name>`, which no namespaced object can be called, so it never
//!   shares a pooled client claim or an OIDC bearer with a FerrVaultConnection.

use kube::{ResourceExt, api::ObjectMeta};

use super::failure::{Failure, Stop};
use crate::{
    api::{ClusterFerrVaultConnection, FerrVaultConnection, FerrVaultSecret, Lenient, Reason, SpecProblem},
    reconcile::{
        connection::access::CLUSTER_VIEW_PREFIX,
        read::{Reads, Stores},
        rules::{
            access::namespace_match::selects,
            bounds::cluster_bounds::cluster_connection_spec_problem,
            schedule::{input_generation::cluster_input_generation, requeue::RequeueCase},
            status::messages,
        },
    },
};

/// `cr`'s cluster connection as a FerrVaultConnection, when it exists, is valid and allows
/// `cr`'s namespace.
///
/// # Errors
/// `ConnectionNotFound`, `InvalidConnection` (it bypassed its schema's bounds),
/// `ConnectionNotAllowed`, or `TokenUnreadable` when its token Secret's namespace is not watched
/// (`--watch-namespace`): nothing is read there.
pub(super) async fn cluster_connection(
    reads: &Reads,
    cr: &FerrVaultSecret,
) -> Result<FerrVaultConnection, Stop> {
    let namespace = cr.namespace().unwrap_or_default();
    let name = &cr.spec.connection_ref.name;
    let fail = |reason, message: String, case| Stop::Fail(Failure::new(reason, message, case));
    let stores = &reads.stores;
    let listed = async {
        stores.cluster_connections.wait_until_listed().await?;
        stores.namespaces.wait_until_listed().await
    };
    listed.await.map_err(|e| Stop::Unavailable {
        reason: CLUSTER_STORES_UNAVAILABLE,
        message: format!("the cluster kinds' watches: {e}"),
    })?;
    let found = stores.cluster_connections.get("", name).ok_or_else(|| {
        fail(
            Reason::ConnectionNotFound,
            messages::cluster_connection_not_found(name, "not found"),
            RequeueCase::Failed,
        )
    })?;
    let connection = match found.as_ref() {
        Lenient::Valid(connection) => connection,
        Lenient::Invalid(invalid) => {
            return Err(invalid_connection(name, &invalid.problem));
        }
    };
    if let Err(problem) = cluster_connection_spec_problem(&connection.spec) {
        return Err(invalid_connection(name, &problem));
    }
    // A namespace the store does not show yet (just created) is not allowed yet: its first
    // sighting by the Namespace watch enqueues this FerrVaultSecret again.
    let labels = stores
        .namespaces
        .get("", &namespace)
        .map(|meta| meta.metadata.labels.clone());
    let allowed = labels.is_some_and(|labels| {
        selects(
            &connection.spec.allowed_namespaces,
            &namespace,
            &labels.unwrap_or_default(),
        )
    });
    if !allowed {
        return Err(fail(
            Reason::ConnectionNotAllowed,
            messages::connection_not_allowed(name, &namespace),
            RequeueCase::Refused,
        ));
    }
    let view = as_connection(connection, &namespace);
    let home = view.namespace().unwrap_or_default();
    if connection.spec.token_secret_ref.is_some() && !stores.secret_metadata.covers(&home) {
        return Err(fail(
            Reason::TokenUnreadable,
            messages::cluster_token_not_watched(name, &home),
            RequeueCase::Refused,
        ));
    }
    Ok(view)
}

/// `cr`'s cluster connection as the stores hold it, only when it allows `cr`'s namespace as the
/// Namespace store shows it: what a pass with nothing due compares its recorded inputs with.
/// `None` whenever a store cannot tell (the sync then reads and reports).
pub(super) fn stored_cluster_connection(
    stores: &Stores,
    cr: &FerrVaultSecret,
) -> Option<FerrVaultConnection> {
    let namespace = cr.namespace().unwrap_or_default();
    let stored = stores.cluster_connections.get("", &cr.spec.connection_ref.name)?;
    let connection = stored.valid()?;
    cluster_connection_spec_problem(&connection.spec).ok()?;
    let meta = stores.namespaces.get("", &namespace)?;
    let labels = meta.metadata.labels.clone().unwrap_or_default();
    selects(&connection.spec.allowed_namespaces, &namespace, &labels)
        .then(|| as_connection(connection, &namespace))
}

/// ClusterFerrVaultConnection `name` as the store holds it, seen as the FerrVaultConnection its
/// users read through, when it is valid and has a token (the view is then the same from every
/// namespace): what its change-detection poller asks `list` through, with the same endpoint and
/// credential (so the same limiter) as its FerrVaultSecrets' reveals.
pub(crate) fn stored_view(stores: &Stores, name: &str) -> Option<FerrVaultConnection> {
    let stored = stores.cluster_connections.get("", name)?;
    let connection = stored.valid()?;
    cluster_connection_spec_problem(&connection.spec).ok()?;
    connection
        .spec
        .token_secret_ref
        .is_some()
        .then(|| as_connection(connection, ""))
}

/// `Outcome::Error` reason while the cluster kinds' stores cannot be read (shutdown).
const CLUSTER_STORES_UNAVAILABLE: &str = "ClusterStoresUnavailable";

/// The `InvalidConnection` stop of cluster connection `name`, stored past its schema.
fn invalid_connection(name: &str, problem: &SpecProblem) -> Stop {
    Stop::Fail(Failure::new(
        Reason::InvalidConnection,
        messages::cluster_connection_spec_invalid(name, problem),
        RequeueCase::Failed,
    ))
}

/// `connection` seen as a FerrVaultConnection used from `namespace` (see the module's
/// guarantees); its UID and generation are the cluster connection's (its input generation: a
/// suspend, a resume or an `allowedNamespaces` edit leaves it), so recorded inputs change with
/// it.
fn as_connection(connection: &ClusterFerrVaultConnection, namespace: &str) -> FerrVaultConnection {
    let (spec, references) = connection.spec.as_connection();
    let home = if spec.token_secret_ref.is_some() {
        references.token
    } else {
        namespace.to_owned()
    };
    let mut view = FerrVaultConnection::new(&view_name(&connection.name_any()), spec);
    view.metadata = ObjectMeta {
        name: view.metadata.name.take(),
        namespace: Some(home),
        uid: connection.metadata.uid.clone(),
        generation: cluster_input_generation(connection),
        ..ObjectMeta::default()
    };
    view
}

/// The view's name: `ClusterFerrVaultConnection/<name>`.
pub(crate) fn view_name(name: &str) -> String {
    format!("{CLUSTER_VIEW_PREFIX}{name}")
}
