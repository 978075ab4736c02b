//! `ferrvault-dev bench floor-worker` (hidden): the physical floor of `bench scale` (issue 39).
//! The thinnest client that sends, for each FerrVaultSecret, exactly the Kubernetes writes the
//! operator sends and nothing else, against the same simulator, with the same concurrency: no
//! FerrVault request, no reconcile logic, no store but a set of the objects already handled.
//!
//! The writes were counted from the Kubernetes simulator's request log of an operator run
//! (`bench scale` prints them by resource; `devtools/tests/bench_floor.rs` keeps them equal),
//! in the operator's order. Per FerrVaultSecret:
//!
//! | # | verb | resource | body |
//! |---|---|---|---|
//! | 1 | `patch` | `ferrvaultsecrets` | merge patch adding the finalizer, with the `resourceVersion` |
//! | 2 | `create` | `secrets` | the target: the vault's two keys, owner reference, labels, content-hash annotation |
//! | 3 | `patch` | `ferrvaultsecrets/status` | merge patch of a Ready status of the same fields |
//! | 4 | `create` | `events` | the `Synced` Event (`events.k8s.io/v1`) |
//!
//! Per FerrVaultConnection: `patch` (finalizer) and `patch` of `status` (Ready). Once: `create`
//! of the content-hash key Secret in `default` (the operator's namespace in the benchmarks).
//!
//! The bodies have the fields (and so about the size) of the operator's. The objects come from
//! one list-then-watch per kind, as every driver's; an object with a Ready status (a restart:
//! nothing is due) is skipped without a request.
//!
//! The worker prints `reconciles=N` (objects written) as the Controller workers do, and stops
//! on SIGTERM or SIGINT. The bodies are built in `floor/bodies.rs`.

mod bodies;

