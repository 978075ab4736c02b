//! The FerrVaultConnection reconciler (reference §4, without §8 items 3 and 8).
//!
//! One pass: read (from the watch's store) → deletion (blocked while FerrVaultSecrets reference
//! it) or finalizer (added, then the same pass probes: a new connection is probed at once) →
//! suspended? (`spec.suspend: true`: `Suspended=True` in status, nothing sent, no timer) → OIDC
//! cache invalidated when the spec changed → probe due? ([`probe_not_due`], or forced by a new
//! `ferrvault.com/force-sync` value; else only the next probe is scheduled) → endpoint and
//! credential → `GET /healthz` → (ferrvault mode, a service-account
//! token) `GET /operator/me` (`token_health.rs`) → status (recording the force-sync value in
//! `status.observedForceSync`, which forces every FerrVaultSecret using the connection, and the
//! input generation its FerrVaultSecrets record, `status.inputDigest`/`inputGeneration`, which a
//! resume leaves unchanged).
//! A connection that does not match its type (read as [`Lenient`]) or exceeds a size bound of
//! its schema stops after the finalizer with Ready=False/`InvalidSpec`, nothing sent; its
//! FerrVaultSecrets report `InvalidConnection`.
//!
//! # Guarantees
//! - A 429 on the probe leaves the condition and `lastCheckedAt` as they are.
//! - A spec the operator refuses ([`access::AccessError::is_spec_refusal`]) is reported without a
//!   re-probe timer: only an edit, which is a watch event, can change the answer.
//! - Deletion waits until no FerrVaultSecret references the connection, naming up to five of
//!   them in a `DeletionBlocked` condition and Event; the OIDC bearer is forgotten on deletion
//!   and on every spec change, so an edited connection never keeps using an old bearer.
//! - `ferrvault_connection_ready` follows each non-429 probe and is removed with the object.
//! - A connection found reachable at this generation whose token and CA Secrets did not change
//!   is not probed before its interval: a restart or failover makes no request and no write for
//!   it (the gauge is set from its status).
//! - A probe, and a blocked deletion's report, first ask the namespace's write budget; while it
//!   is spent nothing is sent or written and the pass is requeued for its slot.

use std::{sync::Arc, time::Duration};

use controller_actors::{ObjectKey, Outcome, ReconcileContext, Reconciler};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::{
    Api, Resource, ResourceExt,
    api::{ListParams, Patch},
};
use serde_json::json;
use tokio::time::Instant;
use tracing::{Instrument, info, info_span};

use crate::reconcile::{
    context::Context,
    prologue::{self, Start},
    read::{Reads, WrittenVersions, connection_inputs},
    report::EventKind,
    rules::{
        schedule::{
            force_sync::force_token,
            freshness::probe_not_due,
            input_generation::{connection_input_digest, input_generation},
            requeue::DELETION_BLOCKED_REQUEUE,
        },
        status::{
            conditions::{ConditionUpdate, find_condition, upsert_condition},
            messages,
            refresh_control::{suspend, without_suspension},
        },
    },
    settings::CONNECTION_CONTROLLER,
    write::{KubeAction, KubeFailure, invalid_spec},
};

use super::{access, change_detection, token_health};
use crate::api::{
    ConditionStatus, ConditionType, FerrVaultConnection, FerrVaultConnectionSpec, FerrVaultConnectionStatus,
    FerrVaultSecret, Lenient, Reason, names::CONNECTION_FINALIZER,
};
use crate::{
    ferrvault::{Credential, Endpoint},
    reconcile::write::patch_params,
};

/// Bound of one probe (reference: 15s), within the reconcile's own deadline.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

/// Reconciles one FerrVaultConnection: probe, deletion blocking, OIDC invalidation.
pub(crate) struct ConnectionReconciler {
    ctx: Arc<Context>,
    reads: Arc<Reads>,
}

impl ConnectionReconciler {
    /// A reconciler over the shared context, reading through `reads`.
    pub(crate) fn new(ctx: Arc<Context>, reads: Arc<Reads>) -> Self {
        Self { ctx, reads }
    }

