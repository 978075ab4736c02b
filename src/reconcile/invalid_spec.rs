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

use controller_actors::Outcome;
use jiff::Timestamp;
use kube::{Api, Resource, ResourceExt, api::Patch};
use serde::de::DeserializeOwned;
use serde_json::json;
use tracing::warn;

use super::{
    conditions::{ConditionUpdate, upsert_condition},
    context::Context,
    events::EventKind,
    kube_errors::{api_error, kube_error_text},
    messages,
};
use crate::api::{ConditionStatus, InvalidObject, Lenient, Reason};
use crate::reconcile::field_manager::patch_params;

/// Writes `InvalidSpec` into the status of `invalid` and publishes its Event; returns the
/// pass's outcome: done with no timer, or the retried API-error outcome when the status write
/// failed.
pub async fn report<K>(ctx: &Context, api: &Api<Lenient<K>>, invalid: &InvalidObject) -> Outcome
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
        if let Err(e) = api
            .patch_status(&object.name_any(), &patch_params(), &Patch::Merge(&body))
            .await
        {
            return api_error(format!("update status with InvalidSpec: {}", kube_error_text(&e)));
        }
    }
    ctx.events
        .publish(&object.object_ref(&()), EventKind::InvalidSpec, message)
        .await;
    Outcome::done()
}
