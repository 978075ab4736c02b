//! The FerrVaultSecret reconciler (reference §3.2, without the defects of §8).
//!
//! One pass: read the CR (as [`Lenient`]) → finalizer (added, then the same pass continues) or
//! pre-delete cleanup → an object that does not match its type stops here with `InvalidSpec`
//! (see [`invalid_spec`]) → refresh interval → connection → endpoint and credential →
//! cloud-scope guard → reveal (paced, single-flight) → transforms → size (`SecretTooLarge`),
//! token-target and missing-keys guards → ownership check → pending rollout recorded → target written → workloads restarted → status.
//!
//! # Guarantees
//! - A 429 (or running out of deadline while waiting for the credential's budget) writes no
//!   status and returns [`Outcome::RateLimited`].
//! - Any failure before the write leaves the target as it was: workloads keep the last good
//!   values. Status says why (Ready=False, a fixed [`Reason`]) and the key is retried on a
//!   timer even with `refreshInterval: 0s`.
//! - An object stored without schema validation (a field of the wrong type) is reported
//!   alone: Ready=False/`InvalidSpec`, no timer, and its deletion is never blocked.
//! - No value or token reaches a log line, an Event, a status message or an error: values
//!   only travel from the reveal into the target's `data`.
//!
//! # Layout
//! `reveal.rs` (connection, credential, reveal), `failure.rs` (early stops and their requeue),
//! `target.rs` (the target Secret), `rollout.rs` (workload restarts), `status.rs` (status).

mod failure;
mod reveal;
mod rollout;
mod status;
pub mod target;

use std::{sync::Arc, time::Duration};

use controller_actors::{ObjectKey, Outcome, ReconcileContext, Reconciler};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Resource, ResourceExt};
use tracing::{Instrument, info, info_span, warn};

use self::{
    failure::{Failure, Stop, requeue},
    status::SyncedState,
    target::{MAX_SECRET_BYTES, Ownership},
};
use super::{
    content_hash::content_hash,
    context::Context,
    events::EventKind,
    finalizer,
    guards::{
        MIN_REQUEUE, MissingKeysDecision, RequeueCase, TokenTargetDecision, missing_keys_decision,
        resolve_refresh_interval, token_target_decision,
    },
    invalid_spec,
    kube_errors::{api_error, kube_error_text},
    messages,
    metrics::SyncTimer,
    rollout_rules::{last_rollout_hash_after, pending_rollout_hash, rollout_due},
    secret_data_from_strings,
    transforms::apply_transforms,
};
use crate::api::{FerrVaultSecret, FerrVaultSecretStatus, Lenient, Reason, names::SECRET_FINALIZER};

/// Reconciles one FerrVaultSecret: reveal, transform, guard, write the target, restart workloads.
pub struct SecretReconciler {
    ctx: Arc<Context>,
}

/// What the write step leaves for the status and the outcome.
struct Written {
    /// Someone else changed the target while we wrote it: look again soon.
    look_again: bool,
    state: SyncedState,
    rollout_failed: bool,
}

impl SecretReconciler {
    /// A reconciler over the shared context.
    pub fn new(ctx: Arc<Context>) -> Self {
        Self { ctx }
    }