use std::{
    collections::HashSet,
    path::PathBuf,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use futures::StreamExt;
use k8s_openapi::{
    api::{core::v1::Secret, events::v1::Event},
    apimachinery::pkg::apis::meta::v1::Condition,
};
use kube::{
    Api, ResourceExt,
    api::{Patch, PatchParams, PostParams},
    runtime::{WatchStreamExt, watcher},
};
use serde_json::json;

use self::bodies::{connection_status, content_hash_key, ready_status, synced_event, target_secret};
use super::plain_controller::{RECONCILES_PREFIX, STARTED_LINE};
use ferrvault_operator::{
    FIELD_MANAGER,
    api::{
        FerrVaultConnection, FerrVaultSecret,
        names::{CONNECTION_FINALIZER, SECRET_FINALIZER},
    },
};

/// Retry delay after a failed write (the simulator is not expected to refuse any).
const ERROR_RETRY: Duration = Duration::from_millis(100);

/// Flags of the hidden `bench floor-worker`.
#[derive(Clone, Debug, clap::Args)]
pub struct FloorWorkerArgs {
    /// Kubeconfig of the cluster to write to.
    #[arg(long)]
    pub kubeconfig: PathBuf,
    /// Objects written at once (the drivers' `--concurrency`).
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
}

/// What the handlers share.
struct Floor {
    client: kube::Client,
    /// UIDs already handled or under way: each object is written once.
    handled: Mutex<HashSet<String>>,
    /// Objects written.
    written: AtomicU64,
}

/// Runs until SIGTERM or SIGINT.
///
/// # Errors
/// The kubeconfig cannot be loaded.
pub async fn run(args: FloorWorkerArgs) -> Result<(), String> {
    let client = ferrvault_operator::kube_client(Some(&args.kubeconfig))
        .await
        .map_err(|e| e.to_string())?;
    let floor = Arc::new(Floor {
        client: client.clone(),
        handled: Mutex::default(),
        written: AtomicU64::new(0),
    });
    report(floor.clone());
    println!("{STARTED_LINE}");
    let key = content_hash_key();
    let key_secrets = Api::<Secret>::namespaced(client.clone(), "default");
    let post = PostParams::default();
    // Already there after a restart (409): the operator reads it then, it does not write.
    drop(key_secrets.create(&post, &key).await);
    let concurrency = args.concurrency.max(1);
    let connections = watcher(
        Api::<FerrVaultConnection>::all(client.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .applied_objects()
    .filter_map(|object| async move { object.ok() })
    .filter(|c| std::future::ready(!is_ready(c.status.as_ref().map(|s| s.conditions.as_slice()))))
    .for_each_concurrent(concurrency, |c| {
        let floor = floor.clone();
        async move { floor.handle_connection(c).await }
    });
    let secrets = watcher(Api::<FerrVaultSecret>::all(client), watcher::Config::default())
        .default_backoff()
        .applied_objects()
        .filter_map(|object| async move { object.ok() })
        .filter(|cr| std::future::ready(!is_ready(cr.status.as_ref().map(|s| s.conditions.as_slice()))))
        .for_each_concurrent(concurrency, |cr| {
            let floor = floor.clone();
            async move { floor.handle(cr).await }
        });
    tokio::select! {
        ((), ()) = futures::future::join(connections, secrets) => {}
        _ = tokio::signal::ctrl_c() => {}
        () = sigterm() => {}
    }
    println!("{RECONCILES_PREFIX}{}", floor.written.load(Ordering::Relaxed));
    Ok(())
}

async fn sigterm() {
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut signal) => drop(signal.recv().await),
        Err(_) => std::future::pending().await,
    }
}

/// Whether the conditions say Ready=True (nothing is due for the object).
fn is_ready(conditions: Option<&[Condition]>) -> bool {
    conditions.is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

impl Floor {
    /// Whether `uid` is seen for the first time (then it is handled now).
    fn first_time(&self, uid: Option<String>) -> bool {
        self.handled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(uid.unwrap_or_default())
    }

    /// The two writes of one connection, once, each retried until it is taken.
    async fn handle_connection(&self, connection: FerrVaultConnection) {
        if !self.first_time(connection.uid()) {
            return;
        }
        let namespace = connection.namespace().unwrap_or_default();
        let api = Api::<FerrVaultConnection>::namespaced(self.client.clone(), &namespace);
        let name = connection.name_any();
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.to_owned()),
            ..PatchParams::default()
        };
        let finalizer = Patch::Merge(json!({ "metadata": {
            "finalizers": [CONNECTION_FINALIZER],
            "resourceVersion": connection.resource_version(),
        }}));
        retry(|| api.patch(&name, &params, &finalizer)).await;
        let status = Patch::Merge(json!({ "status": connection_status(&connection) }));
        retry(|| api.patch_status(&name, &params, &status)).await;
    }

    /// The four writes of one object, once per object, each retried until it is taken.
    async fn handle(&self, cr: FerrVaultSecret) {
        if !self.first_time(cr.uid()) {
            return;
        }
        let namespace = cr.namespace().unwrap_or_default();
        let crs = Api::<FerrVaultSecret>::namespaced(self.client.clone(), &namespace);
        let name = cr.name_any();
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.to_owned()),
            ..PatchParams::default()
        };
        let post = PostParams::default();
        let finalizer = Patch::Merge(json!({ "metadata": {
            "finalizers": [SECRET_FINALIZER],
            "resourceVersion": cr.resource_version(),
        }}));
        retry(|| crs.patch(&name, &params, &finalizer)).await;
        let secrets = Api::<Secret>::namespaced(self.client.clone(), &namespace);
        let target = target_secret(&cr);
        retry(|| secrets.create(&post, &target)).await;
        let status = Patch::Merge(json!({ "status": ready_status(&cr) }));
        retry(|| crs.patch_status(&name, &params, &status)).await;
        let events = Api::<Event>::namespaced(self.client.clone(), &namespace);
        let event = synced_event(&cr);
        retry(|| events.create(&post, &event)).await;
        self.written.fetch_add(1, Ordering::Relaxed);
    }
}

/// Runs `write` until it succeeds (a refusal is retried after [`ERROR_RETRY`]).
async fn retry<T, F, Fut>(mut write: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = kube::Result<T>>,
{
    while write().await.is_err() {
        tokio::time::sleep(ERROR_RETRY).await;
    }
}

/// Prints the count of objects written when it changed, every 100 ms.
fn report(floor: Arc<Floor>) {
    tokio::spawn(async move {
        let mut printed = 0;
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let now = floor.written.load(Ordering::Relaxed);
            if now != printed {
                println!("{RECONCILES_PREFIX}{now}");
                printed = now;
            }
        }
    });
}