    async fn run(&self, key: &ObjectKey, rc: &ReconcileContext) -> Result<Outcome, KubeFailure> {
        let ctx = &self.ctx;
        let namespace = key.namespace.clone().unwrap_or_default();
        let api: Api<Lenient<FerrVaultConnection>> = Api::namespaced(ctx.client.clone(), &namespace);
        let objects = &self.reads.connections;
        let identity = ("FerrVaultConnection", namespace.as_str(), key.name.as_str());
        let connection = match prologue::start(objects, &api, identity, CONNECTION_FINALIZER).await? {
            Start::Valid(connection) => connection,
            Start::Gone => {
                ctx.changes.forget(&(namespace.clone(), key.name.clone()));
                ctx.metrics.forget_connection(&namespace, &key.name);
                ctx.ferrvault.invalidate_oidc(&namespace, &key.name);
                ctx.ferrvault.release_endpoint(&namespace, &key.name);
                return Ok(Outcome::done());
            }
            Start::Deleting(connection) => {
                ctx.changes.forget(&(namespace.clone(), key.name.clone()));
                return self.on_delete(&api, &connection).await;
            }
            Start::Invalid(invalid) => {
                ctx.changes.forget(&(namespace.clone(), key.name.clone()));
                ctx.ferrvault.invalidate_oidc(&namespace, &key.name);
                ctx.ferrvault.release_endpoint(&namespace, &key.name);
                ctx.metrics.set_connection_ready(&namespace, &key.name, false);
                invalid_spec::report(ctx, (&api, objects.written()), &invalid).await?;
                return Ok(Outcome::done());
            }
        };
        let previous = connection.status.clone().unwrap_or_default();
        let generation = connection.meta().generation;
        if connection.spec.is_suspended() {
            let mut status = previous.clone();
            change_detection::follow(ctx, &self.reads, &connection, &mut status);
            suspend(
                &mut status.conditions,
                Reason::Suspended,
                generation,
                Timestamp::now(),
            );
            if status != previous {
                write_status((&api, objects.written()), &key.name, &status).await?;
            }
            return Ok(Outcome::done());
        }
        let force = force_token(connection.meta().annotations.as_ref());
        let forced = force.is_some() && force != previous.observed_force_sync;
        if spec_changed_since_last_probe(&previous, connection.meta().generation) {
            ctx.ferrvault.invalidate_oidc(&namespace, &key.name);
        }
        let every = ctx.settings.connection_probe_interval;
        // Read before the probe: a change after this makes the next pass probe again. Only from a
        // listed Secret store: on a start, a version not listed yet would look like a change.
        let stores = &self.reads.stores;
        if stores.secret_metadata.wait_until_listed().await.is_err() {
            return Ok(Outcome::done());
        }
        let inputs = connection_inputs(&connection, stores);
        let not_due = probe_not_due(&previous, generation, &inputs, every, Timestamp::now());
        if let (Some(next), false) = (not_due, forced) {
            ctx.metrics.set_connection_ready(&namespace, &key.name, true);
            let expires_at = previous.token_expires_at.as_ref().map(|t| t.0);
            ctx.metrics.set_token_expiry(&namespace, &key.name, expires_at);
            let mut status = previous.clone();
            if change_detection::follow(ctx, &self.reads, &connection, &mut status) {
                write_status((&api, objects.written()), &key.name, &status).await?;
            }
            return Ok(Outcome::done_refresh_in(next));
        }
        if let Some(held_back) = ctx.writes.hold_back(&namespace, CONNECTION_CONTROLLER) {
            return Ok(held_back);
        }
        let deadline = rc.deadline.min(Instant::now() + PROBE_TIMEOUT);
        let mut status = previous.clone();
        let (holds, reason, message, refresh) = match self.probe(&connection, deadline).await {
            Ok(reached) => {
                let deadline = rc.deadline.min(Instant::now() + PROBE_TIMEOUT);
                token_health::check(ctx, &connection, (&reached.0, &reached.1), &mut status, deadline).await;
                (
                    true,
                    Reason::Reachable,
                    messages::reachable(&connection.spec.url),
                    Some(every),
                )
            }
            Err(Probe::RateLimited(retry_after)) => {
                info!(?retry_after, "probe rate limited, condition left as-is");
                return Ok(Outcome::RateLimited { retry_after });
            }
            Err(Probe::Failed(failure)) => {
                let refresh = (!failure.is_spec_refusal()).then_some(every);
                (false, failure.reason, failure.message, refresh)
            }
        };
        info!(ready = holds, reason = %reason, "probe finished");
        status.last_checked_at = Some(Time(Timestamp::now()));
        status.observed_inputs = Some(inputs);
        // Recorded by every probe: a new value here forces the connection's FerrVaultSecrets.
        status.observed_force_sync = force;
        record_input_generation(&mut status, &connection.spec, generation);
        without_suspension(&mut status.conditions);
        change_detection::follow(ctx, &self.reads, &connection, &mut status);
        upsert_condition(
            &mut status.conditions,
            ConditionUpdate::ready(
                ConditionStatus::from_bool(holds),
                reason,
                message,
                connection.meta().generation,
            ),
            Timestamp::now(),
        );
        write_status((&api, objects.written()), &key.name, &status).await?;
        ctx.metrics.set_connection_ready(&namespace, &key.name, holds);
        Ok(Outcome::Done {
            refresh_after: refresh,
        })
    }

