//! `ferrvault-dev bench plain-controller-worker` (hidden): the FerrVaultSecret reconcile
//! logic of this operator ([`SecretReconciler`]) driven by a `kube_runtime::Controller` instead
//! of the actor runtime, as its own process, so the benchmarks compare drivers with everything
//! else equal. Two set-ups ([`Style`]):
//!
//! - **competent**: what a kube-rs user who read the optimization guide writes. The
//!   FerrVaultSecrets come from a reflector whose `modify` step drops `managedFields` and
//!   kubectl's last-applied annotation before the store (`Controller::for_stream`), and the
//!   reconcile starts with the early exit of [`super::early_exit`]: an object Ready at its
//!   generation whose refresh is not due is requeued for when it is, without any request.
//! - **naive**: `Controller::new` with the default watcher; every trigger (its own finalizer
//!   patch, status patch and Secret create included) runs the whole reconcile.
//!
//! Both `owns` the target Secrets (kube-runtime 5 watches owned objects as metadata only), run
//! `--concurrency` reconciles at once, and stop on SIGTERM. The reconciler's [`Outcome`] maps to
//! an [`Action`]: a refresh or requeue delay becomes `requeue`, done becomes `await_change`,
//! errors retry after 5s. The FerrVault client gets the budget of `--ferrvault-rate/-burst`.
//!
//! The worker prints `reconciles=N` (reconcile calls, early exits included) when the count
//! changes, at most every 100 ms, and once more on exit: the benchmarks read the last one.

use std::{
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use controller_actors::{ObjectKey, Outcome, ReconcileContext, Reconciler, WatchStore, watch_store};
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

use super::early_exit::{self, Decision};
use ferrvault_operator::{
    ChangeFeed, ContentHashKeySource, Context, EventSink, OperatorSettings, SECRET_CONTROLLER,
    SecretReconciler, SyncMetrics, WriteBudget,
    api::{FerrVaultConnection, FerrVaultSecret, Lenient},
    ferrvault::{ClientConfig, EgressPolicy, FerrVault},
};

/// Printed once the Controller is about to start (the benchmark waits for it).
pub const STARTED_LINE: &str = "plain controller started";
/// Prefix of the reconcile count lines.
pub const RECONCILES_PREFIX: &str = "reconciles=";
/// The FerrVault budget of the drivers when a benchmark does not limit it: effectively unlimited.
pub const UNLIMITED_RATE: f64 = 1_000_000.0;
/// Burst matching [`UNLIMITED_RATE`].
pub const UNLIMITED_BURST: u32 = 1_000_000;
/// Deadline of one reconcile (the operator's `--reconcile-timeout` default).
const RECONCILE_TIMEOUT: Duration = Duration::from_secs(120);
/// Retry delay after a failed reconcile.
const ERROR_REQUEUE: Duration = Duration::from_secs(5);
/// kubectl's copy of the whole object it applied.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// How the Controller is set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Style {
    /// Early exit and a pruned store.
    Competent,
    /// Every trigger reconciles; the store keeps whole objects.
    Naive,
}

impl Style {
    /// The `--style` value.
    pub fn flag(self) -> &'static str {
        match self {
            Style::Competent => "competent",
            Style::Naive => "naive",
        }
    }
}

