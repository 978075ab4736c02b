//! The reveal step: connection, endpoint and credential, cloud-scope guard, then the paced,
//! single-flight reveal through the shared client.

use kube::{Api, ResourceExt};
use tokio::time::Instant;

use super::failure::{Failure, Stop, reveal_failure};
use crate::{
    api::{ConnectionMode, FerrVaultConnection, FerrVaultSecret, Lenient, Reason},
    ferrvault::{KeySelector, RevealRequest, RevealScope, Revealed},
    reconcile::{
        context::Context,
        kube_errors::kube_error_text,
        rules::guards::{RequeueCase, missing_cloud_scope},
        rules::messages,
        token,
    },
};

/// Reads `cr`'s connection and reveals its keys before `deadline`.
///
/// # Errors
/// `ConnectionNotFound`, `InvalidConnection` when the connection does not match its type
/// (it bypassed the CRD schema), the connection's access reasons (its spec refusals without a
/// timer: only an edit of the connection fixes them), `MissingCloudScope` (no API call),
/// the mapped reveal failures, or the rate-limited stop.
pub(super) async fn reveal(ctx: &Context, cr: &FerrVaultSecret, deadline: Instant) -> Result<Revealed, Stop> {
    let namespace = cr.namespace().unwrap_or_default();
    let connection_name = &cr.spec.connection_ref.name;
    let connection = Api::<Lenient<FerrVaultConnection>>::namespaced(ctx.client.clone(), &namespace)
        .get(connection_name)
        .await
        .map_err(|e| {
            Failure::new(
                Reason::ConnectionNotFound,
                messages::connection_not_found(connection_name, &kube_error_text(&e)),
                RequeueCase::Failed,
            )
        })?;
    let connection = match connection {
        Lenient::Valid(connection) => connection,
        Lenient::Invalid(invalid) => {
            return Err(Failure::new(
                Reason::InvalidConnection,
                messages::connection_spec_invalid(connection_name, &invalid.problem),
                RequeueCase::Failed,
            )
            .into());
        }
    };
    let access = |e: token::AccessError| {
        let case = if e.is_spec_refusal() {
            RequeueCase::InvalidSpec
        } else {
            RequeueCase::Failed
        };
        Failure::new(e.reason, e.message, case)
    };
    let endpoint = token::endpoint(&ctx.client, &ctx.ferrvault, &connection)
        .await
        .map_err(access)?;
    let credential = token::credential(&ctx.client, &ctx.ferrvault, &connection, &endpoint, deadline)
        .await
        .map_err(access)?;
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
    ctx.ferrvault
        .reveal(&endpoint, &credential, request, deadline)
        .await
        .map_err(reveal_failure)
}
