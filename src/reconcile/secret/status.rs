//! Writing FerrVaultSecret status: a JSON merge patch to the `/status` subresource (never a full
//! update, so it cannot conflict with spec edits). Every field is sent, so the patch replaces the
//! previous status exactly; an unchanged status is not written. What the status becomes is
//! decided by [`rules::secret_status`](crate::reconcile::rules::status::secret_status).

use kube::{Api, Resource, api::Patch};
use serde_json::json;

use crate::{
    api::{FerrVaultSecret, FerrVaultSecretStatus, Lenient},
    reconcile::{read::WrittenVersions, write::patch_params},
};

/// Writes `status` to `/status` unless it equals `previous`, and records the version it
/// produced in `written`. The API is lenient so the response still decodes if the object was
/// just edited into one that bypassed the schema.
///
/// # Errors
/// The API error.
pub(super) async fn write(
    (api, written): (&Api<Lenient<FerrVaultSecret>>, &WrittenVersions),
    name: &str,
    previous: &FerrVaultSecretStatus,
    status: &FerrVaultSecretStatus,
) -> Result<(), kube::Error> {
    if previous == status {
        return Ok(());
    }
    let object = api
        .patch_status(name, &patch_params(), &Patch::Merge(json!({ "status": status })))
        .await?;
    written.record(object.meta());
    Ok(())
}