    /// `GET /healthz` through the connection's endpoint, after its credential was obtained;
    /// both are handed back when the server answered.
    async fn probe(
        &self,
        connection: &FerrVaultConnection,
        deadline: Instant,
    ) -> Result<(Endpoint, Credential), Probe> {
        let ctx = &self.ctx;
        let endpoint = access::endpoint(&self.reads.values, &ctx.ferrvault, connection)
            .await
            .map_err(Probe::Failed)?;
        let credential = access::credential(
            &self.reads.values,
            &ctx.ferrvault,
            connection,
            &endpoint,
            deadline,
        )
        .await
        .map_err(Probe::Failed)?;
        ctx.ferrvault.probe(&endpoint, deadline).await.map_err(|e| {
            if e.is_rate_limited() {
                Probe::RateLimited(e.retry_after())
            } else {
                let reason = if e.is_response_too_large() {
                    Reason::ResponseTooLarge
                } else {
                    Reason::Unreachable
                };
                Probe::Failed(
                    access::refusal(&e, "health probe")
                        .unwrap_or_else(|| access::AccessError::new(reason, e.to_string())),
                )
            }
        })?;
        Ok((endpoint, credential))
    }

    /// Deletion: blocked while FerrVaultSecrets reference the connection.
    async fn on_delete(
        &self,
        api: &Api<Lenient<FerrVaultConnection>>,
        connection: &Lenient<FerrVaultConnection>,
    ) -> Result<Outcome, KubeFailure> {
        let ctx = &self.ctx;
        let (namespace, name) = (connection.namespace().unwrap_or_default(), connection.name_any());
        ctx.ferrvault.invalidate_oidc(&namespace, &name);
        ctx.ferrvault.release_endpoint(&namespace, &name);
        // Listed from the API server, not the FerrVaultSecret store: the finalizer goes when none
        // is left, and a store lagging behind a just-created FerrVaultSecret would free a
        // connection it names (the first rule of `reads`). Deletions are rare; this costs
        // nothing on the refresh path. One that bypassed the schema counts as no dependant (its
        // reference is unreadable, and it does not need the connection to be deleted itself).
        let secrets: Api<Lenient<FerrVaultSecret>> = Api::namespaced(ctx.client.clone(), &namespace);
        let mut dependants: Vec<String> = secrets
            .list(&ListParams::default())
            .await
            .map_err(KubeFailure::during(KubeAction::ListDependants))?
            .items
            .iter()
            .filter(|s| {
                s.valid()
                    .is_some_and(|s| s.spec.connection_ref.is_namespaced(&name))
            })
            .map(ResourceExt::name_any)
            .collect();
        dependants.sort();
        if dependants.is_empty() {
            info!("no dependants remain, removing finalizer");
            ctx.metrics.forget_connection(&namespace, &name);
            prologue::release(ctx, api, connection, CONNECTION_FINALIZER).await?;
            return Ok(Outcome::done());
        }
        if let Some(held_back) = ctx.writes.hold_back(&namespace, CONNECTION_CONTROLLER) {
            return Ok(held_back);
        }
        let message = messages::deletion_blocked(&dependants);
        info!(dependants = dependants.len(), "delete blocked");
        let mut status = match connection {
            Lenient::Valid(connection) => connection.status.clone().unwrap_or_default(),
            Lenient::Invalid(invalid) => FerrVaultConnectionStatus {
                conditions: invalid.conditions.clone(),
                ..FerrVaultConnectionStatus::default()
            },
        };
        status.last_checked_at = Some(Time(Timestamp::now()));
        upsert_condition(
            &mut status.conditions,
            ConditionUpdate::ready(
                ConditionStatus::False,
                Reason::DeletionBlocked,
                message.clone(),
                connection.meta().generation,
            ),
            Timestamp::now(),
        );
        write_status((api, self.reads.connections.written()), &name, &status).await?;
        ctx.events
            .publish(&connection.object_ref(&()), EventKind::DeletionBlocked, message);
        Ok(Outcome::RequeueAfter(DELETION_BLOCKED_REQUEUE))
    }
}

