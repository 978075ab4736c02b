//! Whole-runtime tests against the Kubernetes simulator: a test-only ConfigMap watch feeds the
//! runtime, reconcilers read objects back through the API.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use ferrvault_operator::sim::kube::KubeSim;
use futures::{StreamExt, future::BoxFuture};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::{
    Api, ResourceExt,
    api::{Patch, PatchParams, PostParams},
    runtime::{WatchStreamExt, watcher},
};
use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef, SpawnErr};
use serde_json::json;
use tokio::{task::JoinHandle, time::Instant};

use super::{fixtures::Running, *};
use crate::{
    key::ObjectKey,
    reconciler::{Outcome, ReconcileContext, Reconciler},
    seams::{KeySink, WatchState},
    test_support::eventually,
};

const HANG: Duration = Duration::from_secs(30);

/// Watches ConfigMaps of one namespace and enqueues `test:<ns>/<name>` for each change.
#[derive(Clone)]
struct ConfigMapWatch {
    client: kube::Client,
    namespace: String,
}

struct WatchActor;

impl Actor for WatchActor {
    type Msg = ();
    type State = JoinHandle<()>;
    type Arguments = (ConfigMapWatch, Arc<dyn KeySink>, Arc<dyn WatchReporter>);

    async fn pre_start(
        &self,
        _: ActorRef<()>,
        (spec, sink, reporter): Self::Arguments,
    ) -> Result<JoinHandle<()>, ActorProcessingErr> {
        let api: Api<ConfigMap> = Api::namespaced(spec.client, &spec.namespace);
        Ok(tokio::spawn(async move {
            let mut stream = std::pin::pin!(watcher(api, watcher::Config::default()).default_backoff());
            while let Some(event) = stream.next().await {
                let objects = match event {
                    Ok(watcher::Event::Apply(o) | watcher::Event::InitApply(o)) => vec![o],
                    Ok(watcher::Event::InitDone) => {
                        reporter.report(WatchState {
                            name: "ConfigMaps".into(),
                            connected: true,
                            last_event_at: None,
                            events: 0,
                            errors: 0,
                            last_error: None,
                        });
                        vec![]
                    }
                    _ => vec![],
                };
                for o in objects {
                    sink.enqueue(ObjectKey::namespaced(
                        "test",
                        o.namespace().unwrap_or_default(),
                        o.name_any(),
                    ));
                }
            }
        }))
    }

    async fn post_stop(&self, _: ActorRef<()>, task: &mut JoinHandle<()>) -> Result<(), ActorProcessingErr> {
        task.abort();
        Ok(())
    }
}

impl WatchSource for ConfigMapWatch {
    fn name(&self) -> &str {
        "ConfigMaps"
    }

    fn spawn_linked(
        &self,
        supervisor: ActorCell,
        sink: Arc<dyn KeySink>,
        reporter: Arc<dyn WatchReporter>,
    ) -> BoxFuture<'static, Result<ActorCell, SpawnErr>> {
        let spec = self.clone();
        Box::pin(async move {
            let (actor, _) =
                Actor::spawn_linked(None, WatchActor, (spec, sink, reporter), supervisor).await?;
            Ok(actor.get_cell())
        })
    }
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
    let watch = ConfigMapWatch {
        client: sim.client(),
        namespace: "coalesce".into(),
    };
    let r = rec.clone();
    let running = Running::start(|reg| {
        fixtures::quick_builder(r, reg)
            .watch(Box::new(watch))
            .max_concurrent_reconciles(4)
    });
    eventually(HANG, "the first pass reconciled every key", || {
        (0..10).all(|i| rec.last_seen(&format!("k{i}")).is_some())
    })
    .await;
    for round in 1..=100 {
        for i in 0..10 {
            let patch = Patch::Merge(json!({"data": {"v": round.to_string()}}));
            api.patch(&format!("k{i}"), &PatchParams::default(), &patch)
                .await
                .expect("patch");
        }
    }
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
async fn a_restart_should_spread_its_first_pass_over_the_configured_window() {
    let sim = KubeSim::start().await.expect("simulator");
    namespace_with_config_maps(&sim, "spread", 40).await;
    let rec = read_back(&sim);
    let watch = ConfigMapWatch {
        client: sim.client(),
        namespace: "spread".into(),
    };
    let r = rec.clone();
    let started = Instant::now();
    let running = Running::start(|reg| {
        fixtures::quick_builder(r, reg)
            .watch(Box::new(watch))
            .max_concurrent_reconciles(8)
            .backoff(crate::backoff::BackoffConfig {
                first_pass_spread: Duration::from_secs(2),
                ..Default::default()
            })
    });
    eventually(HANG, "every key reconciled once", || rec.runs() == 40).await;
    let mut buckets = [0usize; 6];
    for runs in rec.seen.lock().unwrap().values() {
        let at = runs[0].0.saturating_duration_since(started);
        buckets[(at.as_millis() / 500).min(5) as usize] += 1;
    }
    assert!(
        buckets.iter().all(|&n| n <= 20),
        "first pass bunched up: {buckets:?} (per 500ms)"
    );
    assert!(
        buckets.iter().filter(|&&n| n > 0).count() >= 3,
        "first pass not spread: {buckets:?}"
    );
    running.shutdown().await.expect("graceful shutdown");
    sim.shutdown().await;
}
