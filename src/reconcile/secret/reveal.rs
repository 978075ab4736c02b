//! The reveal step: connection, endpoint and credential, cloud-scope guard, then the paced,
//! single-flight reveal through the shared client, shared with the other FerrVaultSecrets of
//! its wave.

use kube::{Api, ResourceExt};
use tokio::time::Instant;

use super::{
    cluster_connection,
    failure::{Failure, Stop, reveal_failure},
};
use crate::{
    api::{ConnectionKind, ConnectionMode, FerrVaultConnection, FerrVaultSecret, Lenient, Reason},
    ferrvault::{KeySelector, RevealRequest, RevealScope, Revealed},
    reconcile::{
        connection::access,
        context::Context,
        read::{self, Reads},
        rules::{
            access::guards::missing_cloud_scope, bounds::spec_bounds::connection_spec_problem,
            schedule::requeue::RequeueCase, status::messages,
        },
        write::kube_error_text,
    },
};

/// `cr`'s connection, from the store of the watch that enqueues `cr` for its changes (read with a
/// GET when that store does not hold it); a ClusterFerrVaultConnection as the view
/// [`cluster_connection`] makes of it.
///
/// # Errors
/// `ConnectionNotFound`, `ConnectionNotAllowed` (a cluster connection), or `InvalidConnection` when the connection does not match its type or
/// exceeds a bound of its schema (it bypassed the CRD schema).
pub(super) async fn connection(
    ctx: &Context,
    reads: &Reads,
    cr: &FerrVaultSecret,
) -> Result<FerrVaultConnection, Stop> {
    if cr.spec.connection_ref.kind == ConnectionKind::ClusterFerrVaultConnection {
        return cluster_connection::cluster_connection(reads, cr).await;
    }
    let namespace = cr.namespace().unwrap_or_default();
    let connection_name = &cr.spec.connection_ref.name;
    let api = Api::<Lenient<FerrVaultConnection>>::namespaced(ctx.client.clone(), &namespace);
    let not_found = |why: String| {
        Failure::new(
            Reason::ConnectionNotFound,
            messages::connection_not_found(connection_name, &why),
            RequeueCase::Failed,
        )
    };
    let connection = read::find(&reads.stores.connections, &api, &namespace, connection_name)
        .await
        .map_err(|e| not_found(kube_error_text(&e)))?
        .ok_or_else(|| not_found(NOT_FOUND.to_owned()))?;
    let problem = match connection {
        Lenient::Valid(connection) => match connection_spec_problem(&connection.spec) {
            Ok(()) => return Ok(connection),
            Err(problem) => problem,
        },
        Lenient::Invalid(invalid) => invalid.problem,
    };
    Err(Failure::new(
        Reason::InvalidConnection,
        messages::connection_spec_invalid(connection_name, &problem),
        RequeueCase::Failed,
    )
    .into())
}

/// What a GET of a missing object answers, as `kube_error_text` words it.
const NOT_FOUND: &str = "not found";

/// How fresh a pass's reveal must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Freshness {
    /// Shared with its wave: a kept answer may serve it.
    Wave,
    /// Read now (a forced pass): it joins a request in flight, never takes a kept answer.
    Now,
    /// Read since this instant (when the change hints that marked it were gathered): it shares
    /// the read of the other passes of the same hints, never an older one.
    Since(Instant),
}

/// Reveals `cr`'s keys through `connection` before `deadline`: shared with its wave
/// ([`FerrVault::reveal_in_wave`](crate::ferrvault::FerrVault::reveal_in_wave)), or, when
/// forced, read fresh ([`FerrVault::reveal`](crate::ferrvault::FerrVault::reveal): it joins a
/// request in flight but never takes a kept answer), or, after a change hint, read since the
/// hint ([`FerrVault::reveal_in_wave_fresh_after`](crate::ferrvault::FerrVault::reveal_in_wave_fresh_after)).
/// All wait on the credential's limiter.
///
/// # Errors
/// The connection's access reasons (its spec refusals without a timer: only an edit of the
/// connection fixes them), `MissingCloudScope` (no API call), the mapped reveal failures, or the
/// rate-limited stop.
pub(super) async fn reveal(
    ctx: &Context,
    reads: &Reads,
    cr: &FerrVaultSecret,
    connection: &FerrVaultConnection,
    (deadline, freshness): (Instant, Freshness),
) -> Result<Revealed, Stop> {
    let namespace = cr.namespace().unwrap_or_default();
    let refused = |e: access::AccessError| {
        let case = if e.is_spec_refusal() {
            RequeueCase::InvalidSpec
        } else {
            RequeueCase::Failed
        };
        Failure::new(e.reason, e.message, case)
    };
    let endpoint = access::endpoint(&reads.values, &ctx.ferrvault, connection)
        .await
        .map_err(refused)?;
    let credential = access::credential(&reads.values, &ctx.ferrvault, connection, &endpoint, deadline)
        .await
        .map_err(refused)?;
    let mode = connection.spec.mode;
    let organization = connection.spec.organization.clone();
    if missing_cloud_scope(mode, organization.as_deref(), cr.spec.project.as_deref()) {
        return Err(Failure::new(
            Reason::MissingCloudScope,
            messages::MISSING_CLOUD_SCOPE,
            RequeueCase::Failed,
        )
        .into());
    }
    let scope = match mode {
        ConnectionMode::Ferrvault => RevealScope::FerrVault,
        ConnectionMode::Cloud => RevealScope::Cloud {
            organization: organization.unwrap_or_default(),
            project: cr.spec.project.clone().unwrap_or_default(),
            namespace: namespace.clone(),
        },
    };
    let request = RevealRequest {
        scope,
        vault: cr.spec.vault.clone(),
        keys: KeySelector::from_names(cr.spec.selected_names().iter().cloned()),
    };
    let caller = cr.uid().unwrap_or_default();
    let revealed = match freshness {
        Freshness::Now => {
            ctx.ferrvault
                .reveal(&endpoint, &credential, request, deadline)
                .await
        }
        Freshness::Wave => {
            ctx.ferrvault
                .reveal_in_wave(&caller, &endpoint, &credential, request, deadline)
                .await
        }
        Freshness::Since(since) => {
            ctx.ferrvault
                .reveal_in_wave_fresh_after(&caller, &endpoint, &credential, request, (deadline, since))
                .await
        }
    };
    revealed.map_err(reveal_failure)
}