/// Flags of the hidden `bench plain-controller-worker`.
#[derive(Clone, Debug, clap::Args)]
pub struct PlainWorkerArgs {
    /// Kubeconfig of the cluster to reconcile.
    #[arg(long)]
    pub kubeconfig: PathBuf,
    /// Controller set-up.
    #[arg(long, value_enum, default_value_t = Style::Naive)]
    pub style: Style,
    /// Reconciles running at once.
    #[arg(long, default_value_t = 4)]
    pub concurrency: u16,
    /// FerrVault requests per second per credential.
    #[arg(long, default_value_t = UNLIMITED_RATE)]
    pub ferrvault_rate: f64,
    /// FerrVault burst per credential.
    #[arg(long, default_value_t = UNLIMITED_BURST)]
    pub ferrvault_burst: u32,
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

/// What each reconcile gets.
struct Worker {
    reconciler: SecretReconciler,
    style: Style,
    default_refresh: Duration,
    reconciles: Arc<AtomicU64>,
}

async fn reconcile(cr: Arc<FerrVaultSecret>, worker: Arc<Worker>) -> Result<Action, PlainError> {
    worker.reconciles.fetch_add(1, Ordering::Relaxed);
    if worker.style == Style::Competent {
        match early_exit::decide(&cr, worker.default_refresh, jiff::Timestamp::now()) {
            Decision::Skip(Some(after)) => return Ok(Action::requeue(after)),
            Decision::Skip(None) => return Ok(Action::await_change()),
            Decision::Run => {}
        }
    }
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
    action_for(worker.reconciler.reconcile(&key, &rc).await)
}

/// A store of the FerrVaultConnections, as the operator keeps one: the reconciler judges
/// targets against the connections' references.
fn connections(client: &kube::Client) -> WatchStore<Lenient<FerrVaultConnection>> {
    let (store, mut writer) = watch_store();
    let events = watcher(
        Api::<Lenient<FerrVaultConnection>>::all(client.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .for_each(move |event| {
        if let Ok(event) = event {
            writer.apply(event);
        }
        async {}
    });
    tokio::spawn(events);
    store
}

fn error_policy(_: Arc<FerrVaultSecret>, _: &PlainError, _: Arc<Worker>) -> Action {
    Action::requeue(ERROR_REQUEUE)
}

/// Drops what the reconcile never reads and the API server repeats on every object.
fn prune(cr: &mut FerrVaultSecret) {
    cr.managed_fields_mut().clear();
    cr.annotations_mut().remove(LAST_APPLIED);
}

/// Prints the reconcile count when it changed, every 100 ms.
fn report_reconciles(count: Arc<AtomicU64>) {
    tokio::spawn(async move {
        let mut printed = 0;
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let now = count.load(Ordering::Relaxed);
            if now != printed {
                println!("{RECONCILES_PREFIX}{now}");
                printed = now;
            }
        }
    });
}

/// Runs the Controller until SIGTERM or SIGINT.
///
/// # Errors
/// The kubeconfig cannot be loaded.
pub async fn run(args: PlainWorkerArgs) -> Result<(), String> {
    let client = ferrvault_operator::kube_client(Some(&args.kubeconfig))
        .await
        .map_err(|e| e.to_string())?;
    let ferrvault_config = ClientConfig {
        rate_per_second: args.ferrvault_rate,
        burst: args.ferrvault_burst,
        // The FerrVault simulator of the benchmarks speaks plain http on loopback, as for the operator.
        allow_insecure_http: true,
        egress: EgressPolicy::from_flags(&["127.0.0.1/32".to_owned()], &[]).map_err(|e| e.to_string())?,
        ..ClientConfig::default()
    };
    let settings = OperatorSettings {
        ferrvault: ferrvault_config.clone(),
        // As the operator driver runs (`driver.rs`): no floor, no budget.
        min_refresh_interval: Duration::ZERO,
        namespace_write_budget: None,
        ..OperatorSettings::default()
    };
    let default_refresh = settings.default_refresh_interval;
    let mut registry = Registry::default();
    let ctx = Arc::new(Context {
        client: client.clone(),
        ferrvault: FerrVault::new(ferrvault_config),
        settings: settings.clone(),
        metrics: SyncMetrics::register(&mut registry),
        events: EventSink::new(client.clone()),
        own_writes: Arc::default(),
        // Measured as a plain Controller would run: no write budget.
        writes: Arc::new(WriteBudget::unlimited()),
        content_hash_key: ContentHashKeySource::new(settings.content_hash_key_namespace.clone()),
        // Never attached: a plain Controller runs no poller.
        changes: ChangeFeed::register(&mut registry),
        // No change-hint endpoint here: nothing is ever marked.
        hints: Arc::default(),
    });
    let reconciles = Arc::new(AtomicU64::new(0));
    let worker = Arc::new(Worker {
        reconciler: SecretReconciler::new(ctx, connections(&client)),
        style: args.style,
        default_refresh,
        reconciles: reconciles.clone(),
    });
    let crs = Api::<FerrVaultSecret>::all(client.clone());
    let controller = match args.style {
        Style::Naive => Controller::new(crs, watcher::Config::default()),
        Style::Competent => {
            let (reader, writer) = reflector::store();
            let stream = watcher(crs, watcher::Config::default())
                .default_backoff()
                .modify(prune)
                .reflect(writer)
                .applied_objects();
            Controller::for_stream(stream, reader)
        }
    };
    report_reconciles(reconciles.clone());
    println!("{STARTED_LINE}");
    controller
        .owns(Api::<Secret>::all(client), watcher::Config::default())
        .with_config(Config::default().concurrency(args.concurrency))
        .shutdown_on_signal()
        .run(reconcile, error_policy, worker)
        .for_each(|_| async {})
        .await;
    println!("{RECONCILES_PREFIX}{}", reconciles.load(Ordering::Relaxed));
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

    #[test]
    fn pruning_should_drop_managed_fields_and_the_last_applied_copy_only() {
        let mut cr: FerrVaultSecret = serde_json::from_value(serde_json::json!({
            "apiVersion": "ferrvault.com/v1alpha1",
            "kind": "FerrVaultSecret",
            "metadata": {
                "name": "s",
                "annotations": { LAST_APPLIED: "{\"big\":true}", "team": "a" },
                "managedFields": [{ "manager": "kubectl", "operation": "Apply" }],
            },
            "spec": { "connectionRef": { "name": "c" }, "vault": "v" },
        }))
        .unwrap();
        prune(&mut cr);
        assert!(cr.managed_fields().is_empty());
        assert_eq!(cr.annotations().len(), 1);
        assert_eq!(cr.annotations()["team"], "a");
    }
}