    async fn run(&self, key: &ObjectKey, rc: &ReconcileContext, timer: &mut SyncTimer<'_>) -> Outcome {
        let ctx = &self.ctx;
        let namespace = key.namespace.clone().unwrap_or_default();
        let api: Api<Lenient<FerrVaultSecret>> = Api::namespaced(ctx.client.clone(), &namespace);
        let object = match api.get_opt(&key.name).await {
            Ok(Some(object)) => object,
            Ok(None) => {
                ctx.metrics.forget_secret(&namespace, &key.name);
                timer.succeed();
                return Outcome::done();
            }
            Err(e) => return api_error(format!("read FerrVaultSecret: {}", kube_error_text(&e))),
        };
        if object.meta().deletion_timestamp.is_some() {
            info!("running pre-delete cleanup");
            ctx.metrics.forget_secret(&namespace, &key.name);
            ctx.events.forget(&object.uid().unwrap_or_default());
            if finalizer::has_finalizer(&object, SECRET_FINALIZER)
                && let Err(e) = finalizer::remove(&api, &object, SECRET_FINALIZER).await
            {
                return api_error(format!("remove finalizer: {}", kube_error_text(&e)));
            }
            timer.succeed();
            return Outcome::done();
        }
        let object = if finalizer::has_finalizer(&object, SECRET_FINALIZER) {
            object
        } else {
            match finalizer::add(&api, &object, SECRET_FINALIZER).await {
                Ok(updated) => updated,
                Err(e) => return api_error(format!("add finalizer: {}", kube_error_text(&e))),
            }
        };
        let cr = match object {
            Lenient::Valid(cr) => cr,
            Lenient::Invalid(invalid) => {
                ctx.metrics.count_sync_error(Reason::InvalidSpec);
                return invalid_spec::report(ctx, &api, &invalid).await;
            }
        };
        let previous = cr.status.clone().unwrap_or_default();
        let refresh = match resolve_refresh_interval(
            &cr.spec.refresh_interval,
            ctx.settings.default_refresh_interval,
        ) {
            Ok(refresh) => refresh,
            Err(e) => {
                let failure = Failure::new(
                    Reason::InvalidRefreshInterval,
                    messages::invalid_refresh_interval(&e.to_string()),
                    RequeueCase::InvalidSpec,
                );
                return self.fail(&api, &cr, &previous, failure, Duration::ZERO).await;
            }
        };
        match self.sync(&cr, &previous, rc).await {
            Ok(written) => self.finish(&api, &cr, &previous, written, refresh, timer).await,
            Err(Stop::Fail(failure)) => self.fail(&api, &cr, &previous, failure, refresh).await,
            Err(Stop::RateLimited(retry_after)) => {
                info!(?retry_after, "rate limited by the FerrVault API, backing off");
                ctx.metrics.count_sync_error(Reason::RateLimited);
                Outcome::RateLimited { retry_after }
            }
            Err(Stop::Api(message)) => api_error(message),
        }
    }

