//! Whole-runtime tests against the Kubernetes simulator: the runtime's own watcher over
//! ConfigMaps feeds the queue, reconcilers read objects back through the API.

use std::{
    collections::{BTreeSet, HashMap},
    sync::{Arc, Mutex, atomic::Ordering::SeqCst},
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
    shard_rules::{ShardId, Shards},
    test_support::eventually,
    watch_spec::WatchSpec,
    watch_store::WatchStore,
};

const HANG: Duration = Duration::from_secs(30);

/// The key of a ConfigMap: itself, under the test reconciler.
fn config_map_key(cm: &ConfigMap) -> Vec<ObjectKey> {
    vec![ObjectKey::namespaced(
        "test",
        cm.namespace().unwrap_or_default(),
        cm.name_any(),
    )]
}

/// A runtime of `rec` over `spec` under a fake leadership, once it leads its first term.
async fn leading<R: Reconciler>(
    rec: Arc<R>,
    spec: WatchSpec<ConfigMap>,
) -> (Running, fixtures::FakeLeadership) {
    let leadership = fixtures::FakeLeadership::default();
    let l = leadership.clone();
    let running = Running::start(|reg| {
        fixtures::quick_builder(rec, reg)
            .watch(Box::new(spec))
            .leader_election(LeaderElection::Enabled(Arc::new(l)))
    });
    eventually(HANG, "leadership spawned", || leadership.hooks_ready()).await;
    leadership.lead().await;
    (running, leadership)
}

