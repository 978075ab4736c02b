//! Reporting an object that does not match its type ([`Lenient::Invalid`]), for both kinds.
//!
//! # Guarantees
//! - Status gets Ready=False/`InvalidSpec` with the object's generation, by a JSON merge patch
//!   of `status.conditions` on `/status` (the other status fields, such as the last good sync,
//!   stay as they were); an unchanged condition list is not written.
//! - One Warning Event with reason `InvalidSpec` (deduplicated like every Event).
//! - The message names the field and the expected type, never the value found there.
//! - No timer: only an edit fixes the object, and an edit is a new generation and a watch event.

use std::fmt::Debug;

use jiff::Timestamp;
use kube::{Api, Resource, ResourceExt, api::Patch};
use serde::de::DeserializeOwned;
use serde_json::json;
use tracing::warn;

use crate::reconcile::{
    context::Context,
    read::WrittenVersions,
    report::EventKind,
    rules::status::{
        conditions::{ConditionUpdate, upsert_condition},
        messages,
    },
};

use super::{KubeAction, KubeFailure};
use crate::api::{ConditionStatus, InvalidObject, Lenient, Reason};
use crate::reconcile::write::patch_params;

/// Writes `InvalidSpec` into the status of `invalid` (recording the version it produced in
/// `written`) and publishes its Event. The pass is then done with no timer: only an edit (a new
/// generation, a watch event) can fix the object.
///
/// # Errors
/// The status write failed.
pub(crate) async fn report<K>(
    ctx: &Context,
    (api, written): (&Api<Lenient<K>>, &WrittenVersions),
    invalid: &InvalidObject,
) -> Result<(), KubeFailure>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    let message = messages::invalid_spec(&invalid.problem);
    warn!(problem = %invalid.problem, "object does not match its type");
    let mut conditions = invalid.conditions.clone();
    upsert_condition(
        &mut conditions,
        ConditionUpdate::ready(
            ConditionStatus::False,
            Reason::InvalidSpec,
            message.clone(),
            invalid.metadata.generation,
        ),
        Timestamp::now(),
    );
    let object = Lenient::<K>::Invalid(invalid.clone());
    if conditions != invalid.conditions {
        let body = json!({ "status": { "conditions": conditions } });
        let written_now = api
            .patch_status(&object.name_any(), &patch_params(), &Patch::Merge(&body))
            .await
            .map_err(KubeFailure::during(KubeAction::WriteStatus("InvalidSpec")))?;
        written.record(written_now.meta());
    }
    ctx.events
        .publish(&object.object_ref(&()), EventKind::InvalidSpec, message);
    Ok(())
}
