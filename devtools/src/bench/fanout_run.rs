//! One run of `bench fanout` (issue 37) in one shape: N namespaces labelled into one
//! ClusterFerrVaultConnection's allow-list, the operator launched and its Namespace store full,
//! then the copies created (one ClusterFerrVaultSecret, or one FerrVaultSecret per namespace on
//! the same cluster connection) and timed until every namespace holds its copy, then one forced
//! refresh counted.
//!
//! The namespaced shape is ESO's: a `ClusterExternalSecret` stamps one `ExternalSecret` per
//! namespace onto a `ClusterSecretStore`, each reading the provider on its own. Both shapes use the
//! same credential (so the same limiter), the same vault and the same operator flags.

use std::{
    fmt::Debug,
    path::Path,
    time::{Duration, Instant},
};

use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::{
    Api, Resource, ResourceExt,
    api::{Patch, PatchParams, PostParams},
};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::{Value, json};

use super::{
    driver::{Driver, LaunchOptions},
    scale_run::STOP_GRACE,
    watchers::Counter,
    work::{Work, WorkMeter},
};
use ferrvault_operator::api::{
    ClusterFerrVaultConnection, ClusterFerrVaultSecret, FerrVaultSecret, names::FORCE_SYNC_ANNOTATION,
};
use ferrvault_testkit::bench_world::{NS, World, vault};

/// The copies' name in every namespace (and the namespaced FerrVaultSecrets' name).
pub const TARGET: &str = "fanout";
/// The label that puts a namespace in the cluster connection's allow-list and selection.
const LABEL: &str = "bench.ferrvault.dev/fanout";
/// The cluster connection (and the cluster secret).
const CONNECTION: &str = "platform";
/// Creates in flight while filling the cluster.
const CREATE_CONCURRENCY: usize = 64;
/// Reconciles at once.
const CONCURRENCY: usize = 16;
/// The force-sync token of the counted refresh.
const FORCE_TOKEN: &str = "bench-refresh";

/// How the N copies are asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// One ClusterFerrVaultSecret selecting the N namespaces.
    ClusterSecret,
    /// One FerrVaultSecret per namespace on the same cluster connection (the ESO shape).
    Namespaced,
}

impl Shape {
    /// Both, in table order.
    pub const ALL: [Shape; 2] = [Shape::ClusterSecret, Shape::Namespaced];

    /// Table label.
    pub fn label(self) -> &'static str {
        match self {
            Shape::ClusterSecret => "one ClusterFerrVaultSecret",
            Shape::Namespaced => "a FerrVaultSecret per namespace",
        }
    }
}

/// What one run of one shape measured.
#[derive(Clone, Debug)]
pub struct RunSample {
    /// Seconds from the create until every namespace held its copy; `None`: not within the timeout.
    pub seconds: Option<f64>,
    /// The operator's work over that first sync.
    pub sync: Work,
    /// Its work over the forced refresh that followed; `None`: it did not complete.
    pub refresh: Option<Work>,
    /// The operator's peak RSS, MiB.
    pub peak_rss_mib: Option<f64>,
}

/// The `i`-th namespace.
fn namespace(i: usize) -> String {
    format!("fan-{i:04}")
}

/// Runs `shape` once over `namespaces` namespaces with the operator `binary`; each wait is bounded
/// by `timeout`.
///
/// # Errors
/// A simulator or the operator did not start, or the simulator refused a create.
pub async fn run_once(
    shape: Shape,
    namespaces: usize,
    binary: &Path,
    timeout: Duration,
) -> Result<RunSample, String> {
    let world = World::start().await?;
    create_namespaces(&world, namespaces).await?;
    create(
        Api::<ClusterFerrVaultConnection>::all(world.client.clone()),
        connection(&world),
    )
    .await?;
    let mut child = Driver::Operator
        .launch(binary, &world.kubeconfig, &LaunchOptions::unlimited(CONCURRENCY))
        .await?;
    let mut seen = Counter::start(
        Api::<ClusterFerrVaultConnection>::all(world.client.clone()),
        move |c: &ClusterFerrVaultConnection| {
            c.status
                .as_ref()
                .is_some_and(|s| s.allowed_namespaces as usize >= namespaces)
        },
    );
    if !seen.wait_for(1, timeout).await {
        child.process.stop(STOP_GRACE).await;
        return Err("the operator never saw every namespace".to_owned());
    }
    let mut copies = Counter::start(Api::<Secret>::all(world.client.clone()), |s: &Secret| {
        s.name_any() == TARGET && s.data.as_ref().is_some_and(|d| !d.is_empty())
    });
    let meter = WorkMeter::start(&world, Some(&child)).await;
    let started = Instant::now();
    match shape {
        Shape::ClusterSecret => {
            create(
                Api::<ClusterFerrVaultSecret>::all(world.client.clone()),
                cluster_secret(),
            )
            .await?;
        }
        Shape::Namespaced => {
            stream::iter(0..namespaces)
                .map(|i| {
                    let api = Api::<FerrVaultSecret>::namespaced(world.client.clone(), &namespace(i));
                    async move { create(api, namespaced_secret()).await }
                })
                .buffer_unordered(CREATE_CONCURRENCY)
                .try_for_each(|()| async { Ok(()) })
                .await?;
        }
    }
    let synced = copies.wait_for(namespaces, timeout).await;
    let seconds = synced.then(|| started.elapsed().as_secs_f64());
    let sync = meter.finish(&world, &child).await;
    let refresh = if synced {
        forced_refresh(&world, shape, namespaces, timeout, &child).await?
    } else {
        None
    };
    let peak_rss_mib = child.process.stats().map(|s| s.peak_rss_mib());
    child.process.stop(STOP_GRACE).await;
    Ok(RunSample {
        seconds,
        sync,
        refresh,
        peak_rss_mib,
    })
}

