//! The payload of a sync: the revealed values through `spec.transforms` and `target.template`,
//! no larger than a Secret may hold, computed off the async runtime; and the missing-keys guard,
//! which keeps an existing target as it is while requested keys are missing.

use k8s_openapi::api::core::v1::Secret;

use super::failure::{Failure, Stop};
use crate::{
    api::{FerrVaultSecret, FerrVaultSecretSpec, Reason},
    ferrvault::{MissingKeys, Revealed},
    reconcile::rules::{
        access::guards::{MissingKeysDecision, missing_keys_decision},
        content::{RenderError, SecretData, render_target, secret_data_from_strings},
        schedule::requeue::RequeueCase,
        status::messages,
    },
};

/// `Outcome::Error` reason when the runtime shut down before the payload was computed.
const SHUTTING_DOWN: &str = "ShuttingDown";

/// The values to write: transformed, and the keys FerrVault did not have.
pub(super) struct Payload {
    /// The transformed values.
    pub(super) data: SecretData,
    /// The requested keys FerrVault did not have.
    pub(super) missing: MissingKeys,
}

/// The revealed values through `spec.transforms` and `target.template`, no larger than a Secret
/// may be, computed on a
/// blocking thread ([`tokio::task::spawn_blocking`]) rather than the async runtime's: the work
/// is bounded (no transform step builds more than [`MAX_SECRET_BYTES`], jsonExpand is capped,
/// the reveal has its own caps) but it is CPU work proportional to what a tenant's FerrVault
/// answers, so it never delays Lease renewal, probes or another tenant's reconcile.
///
/// The worst case the bounds allow (test `rules::content::transforms::tests::
/// the_worst_pipeline_the_bounds_allow_should_stay_bounded`: 32 `base64Decode` steps over a
/// 1 MiB content of 160,000 keys) took 0.85 s optimised (4.7 s in the test build) on a shared
/// 2-core machine under load. The content hashes [`plan`](super::plan::plan) computes from the
/// result stay on the runtime: bounded by the 1 MiB checked here, the same test's two (that
/// content, and one 1 MiB value) took 28 ms together, optimised and under the same load.
///
/// # Panics
/// Re-raises a panic of the computation, as if it had run inline.
pub(super) async fn payload(cr: &FerrVaultSecret, revealed: Revealed, target: &str) -> Result<Payload, Stop> {
    let spec = cr.spec.clone();
    let target = target.to_owned();
    let computed = tokio::task::spawn_blocking(move || rendered(revealed, &spec, &target)).await;
    match computed {
        Ok(payload) => payload,
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        Err(_) => Err(Stop::Unavailable {
            reason: SHUTTING_DOWN,
            message: "the runtime shut down before the payload was computed".to_owned(),
        }),
    }
}

/// [`payload`]'s computation: [`render_target`] (transforms, template, size check).
fn rendered(revealed: Revealed, spec: &FerrVaultSecretSpec, target: &str) -> Result<Payload, Stop> {
    let raw = secret_data_from_strings(revealed.secrets.into_iter().map(|(k, v)| (k, v.into_exposed())));
    let data = render_target(spec, raw).map_err(|error| {
        let message = match &error {
            RenderError::TooLarge { size, limit } => messages::secret_too_large(*size, *limit, target),
            RenderError::Transform(_) | RenderError::Template(_) => error.to_string(),
        };
        Failure::new(error.reason(), message, RequeueCase::Failed)
    })?;
    Ok(Payload {
        data: data.data,
        missing: revealed.missing,
    })
}

/// Missing keys never overwrite an existing target (reference §3.2 guard): the pass stops with
/// `MissingKeys` and the keys recorded.
pub(super) fn guard_missing_keys(
    payload: &Payload,
    existing: Option<&Secret>,
    target: &str,
) -> Result<(), Stop> {
    if missing_keys_decision(payload.missing.names(), existing.is_some(), &payload.data)
        != MissingKeysDecision::LeaveTargetUnchanged
    {
        return Ok(());
    }
    let mut failure = Failure::new(
        Reason::MissingKeys,
        messages::missing_keys_target_unchanged(&payload.missing, target),
        RequeueCase::KeysMissing,
    );
    failure.missing = Some(payload.missing.clone());
    Err(failure.into())
}

#[cfg(test)]
mod tests;
