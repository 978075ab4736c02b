//! `ferrvault-dev bench plain-controller-worker` (hidden): the FerrVaultSecret reconcile
//! logic of this operator ([`SecretReconciler`]) driven by a plain `kube_runtime::Controller`
//! instead of the actor runtime, as its own process, so `bench scale` and `bench memory` can
//! compare the two drivers on time, memory and latency with everything else equal.
//!
//! The Controller is set up the way a kube-rs operator usually is: it watches the
//! FerrVaultSecrets and `owns` their target Secrets (full objects, cluster-wide), keeps a
//! reflector of the FerrVaultConnections (the reconciler judges targets against them), runs
//! `--concurrency` reconciles at once, and stops on SIGTERM. The reconciler's [`Outcome`] maps
//! to an [`Action`]: a refresh or requeue delay becomes `requeue`, done becomes
//! `await_change`, errors retry after 5s. The FerrVault client gets the same (unlimited) budget
//! as the operator process in the benchmark.

use std::{path::PathBuf, sync::Arc, time::Duration};

use controller_actors::{ObjectKey, Outcome, ReconcileContext, Reconciler};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api, ResourceExt,
    runtime::{
        Controller, WatchStreamExt,
        controller::{Action, Config},
        reflector, watcher,
    },
};
use prometheus_client::registry::Registry;
use tokio_util::sync::CancellationToken;

use ferrvault_operator::{
    api::{FerrVaultConnection, FerrVaultSecret, Lenient},
    ferrvault::{ClientConfig, FerrVault},
    reconcile::{
        content_hash_key::ContentHashKeySource,
        context::Context,
        events::EventSink,
        metrics::SyncMetrics,
        secret::SecretReconciler,
        settings::{OperatorSettings, SECRET_CONTROLLER},
    },
};

/// Printed once the Controller is about to start (the benchmark waits for it).
pub const STARTED_LINE: &str = "plain controller started";
/// The FerrVault budget both drivers get in the benchmarks: effectively unlimited.
pub const UNLIMITED_RATE: f64 = 1_000_000.0;
/// Burst matching [`UNLIMITED_RATE`].
pub const UNLIMITED_BURST: u32 = 1_000_000;
/// Deadline of one reconcile (the operator's `--reconcile-timeout` default).
const RECONCILE_TIMEOUT: Duration = Duration::from_secs(120);
/// Retry delay after a failed reconcile.
const ERROR_REQUEUE: Duration = Duration::from_secs(5);

/// Flags of the hidden `bench plain-controller-worker`.
#[derive(Clone, Debug, clap::Args)]
pub struct PlainWorkerArgs {
    /// Kubeconfig of the cluster to reconcile.
    #[arg(long)]
    pub kubeconfig: PathBuf,
    /// Reconciles running at once.
    #[arg(long, default_value_t = 4)]
    pub concurrency: u16,
}

/// Why a reconcile failed, for the error policy.
#[derive(Debug, thiserror::Error)]
#[error("{reason}: {message}")]
pub struct PlainError {
    reason: &'static str,
    message: String,
}

/// The Outcome of the shared reconcile logic, as a Controller action.
pub fn action_for(outcome: Outcome) -> Result<Action, PlainError> {
    match outcome {
        Outcome::Done {
            refresh_after: Some(after),
        }
        | Outcome::RequeueAfter(after) => Ok(Action::requeue(after)),
        Outcome::Done { refresh_after: None } => Ok(Action::await_change()),
        Outcome::RateLimited { retry_after } => Ok(Action::requeue(retry_after.unwrap_or(ERROR_REQUEUE))),
        Outcome::Error { reason, message } => Err(PlainError { reason, message }),
    }
}

async fn reconcile(
    cr: Arc<FerrVaultSecret>,
    reconciler: Arc<SecretReconciler>,
) -> Result<Action, PlainError> {
    let key = ObjectKey::namespaced(
        SECRET_CONTROLLER,
        cr.namespace().unwrap_or_default(),
        cr.name_any(),
    );
    let rc = ReconcileContext {
        deadline: tokio::time::Instant::now() + RECONCILE_TIMEOUT,
        cancel: CancellationToken::new(),
        attempt: 0,
    };
    action_for(reconciler.reconcile(&key, &rc).await)
}

fn error_policy(_: Arc<FerrVaultSecret>, _: &PlainError, _: Arc<SecretReconciler>) -> Action {
    Action::requeue(ERROR_REQUEUE)
}

/// Runs the Controller until SIGTERM or SIGINT.
///
/// # Errors
/// The kubeconfig cannot be loaded.
pub async fn run(args: PlainWorkerArgs) -> Result<(), String> {
    let client = ferrvault_operator::cli::run::kube_client(Some(&args.kubeconfig))
        .await
        .map_err(|e| e.to_string())?;
    let ferrvault_config = ClientConfig {
        rate_per_second: UNLIMITED_RATE,
        burst: UNLIMITED_BURST,
        // The FerrVault simulator of the benchmarks speaks plain http, as for the operator.
        allow_insecure_http: true,
        ..ClientConfig::default()
    };
    let mut registry = Registry::default();
    let settings = OperatorSettings {
        ferrvault: ferrvault_config.clone(),
        ..OperatorSettings::default()
    };
    let ctx = Arc::new(Context {
        client: client.clone(),
        ferrvault: FerrVault::new(ferrvault_config),
        content_hash_key: ContentHashKeySource::new(settings.content_hash_key_namespace.clone()),
        settings,
        metrics: SyncMetrics::register(&mut registry),
        events: EventSink::new(client.clone()),
        own_writes: Arc::default(),
    });
    let (connections, writer) = reflector::store();
    let connection_events = watcher(
        Api::<Lenient<FerrVaultConnection>>::all(client.clone()),
        watcher::Config::default(),
    )
    .reflect(writer)
    .for_each(|_| async {});
    tokio::spawn(connection_events);
    let reconciler = Arc::new(SecretReconciler::new(ctx, connections));
    println!("{STARTED_LINE}");
    Controller::new(
        Api::<FerrVaultSecret>::all(client.clone()),
        watcher::Config::default(),
    )
    .owns(Api::<Secret>::all(client), watcher::Config::default())
    .with_config(Config::default().concurrency(args.concurrency))
    .shutdown_on_signal()
    .run(reconcile, error_policy, reconciler)
    .for_each(|_| async {})
    .await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_should_map_to_the_matching_controller_actions() {
        let hour = Duration::from_secs(3600);
        assert_eq!(
            action_for(Outcome::done_refresh_in(hour)).unwrap(),
            Action::requeue(hour)
        );
        assert_eq!(action_for(Outcome::done()).unwrap(), Action::await_change());
        assert_eq!(
            action_for(Outcome::RateLimited { retry_after: None }).unwrap(),
            Action::requeue(ERROR_REQUEUE)
        );
        assert!(
            action_for(Outcome::Error {
                reason: "x",
                message: "m".into()
            })
            .is_err()
        );
    }
}