    /// Steps 3–17: everything up to the status write.
    async fn sync(
        &self,
        cr: &FerrVaultSecret,
        previous: &FerrVaultSecretStatus,
        rc: &ReconcileContext,
    ) -> Result<Written, Stop> {
        let ctx = &self.ctx;
        let namespace = cr.namespace().unwrap_or_default();
        let target_name = cr
            .spec
            .target_name(&cr.metadata.name.clone().unwrap_or_default())
            .to_owned();
        let connection_name = &cr.spec.connection_ref.name;
        let (connection, revealed) = reveal::reveal(ctx, cr, rc.deadline).await?;
        let missing = revealed.missing.clone();
        let raw = secret_data_from_strings(revealed.secrets.into_iter().map(|(k, v)| (k, v.into_exposed())));
        let data = apply_transforms(&raw, &cr.spec.transforms)
            .map_err(|e| Failure::new(Reason::TransformError, e.to_string(), RequeueCase::Failed))?;
        let size = target::payload_bytes(&data);
        if size > MAX_SECRET_BYTES {
            return Err(Failure::new(
                Reason::SecretTooLarge,
                messages::secret_too_large(size, MAX_SECRET_BYTES, &target_name),
                RequeueCase::Failed,
            )
            .into());
        }
        let ownership =
            match token_target_decision(connection.spec.token_secret_ref.as_ref(), &target_name, &data) {
                TokenTargetDecision::Owned => Ownership::Owned,
                TokenTargetDecision::Unowned => Ownership::Unowned,
                TokenTargetDecision::TokenKeyMissing { key } => {
                    return Err(Failure::new(
                        Reason::TokenKeyMissing,
                        messages::token_key_missing(&target_name, connection_name, &key),
                        RequeueCase::KeysMissing,
                    )
                    .into());
                }
            };
        let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
        let existing = secrets.get_opt(&target_name).await.map_err(|e| {
            Failure::new(
                Reason::SecretReadFailed,
                format!("read Secret {target_name}: {}", kube_error_text(&e)),
                RequeueCase::Failed,
            )
        })?;
        if missing_keys_decision(&missing, existing.is_some(), &data)
            == MissingKeysDecision::LeaveTargetUnchanged
        {
            let mut failure = Failure::new(
                Reason::MissingKeys,
                messages::missing_keys_target_unchanged(&missing, &target_name),
                RequeueCase::KeysMissing,
            );
            failure.missing = Some(missing);
            return Err(failure.into());
        }
        let hash = content_hash(&data);
        let previous_hash = target::recorded_hash(existing.as_ref());
        let desired = target::desired_target(
            existing.as_ref(),
            cr,
            &target_name,
            cr.spec.target_type(),
            &data,
            &hash,
            ownership,
        )
        .map_err(|e| Failure::new(Reason::SecretWriteFailed, e.to_string(), RequeueCase::Failed))?;
        let has_rollout = !cr.spec.rollout_restart.is_empty();
        let mut recorded = previous.last_rollout_hash.clone();
        if let Some(pending) =
            pending_rollout_hash(has_rollout, recorded.as_deref(), previous_hash.as_deref(), &hash)
        {
            let mut status = previous.clone();
            status.last_rollout_hash = Some(pending.clone());
            let api = Api::<Lenient<FerrVaultSecret>>::namespaced(ctx.client.clone(), &namespace);
            status::write(&api, &cr.name_any(), previous, &status)
                .await
                .map_err(|e| Stop::Api(format!("record pending rollout: {}", kube_error_text(&e))))?;
            recorded = Some(pending);
        }
        let content_changed = previous_hash.as_deref() != Some(hash.as_str());
        let mut look_again = false;
        if target::needs_write(existing.as_ref(), &desired) {
            ctx.own_writes.begin(&namespace, &target_name);
            let result = target::write(&secrets, existing.as_ref(), &desired).await;
            let version = result
                .as_ref()
                .ok()
                .and_then(|w| w.metadata.resource_version.clone());
            look_again = ctx
                .own_writes
                .finish(&namespace, &target_name, version.as_deref());
            result.map_err(|e| {
                if matches!(&e, kube::Error::Api(s) if s.code == 409) {
                    Stop::Api(format!("write Secret {target_name}: conflict, retrying"))
                } else {
                    Failure::new(
                        Reason::SecretWriteFailed,
                        format!("write Secret {target_name}: {}", kube_error_text(&e)),
                        RequeueCase::Failed,
                    )
                    .into()
                }
            })?;
        }
        let synced_keys: Vec<String> = data.keys().cloned().collect();
        info!(
            target = %target_name,
            keys = synced_keys.len(),
            missing = missing.len(),
            transforms = cr.spec.transforms.len(),
            content_changed,
            "synced secret"
        );
        let reference = cr.object_ref(&());
        if content_changed {
            let note = format!(
                "{} (content hash {})",
                messages::synced(synced_keys.len(), &target_name),
                short(&hash)
            );
            ctx.events.publish(&reference, EventKind::Synced, note).await;
        }
        let mut rollout_error = None;
        if has_rollout && rollout_due(recorded.as_deref(), previous_hash.as_deref(), &hash) {
            let report = rollout::restart_workloads(
                &ctx.client,
                &namespace,
                &cr.uid().unwrap_or_default(),
                &cr.spec.rollout_restart,
                &hash,
            )
            .await;
            for workload in &report.restarted {
                let note = format!("restarted {workload} for content hash {}", short(&hash));
                ctx.events
                    .publish(&reference, EventKind::RolloutTriggered, note)
                    .await;
            }
            if let Some(error) = &report.first_error {
                warn!(error = %error, "rollout restart failed, will retry");
                ctx.events
                    .publish(&reference, EventKind::RolloutFailed, error.clone())
                    .await;
            }
            rollout_error = report.first_error;
        }
        let rollout_failed = rollout_error.is_some();
        let last_rollout_hash =
            last_rollout_hash_after(has_rollout, rollout_failed, recorded.as_deref(), &hash);
        Ok(Written {
            look_again,
            state: SyncedState {
                synced_keys,
                missing_keys: missing,
                target: target_name,
                last_rollout_hash,
                rollout: has_rollout.then_some(rollout_error),
            },
            rollout_failed,
        })
    }