impl Reconciler for ConnectionReconciler {
    async fn reconcile(&self, key: &ObjectKey, rc: &ReconcileContext) -> Outcome {
        let span = info_span!(
            "reconcile",
            ferrvaultconnection = %format!("{}/{}", key.namespace.as_deref().unwrap_or_default(), key.name)
        );
        async { self.run(key, rc).await.unwrap_or_else(Outcome::from) }
            .instrument(span)
            .await
    }
}

/// Why a probe did not succeed.
enum Probe {
    /// 429: leave the condition as it is.
    RateLimited(Option<Duration>),
    /// A condition reason and message.
    Failed(access::AccessError),
}

/// Whether the spec changed since the Ready condition was last written (its
/// `observedGeneration` differs), which is when a cached OIDC bearer must be forgotten. A
/// connection never probed has nothing stale to forget (a bearer a FerrVaultSecret pass cached
/// was obtained with the current spec).
pub(crate) fn spec_changed_since_last_probe(
    status: &FerrVaultConnectionStatus,
    generation: Option<i64>,
) -> bool {
    find_condition(&status.conditions, ConditionType::Ready)
        .is_some_and(|c| c.observed_generation != generation)
}

/// Records in `status` the digest of what `spec`'s FerrVaultSecrets depend on and the generation
/// it last changed at ([`input_generation`]): unchanged by a resume, `generation` after an edit or
/// on the first write of a status that predates these fields.
fn record_input_generation(
    status: &mut FerrVaultConnectionStatus,
    spec: &FerrVaultConnectionSpec,
    generation: Option<i64>,
) {
    let digest = connection_input_digest(spec);
    let recorded = (status.input_digest.as_deref(), status.input_generation);
    status.input_generation = input_generation(recorded, &digest, generation);
    status.input_digest = Some(digest);
}

/// Writes `status` and records the version it produced in `written`.
async fn write_status(
    (api, written): (&Api<Lenient<FerrVaultConnection>>, &WrittenVersions),
    name: &str,
    status: &FerrVaultConnectionStatus,
) -> Result<(), KubeFailure> {
    let object = api
        .patch_status(name, &patch_params(), &Patch::Merge(json!({ "status": status })))
        .await
        .map_err(KubeFailure::during(KubeAction::WriteStatus("")))?;
    written.record(object.meta());
    Ok(())
}
