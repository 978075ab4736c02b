//! The token step of a connection's probe (issue 38 point 5): after `GET /healthz` succeeded,
//! ask `GET /operator/me` what the service-account token is, and write its expiry and role into
//! the status, the `TokenHealthy` condition, the expiry gauge and, when it starts to expire
//! within 7 days, a Warning Event.
//!
//! # Guarantees
//! - Only a ferrvault-mode connection with a service-account token is asked (`me` is a
//!   ferrvault-mode endpoint; a cluster bearer never goes to it).
//! - A server without `me` (404 or 405) is reported once (`TokenHealthy=Unknown`/`Unsupported`)
//!   and not asked again at the same generation.
//! - A 2xx answer it cannot use (over its 64 KiB bound, malformed) is reported as
//!   `TokenHealthy=Unknown` with `ResponseTooLarge` or `Unreachable` and the client's words
//!   (issue 38: a hostile `me`); the expiry and role last known stay.
//! - Any other failure of `me` (429, 5xx, transport, a timeout) changes nothing: the token's
//!   last known state stays, and `Ready` is the probe's alone.

use jiff::Timestamp;
use kube::{Resource, ResourceExt};
use tokio::time::Instant;
use tracing::info;

use crate::{
    api::{ConnectionMode, FerrVaultConnection, FerrVaultConnectionStatus, Reason},
    ferrvault::{Credential, Endpoint, FerrVaultError},
    reconcile::{
        context::Context,
        report::EventKind,
        rules::status::token_health::{self, TokenReport},
    },
};

/// Asks `me` when it should be asked and writes what it said into `status`.
pub(crate) async fn check(
    ctx: &Context,
    connection: &FerrVaultConnection,
    (endpoint, credential): (&Endpoint, &Credential),
    status: &mut FerrVaultConnectionStatus,
    deadline: Instant,
) {
    let generation = connection.meta().generation;
    let is_service_account = connection.spec.mode == ConnectionMode::Ferrvault && !credential.is_cluster();
    if !is_service_account || token_health::is_known_unsupported(status, generation) {
        return;
    }
    let report = match ctx.ferrvault.me(endpoint, credential, deadline).await {
        Ok(info) => TokenReport::Known(info),
        Err(error) if error.is_unsupported() => TokenReport::Unsupported,
        // A 2xx answer the operator cannot use is the server's doing, not a passing failure.
        Err(error @ (FerrVaultError::ResponseTooLarge(_) | FerrVaultError::Decode(_))) => {
            TokenReport::Unanswered {
                reason: if error.is_response_too_large() {
                    Reason::ResponseTooLarge
                } else {
                    Reason::Unreachable
                },
                message: error.to_string(),
            }
        }
        Err(error) => {
            info!(
                reason = error.reason(),
                "GET /operator/me failed, token state left as it was"
            );
            return;
        }
    };
    let warning = token_health::apply(status, &report, generation, Timestamp::now());
    let (namespace, name) = (connection.namespace().unwrap_or_default(), connection.name_any());
    ctx.metrics
        .set_token_expiry(&namespace, &name, status.token_expires_at.as_ref().map(|t| t.0));
    if let Some(message) = warning {
        ctx.events
            .publish(&connection.object_ref(&()), EventKind::TokenExpiresSoon, message);
    }
}