    /// Steps 18–19: status after a write, metrics and the outcome.
    async fn finish(
        &self,
        api: &Api<Lenient<FerrVaultSecret>>,
        cr: &FerrVaultSecret,
        previous: &FerrVaultSecretStatus,
        written: Written,
        refresh: Duration,
        timer: &mut SyncTimer<'_>,
    ) -> Outcome {
        let ctx = &self.ctx;
        let (namespace, name) = (cr.namespace().unwrap_or_default(), cr.name_any());
        let all_found = written.state.missing_keys.is_empty();
        let rollout_message = written.state.rollout.clone().flatten();
        let status = status::after_sync(previous, written.state, cr.meta().generation, Timestamp::now());
        if let Err(e) = status::write(api, &name, previous, &status).await {
            return api_error(format!("update status: {}", kube_error_text(&e)));
        }
        if all_found {
            ctx.metrics.mark_synced(&namespace, &name, refresh);
        }
        if written.rollout_failed {
            ctx.metrics.count_sync_error(Reason::RolloutFailed);
            return Outcome::Error {
                reason: Reason::RolloutFailed.as_str(),
                message: format!("rollout restart: {}", rollout_message.unwrap_or_default()),
            };
        }
        if !all_found {
            ctx.metrics.count_sync_error(Reason::MissingKeys);
            let reference = cr.object_ref(&());
            let note = format!(
                "{}: {}",
                Reason::MissingKeys,
                messages::missing_keys(&status.missing_keys)
            );
            ctx.events.publish(&reference, EventKind::SyncFailed, note).await;
            return requeue(RequeueCase::KeysMissing, refresh);
        }
        timer.succeed();
        if written.look_again {
            return Outcome::RequeueAfter(MIN_REQUEUE);
        }
        requeue(RequeueCase::Synced, refresh)
    }

    /// A reported failure: count it, Ready=False in status, a (deduplicated) Event, a timer.
    async fn fail(
        &self,
        api: &Api<Lenient<FerrVaultSecret>>,
        cr: &FerrVaultSecret,
        previous: &FerrVaultSecretStatus,
        failure: Failure,
        refresh: Duration,
    ) -> Outcome {
        let ctx = &self.ctx;
        warn!(reason = %failure.reason, message = %failure.message, "sync failed");
        ctx.metrics.count_sync_error(failure.reason);
        let generation = cr.meta().generation;
        let mut status = status::after_failure(
            previous,
            failure.reason,
            failure.message.clone(),
            generation,
            Timestamp::now(),
        );
        if let Some(missing) = failure.missing {
            status.missing_keys = missing;
            status.observed_generation = generation;
        }
        if let Err(e) = status::write(api, &cr.name_any(), previous, &status).await {
            return api_error(format!(
                "update status with {}: {}",
                failure.reason,
                kube_error_text(&e)
            ));
        }
        let note = format!("{}: {}", failure.reason, failure.message);
        ctx.events
            .publish(&cr.object_ref(&()), EventKind::SyncFailed, note)
            .await;
        requeue(failure.case, refresh)
    }
}

impl Reconciler for SecretReconciler {
    async fn reconcile(&self, key: &ObjectKey, rc: &ReconcileContext) -> Outcome {
        let span = info_span!(
            "reconcile",
            ferrvaultsecret = %format!("{}/{}", key.namespace.as_deref().unwrap_or_default(), key.name)
        );
        let mut timer = SyncTimer::start(&self.ctx.metrics);
        self.run(key, rc, &mut timer).instrument(span).await
    }
}

/// The first 12 hex digits of a content hash, for Events.
fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}