/// Forces one refresh of every copy and counts it until each object honoured the force-sync.
async fn forced_refresh(
    world: &World,
    shape: Shape,
    namespaces: usize,
    timeout: Duration,
    child: &super::driver::DriverProcess,
) -> Result<Option<Work>, String> {
    let force = json!({ "metadata": { "annotations": { FORCE_SYNC_ANNOTATION: FORCE_TOKEN } } });
    let patch = PatchParams::default();
    let meter = WorkMeter::start(world, Some(child)).await;
    let honoured = match shape {
        Shape::ClusterSecret => {
            let api = Api::<ClusterFerrVaultSecret>::all(world.client.clone());
            let mut done = Counter::start(api.clone(), |s: &ClusterFerrVaultSecret| {
                s.status.as_ref().and_then(|s| s.observed_force_sync.as_deref()) == Some(FORCE_TOKEN)
            });
            api.patch(CONNECTION, &patch, &Patch::Merge(&force))
                .await
                .map_err(|e| format!("force the cluster secret: {e}"))?;
            done.wait_for(1, timeout).await
        }
        Shape::Namespaced => {
            let mut done = Counter::start(
                Api::<FerrVaultSecret>::all(world.client.clone()),
                |s: &FerrVaultSecret| {
                    s.status.as_ref().and_then(|s| s.observed_force_sync.as_deref()) == Some(FORCE_TOKEN)
                },
            );
            stream::iter(0..namespaces)
                .map(|i| {
                    let api = Api::<FerrVaultSecret>::namespaced(world.client.clone(), &namespace(i));
                    let (patch, force) = (&patch, &force);
                    async move {
                        api.patch(TARGET, patch, &Patch::Merge(force))
                            .await
                            .map(drop)
                            .map_err(|e| format!("force a FerrVaultSecret: {e}"))
                    }
                })
                .buffer_unordered(CREATE_CONCURRENCY)
                .try_for_each(|()| async { Ok(()) })
                .await?;
            done.wait_for(namespaces, timeout).await
        }
    };
    let work = meter.finish(world, child).await;
    Ok(honoured.then_some(work))
}

/// Creates the N namespaces, labelled [`LABEL`]`=yes`.
async fn create_namespaces(world: &World, namespaces: usize) -> Result<(), String> {
    stream::iter(0..namespaces)
        .map(|i| {
            let object = json!({ "metadata": { "name": namespace(i), "labels": { LABEL: "yes" } } });
            create(Api::<Namespace>::all(world.client.clone()), object)
        })
        .buffer_unordered(CREATE_CONCURRENCY)
        .try_for_each(|()| async { Ok(()) })
        .await
}

/// The cluster connection: connection 0's token (a Secret of [`NS`]), the namespaces labelled
/// [`LABEL`].
fn connection(world: &World) -> Value {
    json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "ClusterFerrVaultConnection",
        "metadata": { "name": CONNECTION },
        "spec": {
            "url": world.fv.url(),
            "tokenSecretRef": { "namespace": NS, "name": "token-0", "key": "token" },
            "allowedNamespaces": { "selector": { "matchLabels": { LABEL: "yes" } } },
        },
    })
}

/// What both shapes read: every key of connection 0's vault, through the cluster connection.
fn secret_spec() -> Value {
    json!({
        "connectionRef": { "kind": "ClusterFerrVaultConnection", "name": CONNECTION },
        "vault": vault(0),
        "refreshInterval": "1h",
    })
}

fn cluster_secret() -> Value {
    let mut spec = secret_spec();
    spec["target"] = json!({ "name": TARGET });
    json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "ClusterFerrVaultSecret",
        "metadata": { "name": CONNECTION },
        "spec": {
            "secretSpec": spec,
            "namespaces": { "selector": { "matchLabels": { LABEL: "yes" } } },
        },
    })
}

fn namespaced_secret() -> Value {
    json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "FerrVaultSecret",
        "metadata": { "name": TARGET },
        "spec": secret_spec(),
    })
}

/// Creates `object` through `api` (the benchmark's own identity, not counted).
async fn create<K>(api: Api<K>, object: Value) -> Result<(), String>
where
    K: Resource + Clone + DeserializeOwned + Serialize + Debug,
{
    let object: K = serde_json::from_value(object).map_err(|e| format!("build an object: {e}"))?;
    api.create(&PostParams::default(), &object)
        .await
        .map(drop)
        .map_err(|e| format!("create {}: {e}", object.name_any()))
}
