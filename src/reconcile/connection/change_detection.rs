//! The change-detection step of a connection's pass (a FerrVaultConnection's or a
//! ClusterFerrVaultConnection's): start, keep or stop its poller (`changes/`), and write its
//! `ChangeDetection` condition.
//!
//! # Guarantees
//! - No poller for a suspended connection, a `Poll` one, or one in cloud mode (the cloud API
//!   has no `list`: `ChangeDetection=False`/`Unsupported`, see docs/change-detection.md).
//! - A server found without `list` (`ChangeDetection=False`/`Unsupported` at this generation)
//!   is not asked again until the spec changes, across restarts too (the status says so).
//! - Without `changeDetection: {mode: Versions}` the condition is absent: the status is as
//!   before.

use std::{sync::Arc, time::Duration};

use controller_actors::ObjectKey;
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{Resource, ResourceExt};
use tracing::warn;

use crate::{
    api::{
        ChangeDetectionMode, ClusterFerrVaultConnection, ConditionStatus, ConditionType, ConnectionMode,
        DEFAULT_CHANGE_INTERVAL, FerrVaultConnection, FerrVaultConnectionSpec, FerrVaultConnectionStatus,
        MIN_CHANGE_INTERVAL, Reason,
    },
    reconcile::{
        changes::{self, ConnectionId, Plan, PollSpec, Standing},
        context::Context,
        read::Reads,
        rules::{
            schedule::duration::parse_go_duration,
            status::conditions::{ConditionUpdate, find_condition, remove_condition, upsert_condition},
        },
        settings::CONNECTION_CONTROLLER,
    },
};

/// Starts, keeps or stops `connection`'s poller, and brings the `ChangeDetection` condition of
/// `status` up to date. Whether `status` changed.
pub(super) fn follow(
    ctx: &Arc<Context>,
    reads: &Arc<Reads>,
    connection: &FerrVaultConnection,
    status: &mut FerrVaultConnectionStatus,
) -> bool {
    let (namespace, name) = (connection.namespace().unwrap_or_default(), connection.name_any());
    let own = ObjectKey::namespaced(CONNECTION_CONTROLLER, &namespace, &name);
    let followed = Followed {
        id: (namespace, name),
        own,
        spec: &connection.spec,
        generation: connection.meta().generation,
    };
    follow_spec(ctx, reads, &followed, &mut status.conditions)
}

/// [`follow`] for a ClusterFerrVaultConnection (`own`: its key): one poller for the whole
/// connection, whichever namespaces use it; its condition goes into `conditions`.
pub(super) fn follow_cluster(
    ctx: &Arc<Context>,
    reads: &Arc<Reads>,
    (connection, own): (&ClusterFerrVaultConnection, ObjectKey),
    conditions: &mut Vec<Condition>,
) -> bool {
    let (spec, _) = connection.spec.as_connection();
    let followed = Followed {
        id: changes::cluster_id(&connection.name_any()),
        own,
        spec: &spec,
        generation: connection.metadata.generation,
    };
    follow_spec(ctx, reads, &followed, conditions)
}

/// A connection of either kind, as change detection sees it.
struct Followed<'a> {
    /// Its id in the feed.
    id: ConnectionId,
    /// Its own key, queued when its condition must change.
    own: ObjectKey,
    /// Its spec (a ClusterFerrVaultConnection's as a FerrVaultConnection's).
    spec: &'a FerrVaultConnectionSpec,
    /// Its `metadata.generation`.
    generation: Option<i64>,
}

/// The step itself, for either kind (see [`follow`]).
fn follow_spec(
    ctx: &Arc<Context>,
    reads: &Arc<Reads>,
    followed: &Followed<'_>,
    conditions: &mut Vec<Condition>,
) -> bool {
    let Followed {
        id, spec, generation, ..
    } = followed;
    let generation = *generation;
    let versions = spec.change_mode() == ChangeDetectionMode::Versions && !spec.is_suspended();
    let cloud = spec.mode == ConnectionMode::Cloud;
    let leading = versions && !cloud && ctx.changes.leads_or_waits(&followed.own);
    let wanted = leading.then(|| PollSpec {
        interval: interval(spec),
        generation,
    });
    let known_unsupported = find_condition(conditions, ConditionType::ChangeDetection)
        .is_some_and(|c| c.observed_generation == generation && c.reason == Reason::Unsupported.as_str());
    if ctx.changes.plan(id, wanted, known_unsupported) == Plan::Start
        && let Some(wanted) = wanted
    {
        changes::spawn(ctx, reads, (id.clone(), followed.own.clone()), wanted);
    }
    let before = conditions.clone();
    let update = |status: ConditionStatus, reason: Reason, message: &str| ConditionUpdate {
        type_: ConditionType::ChangeDetection,
        status,
        reason,
        message: message.to_owned(),
        observed_generation: generation,
    };
    let condition = match (versions, cloud, ctx.changes.standing(id)) {
        (false, _, _) => None,
        (true, true, _) => Some(update(ConditionStatus::False, Reason::Unsupported, CLOUD)),
        (true, false, Standing::Unsupported) => {
            Some(update(ConditionStatus::False, Reason::Unsupported, NO_LIST))
        }
        (true, false, Standing::TooLarge) => Some(update(
            ConditionStatus::False,
            Reason::ResponseTooLarge,
            TOO_LARGE,
        )),
        (true, false, Standing::Following) => {
            Some(update(ConditionStatus::True, Reason::VersionsFollowed, FOLLOWED))
        }
        // Not leading, or the first answer is still to come: the condition stays as it is.
        (true, false, Standing::Off | Standing::Waiting) => return false,
    };
    match condition {
        Some(condition) => upsert_condition(conditions, condition, Timestamp::now()),
        None => remove_condition(conditions, ConditionType::ChangeDetection),
    }
    *conditions != before
}

/// `changeDetection.interval`, at least [`MIN_CHANGE_INTERVAL`]; one the schema would refuse
/// (the object bypassed it) counts as the default, with a warning.
fn interval(spec: &FerrVaultConnectionSpec) -> Duration {
    let text = spec.change_detection.as_ref().and_then(|c| c.interval.as_deref());
    let Some(text) = text else {
        return DEFAULT_CHANGE_INTERVAL;
    };
    match parse_go_duration(text) {
        Ok(interval) => interval.max(MIN_CHANGE_INTERVAL),
        Err(_) => {
            warn!("changeDetection.interval is not a duration, using the default");
            DEFAULT_CHANGE_INTERVAL
        }
    }
}

/// The condition's message in cloud mode.
const CLOUD: &str = "the cloud API has no list of versions: FerrVaultSecrets poll on their refreshInterval";

/// The condition's message when the server has no `list`.
const NO_LIST: &str = "the server has no GET /operator/secrets/list (404/405): FerrVaultSecrets poll on their refreshInterval; \
     asked again when the spec changes";

/// The condition's message when the last `list` answer crossed a bound.
const TOO_LARGE: &str = "the list answer crossed a bound (10,000 names or 1 MiB of names) and was refused: \
     the versions before it stay; asked again at the next interval";

/// The condition's message while versions are followed.
const FOLLOWED: &str = "versions are followed: a changed value is revealed within one interval";
