//! Whole-runtime tests against the Kubernetes simulator: the runtime's own watcher over
//! ConfigMaps feeds the queue, reconcilers read objects back through the API.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use ferrvault_sim::kube::KubeSim;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::{
    Api, ResourceExt,
    api::{Patch, PatchParams, PostParams},
    runtime::watcher,
};
use serde_json::json;
use tokio::time::Instant;

use super::{fixtures::Running, *};
use crate::{
    key::ObjectKey,
    reconciler::{Outcome, ReconcileContext, Reconciler},
    test_support::eventually,
    watch_spec::WatchSpec,
};

const HANG: Duration = Duration::from_secs(30);

/// The runtime's real watcher over the ConfigMaps of `namespace`, every change mattering.
fn config_map_watch(client: kube::Client, namespace: &str) -> Box<dyn WatchSource> {
    let api: Api<ConfigMap> = Api::namespaced(client, namespace);
    let (spec, _store) = WatchSpec::full("ConfigMaps", api, watcher::Config::default());
    let spec = spec
        .map(|cm: &ConfigMap| {
            vec![ObjectKey::namespaced(
                "test",
                cm.namespace().unwrap_or_default(),
                cm.name_any(),
            )]
        })
        .matters(|_, _| true);
    Box::new(spec)
}

/// Reads each ConfigMap's `data.v`, records what it saw and when, and catches overlaps.
struct ReadBack {
    client: kube::Client,
    seen: Mutex<HashMap<String, Vec<(Instant, String)>>>,
    running: Mutex<HashMap<String, bool>>,
    overlap: Mutex<bool>,
}

impl Reconciler for ReadBack {
    async fn reconcile(&self, key: &ObjectKey, _: &ReconcileContext) -> Outcome {
        if self.running.lock().unwrap().insert(key.name.clone(), true) == Some(true) {
            *self.overlap.lock().unwrap() = true;
        }
        let api: Api<ConfigMap> =
            Api::namespaced(self.client.clone(), key.namespace.as_deref().unwrap_or_default());
        let outcome = match api.get(&key.name).await {
            Ok(cm) => {
                let v = cm.data.unwrap_or_default().remove("v").unwrap_or_default();
                self.seen
                    .lock()
                    .unwrap()
                    .entry(key.name.clone())
                    .or_default()
                    .push((Instant::now(), v));
                tokio::time::sleep(Duration::from_millis(5)).await;
                Outcome::done()
            }
            Err(_) => Outcome::Error {
                reason: "get_failed",
                message: "get failed".into(),
            },
        };
        self.running.lock().unwrap().insert(key.name.clone(), false);
        outcome
    }
}

impl ReadBack {
    fn last_seen(&self, name: &str) -> Option<String> {
        self.seen
            .lock()
            .unwrap()
            .get(name)
            .and_then(|v| v.last().map(|(_, s)| s.clone()))
    }

    fn runs(&self) -> usize {
        self.seen.lock().unwrap().values().map(Vec::len).sum()
    }
}

async fn namespace_with_config_maps(sim: &KubeSim, ns: &str, n: usize) -> Api<ConfigMap> {
    let client = sim.client();
    let namespace: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .expect("namespace");
    let api: Api<ConfigMap> = Api::namespaced(client, ns);
    for i in 0..n {
        let cm: ConfigMap =
            serde_json::from_value(json!({"metadata": {"name": format!("k{i}")}, "data": {"v": "0"}}))
                .unwrap();
        api.create(&PostParams::default(), &cm).await.expect("config map");
    }
    api
}

fn read_back(sim: &KubeSim) -> Arc<ReadBack> {
    Arc::new(ReadBack {
        client: sim.client(),
        seen: Mutex::default(),
        running: Mutex::default(),
        overlap: Mutex::default(),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn runtime_should_serialise_and_coalesce_a_thousand_simulator_events_for_ten_keys() {
    let sim = KubeSim::start().await.expect("simulator");
    let api = namespace_with_config_maps(&sim, "coalesce", 10).await;
    let rec = read_back(&sim);
    let watch = config_map_watch(sim.client(), "coalesce");
    let r = rec.clone();
    let running = Running::start(|reg| {
        fixtures::quick_builder(r, reg)
            .watch(watch)
            .max_concurrent_reconciles(4)
    });
    eventually(HANG, "the first pass reconciled every key", || {
        (0..10).all(|i| rec.last_seen(&format!("k{i}")).is_some())
    })
    .await;
    // Ten writers at once (one per key, 100 writes each) against four workers: events arrive
    // faster than keys can be reconciled, so they must coalesce. (Sequential writes let a fast
    // machine reconcile every event before the next one arrives, which proves nothing.)
    futures::future::join_all((0..10).map(|i| {
        let api = api.clone();
        async move {
            for round in 1..=100 {
                let patch = Patch::Merge(json!({"data": {"v": round.to_string()}}));
                api.patch(&format!("k{i}"), &PatchParams::default(), &patch)
                    .await
                    .expect("patch");
            }
        }
    }))
    .await;
    eventually(HANG, "every key's last reconcile saw its last write", || {
        (0..10).all(|i| rec.last_seen(&format!("k{i}")).as_deref() == Some("100"))
    })
    .await;
    assert!(
        !*rec.overlap.lock().unwrap(),
        "a key was reconciled twice at once"
    );
    assert!(
        rec.runs() < 1000,
        "1000 events must coalesce, got {} runs",
        rec.runs()
    );
    running.shutdown().await.expect("graceful shutdown");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_transient_watch_error_in_a_quiet_namespace_should_not_leave_the_leader_unready() {
    let sim = KubeSim::start().await.expect("simulator");
    let api = namespace_with_config_maps(&sim, "quiet", 1).await;
    let rec = read_back(&sim);
    let watch = config_map_watch(sim.client(), "quiet");
    let r = rec.clone();
    let running = Running::start(|reg| fixtures::quick_builder(r, reg).watch(watch));
    eventually(HANG, "the leader ready once its watch listed", || {
        running.health.readiness().ok
    })
    .await;

    // The watch ends and its restart fails once: the watcher resumes from its resourceVersion
    // without a re-list, and nothing changes in the namespace, so no event follows the error.
    sim.faults().fail(Some("watch"), Some("configmaps"), 1.0, 500);
    sim.faults().drop_watches();
    eventually(HANG, "the tree showing the watch error", || {
        !running.tree.to_text().contains("errors=0")
    })
    .await;
    sim.faults().clear();

    // Readiness holds through the error and the resumed watch (the list completed once).
    let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "later"}})).unwrap();
    api.create(&PostParams::default(), &cm).await.expect("config map");
    eventually(HANG, "the resumed watch delivering a new object", || {
        let ready = running.health.readiness();
        assert!(ready.ok, "unready after a transient watch error:\n{}", ready.body);
        rec.last_seen("later").is_some()
    })
    .await;
    running.shutdown().await.expect("graceful shutdown");
    sim.shutdown().await;
}