/// The runtime's real watcher over the ConfigMaps of `namespace`, every change mattering.
fn config_map_watch(client: kube::Client, namespace: &str) -> Box<dyn WatchSource> {
    let api: Api<ConfigMap> = Api::namespaced(client, namespace);
    let (spec, _store) = WatchSpec::full("ConfigMaps", api, watcher::Config::default());
    let spec = spec.map(config_map_key).matters(|_, _| true);
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

/// A namespace named `shard-ns-<i>` whose shard (of `shards`) is, or is not, `shard`.
fn namespace_in(shards: Shards, shard: ShardId, inside: bool) -> String {
    (0..)
        .map(|i| format!("shard-ns-{i}"))
        .find(|ns| (shards.of_namespace(ns) == shard) == inside)
        .expect("some name")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_watch_kept_to_its_shards_should_store_and_queue_only_their_namespaces() {
    let sim = KubeSim::start().await.expect("simulator");
    let (shards, held) = (Shards::new(2).expect("2 shards"), ShardId(0));
    let (mine, theirs) = (
        namespace_in(shards, held, true),
        namespace_in(shards, held, false),
    );
    // k0..k4 in mine; k0..k9 in theirs, so k5..k9 name objects of theirs only.
    let mine_api = namespace_with_config_maps(&sim, &mine, 5).await;
    let theirs_api = namespace_with_config_maps(&sim, &theirs, 10).await;
    let (spec, store) = WatchSpec::full("ConfigMaps", Api::all(sim.client()), watcher::Config::default());
    let spec = spec
        .map(config_map_key)
        .matters(|_, _| true)
        .only_namespaces(move |ns| shards.of_namespace(ns) == held);
    let rec = read_back(&sim);
    let r = rec.clone();
    let running = Running::start(|reg| fixtures::quick_builder(r, reg).watch(Box::new(spec)));
    eventually(
        HANG,
        "the first pass reconciled every key of the held shard",
        || (0..5).all(|i| rec.last_seen(&format!("k{i}")).is_some()),
    )
    .await;
    // A change in the other shard, then one in ours: the watch delivers them in this order,
    // so once ours is reconciled the other one was seen, and dropped, before it.
    let patch = Patch::Merge(json!({"data": {"v": "after"}}));
    theirs_api
        .patch("k7", &PatchParams::default(), &patch)
        .await
        .expect("patch theirs");
    mine_api
        .patch("k0", &PatchParams::default(), &patch)
        .await
        .expect("patch mine");
    eventually(HANG, "the change in the held shard is reconciled", || {
        rec.last_seen("k0").as_deref() == Some("after")
    })
    .await;
    let stored: Vec<String> = store
        .state()
        .iter()
        .map(|cm| cm.namespace().unwrap_or_default())
        .collect();
    assert_eq!(
        stored.len(),
        5,
        "the store holds the held shard's objects only: {stored:?}"
    );
    assert!(stored.iter().all(|ns| *ns == mine), "{stored:?}");
    assert!(
        (5..10).all(|i| rec.last_seen(&format!("k{i}")).is_none()),
        "no object of another shard was ever queued"
    );
    running.shutdown().await.expect("graceful shutdown");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_new_term_should_reconcile_every_stored_object_again_though_none_changed() {
    let sim = KubeSim::start().await.expect("simulator");
    namespace_with_config_maps(&sim, "terms", 5).await;
    // The default filter: an object the store kept at the same resourceVersion does not matter.
    let api: Api<ConfigMap> = Api::namespaced(sim.client(), "terms");
    let (spec, _store) = WatchSpec::full("ConfigMaps", api, watcher::Config::default());
    let spec = spec.map(config_map_key);
    let rec = read_back(&sim);
    let (running, leadership) = leading(rec.clone(), spec).await;
    eventually(HANG, "the first term reconciled every key", || rec.runs() == 5).await;
    // Lost and won again: the new term's queue starts empty and its watcher's first list finds
    // every object unchanged in the store; each must still be reconciled once (a refresh due
    // later, or a key the old queue held, would otherwise wait for the object's next change).
    leadership.lose().await;
    leadership.lead().await;
    eventually(HANG, "the second term reconciled every key again", || {
        rec.runs() == 10
            && (0..5).all(|i| rec.seen.lock().unwrap().get(&format!("k{i}")).map(Vec::len) == Some(2))
    })
    .await;
    running.shutdown().await.expect("graceful shutdown");
    sim.shutdown().await;
}

/// Reads each key's object from its watch's store, as the operator's reconcilers do, and
/// records whether the store held it.
struct StoreReader {
    store: WatchStore<ConfigMap>,
    found: Mutex<Vec<(String, bool)>>,
}

impl Reconciler for StoreReader {
    async fn reconcile(&self, key: &ObjectKey, _: &ReconcileContext) -> Outcome {
        let namespace = key.namespace.as_deref().unwrap_or_default();
        if self.store.wait_until_listed().await.is_err() {
            return Outcome::Error {
                reason: "store_gone",
                message: "the store's watch is gone".into(),
            };
        }
        let held = self.store.get(namespace, &key.name).is_some();
        let object = format!("{namespace}/{}", key.name);
        self.found.lock().unwrap().push((object, held));
        Outcome::done()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_new_terms_passes_should_find_the_objects_its_list_brings_not_the_old_terms_store() {
    let sim = KubeSim::start().await.expect("simulator");
    namespace_with_config_maps(&sim, "gained", 6).await;
    namespace_with_config_maps(&sim, "kept", 2).await;
    // The namespaces the watch keeps, as a replica's held shards: `gained` joins between terms.
    let gained = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let keeps = gained.clone();
    // Pages of two: the second term's list spans pages, and the keys of its first page reach
    // the workers while the rest is still being listed.
    let config = watcher::Config::default().page_size(2);
    let (spec, store) = WatchSpec::full("ConfigMaps", Api::all(sim.client()), config);
    let spec = spec
        .map(config_map_key)
        // Never synced yet, as a connection not probed: queued as a change, not held back with
        // the term's refresh backlog.
        .listed_as_change(|_| true)
        .only_namespaces(move |ns| ns == "kept" || (ns == "gained" && keeps.load(SeqCst)));
    let rec = Arc::new(StoreReader {
        store,
        found: Mutex::default(),
    });
    let (running, leadership) = leading(rec.clone(), spec).await;
    eventually(HANG, "the first term reconciled the kept namespace", || {
        rec.found.lock().unwrap().len() >= 2
    })
    .await;

    leadership.lose().await;
    gained.store(true, SeqCst);
    // Each page takes a while: the first page's passes run before the list completes.
    sim.faults().set_latency(Duration::from_millis(100));
    leadership.lead().await;
    let gained_passes = || -> Vec<(String, bool)> {
        let found = rec.found.lock().unwrap();
        found
            .iter()
            .filter(|(o, _)| o.starts_with("gained/"))
            .cloned()
            .collect()
    };
    eventually(HANG, "the second term reconciled every gained object", || {
        gained_passes()
            .iter()
            .map(|(o, _)| o)
            .collect::<BTreeSet<_>>()
            .len()
            == 6
    })
    .await;
    let absent: Vec<String> = (gained_passes().into_iter())
        .filter(|(_, held)| !held)
        .map(|(o, _)| o)
        .collect();
    assert!(
        absent.is_empty(),
        "passes of the new term read the old term's store, without these objects: {absent:?}"
    );
    running.shutdown().await.expect("graceful shutdown");
    sim.shutdown().await;
}
