//! Watcher actors against the Kubernetes API simulator: typed and metadata-only watches on
//! Secrets, filtering, key mapping, reconnects and failure.

use std::{
    collections::BTreeMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use crate::common::{
    ChildEvent, RecordingReporter, RecordingSink, eventually, init_tracing, recording_supervisor,
};
use controller_actors::{
    Cause, KeySink, ObjectKey, Route, Spawner, WatchReporter, WatchSource, WatchSpec, WatchStart, WatchStore,
};
use ferrvault_sim::kube::KubeSim;
use k8s_openapi::{
    ByteString,
    api::{
        apps::v1::Deployment,
        core::v1::{Namespace, Secret},
    },
};
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, ObjectMeta, Patch, PatchParams, PostParams},
    core::PartialObjectMeta,
    runtime::watcher,
};
use ractor::{ActorCell, ActorRef};

/// Generous bound for events to travel API → watch → actor → sink.
const SOON: Duration = Duration::from_secs(10);

/// A watcher spawned under a recording supervisor, with its recording sink and reporter.
struct Running {
    cell: ActorCell,
    sink: Arc<RecordingSink>,
    reporter: Arc<RecordingReporter>,
    supervisor: ActorRef<()>,
    children: Arc<Mutex<Vec<ChildEvent>>>,
}

impl Running {
    async fn start(spec: &dyn WatchSource) -> Self {
        let (supervisor, children) = recording_supervisor().await;
        let sink = Arc::new(RecordingSink::default());
        let reporter = Arc::new(RecordingReporter::default());
        let cell = spec
            .spawn_linked(
                &Spawner::standalone(supervisor.get_cell()),
                sink.clone() as Arc<dyn KeySink>,
                reporter.clone() as Arc<dyn WatchReporter>,
                WatchStart::Term,
            )
            .await
            .expect("spawn watcher");
        let running = Self {
            cell,
            sink,
            reporter,
            supervisor,
            children,
        };
        running.wait_synced().await;
        running
    }

    async fn wait_synced(&self) {
        eventually(SOON, "the watch reporting its initial list done", || {
            self.reporter.latest().filter(|s| s.synced).map(|_| ())
        })
        .await;
    }

    async fn wait_connected(&self) {
        eventually(SOON, "the watch reporting connected", || {
            self.reporter.latest().filter(|s| s.connected).map(|_| ())
        })
        .await;
    }

    async fn wait_enqueued(&self, name: &str, times: usize) {
        eventually(SOON, &format!("{name} enqueued {times} time(s)"), || {
            (self.sink.count(name) >= times).then_some(())
        })
        .await;
    }
}

/// Maps a Secret to a key for the controller `"test"`, and `"boom"` to a panic.
fn key_of(meta: &ObjectMeta) -> Vec<ObjectKey> {
    let name = meta.name.clone().unwrap_or_default();
    assert!(name != "boom", "mapper panics on purpose for {name}");
    vec![ObjectKey::namespaced(
        "test",
        meta.namespace.clone().unwrap_or_default(),
        name,
    )]
}

fn secrets(sim: &KubeSim, namespace: &str) -> Api<Secret> {
    Api::namespaced(sim.client(), namespace)
}

/// A fresh namespace, so tests never see each other's objects.
async fn namespace(sim: &KubeSim) -> String {
    let name = format!("ns-{}", uuid::Uuid::new_v4().simple());
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(sim.client())
        .create(&PostParams::default(), &namespace)
        .await
        .expect("create namespace");
    name
}

/// A started simulator, a fresh namespace in it, and that namespace's Secrets.
async fn fresh_namespace() -> (KubeSim, String, Api<Secret>) {
    init_tracing();
    let sim = KubeSim::start().await.expect("simulator starts");
    let ns = namespace(&sim).await;
    let api = secrets(&sim, &ns);
    (sim, ns, api)
}

async fn create(api: &Api<Secret>, name: &str, value: &str) {
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            "k".to_owned(),
            ByteString(value.as_bytes().to_vec()),
        )])),
        ..Secret::default()
    };
    api.create(&PostParams::default(), &secret)
        .await
        .expect("create secret");
}

async fn edit(api: &Api<Secret>, name: &str, change: impl FnOnce(&mut Secret)) {
    let mut secret = api.get(name).await.expect("get secret");
    change(&mut secret);
    api.replace(name, &PostParams::default(), &secret)
        .await
        .expect("replace secret");
}

async fn delete(api: &Api<Secret>, name: &str) {
    api.delete(name, &DeleteParams::default())
        .await
        .expect("delete secret");
}

/// A typed Secret watch in `ns` whose filter only lets data changes through.
fn typed_spec(sim: &KubeSim, ns: &str) -> (WatchSpec<Secret>, WatchStore<Secret>) {
    let (spec, store) = WatchSpec::full("Secret", secrets(sim, ns), watcher::Config::default());
    let spec = spec
        .map(|s: &Secret| key_of(&s.metadata))
        .matters(|old: Option<&Secret>, new: &Secret| old.is_none_or(|old| old.data != new.data));
    (spec, store)
}

fn metadata_spec(
    sim: &KubeSim,
    ns: &str,
) -> (
    WatchSpec<PartialObjectMeta<Secret>>,
    WatchStore<PartialObjectMeta<Secret>>,
) {
    let api: Api<PartialObjectMeta<Secret>> = Api::namespaced(sim.client(), ns);
    let (spec, store) = WatchSpec::metadata("Secret (metadata)", api, watcher::Config::default());
    (
        spec.map(|m: &PartialObjectMeta<Secret>| key_of(&m.metadata)),
        store,
    )
}

#[tokio::test]
async fn typed_watcher_should_enqueue_exactly_the_changes_its_filter_lets_through() {
    let (sim, ns, api) = fresh_namespace().await;
    create(&api, "existing", "v1").await;
    let (spec, store) = typed_spec(&sim, &ns);
    let w = Running::start(&spec).await;
    w.wait_enqueued("existing", 1).await;

    create(&api, "a", "v1").await;
    w.wait_enqueued("a", 1).await;
    // A label-only change does not matter to this filter; a data change does. Events of one
    // watch arrive in order, so once the data change is seen the label change was judged.
    edit(&api, "a", |s| {
        s.labels_mut().insert("touched".into(), "yes".into());
    })
    .await;
    edit(&api, "a", |s| {
        s.data
            .get_or_insert_default()
            .insert("k".into(), ByteString(b"v2".to_vec()));
    })
    .await;
    w.wait_enqueued("a", 2).await;
    delete(&api, "a").await;
    w.wait_enqueued("a", 3).await;

    assert_eq!(
        w.sink.names(),
        ["existing", "a", "a", "a"],
        "create, data change, delete; not the label change"
    );
    assert!(
        w.sink
            .keys()
            .iter()
            .all(|k| k.namespace.as_deref() == Some(ns.as_str()))
    );
    assert_eq!(
        store.state().len(),
        1,
        "the store holds what exists: {:?}",
        store.state()
    );
    assert!(
        store.state()[0].data.is_some(),
        "a full-object store keeps the data"
    );
    // init, existing, init done, create, label, data, delete: seven events, no error.
    let state = eventually(SOON, "the trailing report counting every event", || {
        w.reporter.latest().filter(|s| s.events >= 7)
    })
    .await;
    assert!(state.connected && state.errors == 0, "{state:?}");
}

/// Polls until `sink` has recorded `count` keys.
async fn wait_entries(sink: &RecordingSink, count: usize) {
    eventually(SOON, &format!("{count} keys enqueued"), || {
        (sink.entries().len() >= count).then_some(())
    })
    .await;
}

#[tokio::test]
async fn every_route_of_one_watch_should_map_the_changes_its_own_filter_lets_through_once_stored() {
    let (sim, ns, api) = fresh_namespace().await;
    create(&api, "listed", "v1").await;
    let (spec, store) = WatchSpec::full("Secret", secrets(&sim, &ns), watcher::Config::default());
    // The watch events a route mapped before the store showed them: a key queued before its
    // cause is stored would start a pass that cannot read that cause. (A listed object shows
    // when its list completes, which readers wait for; a deletion is mapped once the store has
    // forgotten the object.)
    let unstored = Arc::new(Mutex::new(Vec::<String>::new()));
    let deleting = Arc::new(AtomicBool::new(false));
    let (stored, unstored_log, deleted) = (store.clone(), unstored.clone(), deleting.clone());
    let spec = spec
        .map(|s: &Secret| key_of(&s.metadata))
        .matters(|old: Option<&Secret>, new: &Secret| old.is_none_or(|old| old.data != new.data))
        .route(
            Route::map(move |s: &Secret| {
                let (namespace, name) = (s.namespace().unwrap_or_default(), s.name_any());
                let shown = stored.get(&namespace, &name).and_then(|o| o.resource_version());
                if stored.is_listed() && shown != s.resource_version() && !deleted.load(Ordering::SeqCst) {
                    unstored_log
                        .lock()
                        .expect("log lock")
                        .push(format!("{name} {shown:?}"));
                }
                vec![ObjectKey::namespaced("labels", namespace, name)]
            })
            .matters(|old: Option<&Secret>, new: &Secret| {
                old.is_none_or(|old| old.metadata.labels != new.metadata.labels)
            })
            .listed_as_change(|s: &Secret| s.name_any() == "listed"),
        );
    let w = Running::start(&spec).await;
    wait_entries(&w.sink, 2).await;

    create(&api, "a", "v1").await;
    wait_entries(&w.sink, 4).await;
    edit(&api, "a", |s| {
        s.labels_mut().insert("touched".into(), "yes".into());
    })
    .await;
    wait_entries(&w.sink, 5).await;
    edit(&api, "a", |s| {
        s.data
            .get_or_insert_default()
            .insert("k".into(), ByteString(b"v2".to_vec()));
    })
    .await;
    wait_entries(&w.sink, 6).await;
    assert_eq!(
        *unstored.lock().expect("log lock"),
        Vec::<String>::new(),
        "a route mapped a version its watch's store did not hold yet"
    );
    deleting.store(true, Ordering::SeqCst);
    delete(&api, "a").await;
    wait_entries(&w.sink, 8).await;

    let entries: Vec<(&str, String, Cause)> = w
        .sink
        .entries()
        .into_iter()
        .map(|(key, cause)| (key.controller, key.name, cause))
        .collect();
    let entry = |controller, name: &str, cause| (controller, name.to_owned(), cause);
    assert_eq!(
        entries,
        [
            // The list: a refresh for the first route, a change for the second (its
            // `listed_as_change` holds), one stored object for both.
            entry("test", "listed", Cause::Listed),
            entry("labels", "listed", Cause::Event),
            // A create matters to both, route after route.
            entry("test", "a", Cause::Event),
            entry("labels", "a", Cause::Event),
            // A label change only to the second route, a data change only to the first.
            entry("labels", "a", Cause::Event),
            entry("test", "a", Cause::Event),
            // A deletion to every route.
            entry("test", "a", Cause::Event),
            entry("labels", "a", Cause::Event),
        ]
    );
    assert_eq!(
        store.state().len(),
        1,
        "one store for both routes: {:?}",
        store.state()
    );
}

#[tokio::test]
async fn metadata_watcher_should_enqueue_creates_updates_and_deletes() {
    let (sim, ns, api) = fresh_namespace().await;
    let (spec, store) = metadata_spec(&sim, &ns);
    let w = Running::start(&spec).await;

    create(&api, "token", "t1").await;
    w.wait_enqueued("token", 1).await;
    edit(&api, "token", |s| {
        s.data
            .get_or_insert_default()
            .insert("k".into(), ByteString(b"t2".to_vec()));
    })
    .await;
    w.wait_enqueued("token", 2).await;
    assert_eq!(store.state().len(), 1);
    assert_eq!(store.state()[0].name_any(), "token");
    delete(&api, "token").await;
    w.wait_enqueued("token", 3).await;
    eventually(SOON, "the store forgetting the deleted secret", || {
        store.is_empty().then_some(())
    })
    .await;
    assert_eq!(w.sink.names(), ["token", "token", "token"]);
    assert_eq!(
        w.sink.causes("token"),
        [Cause::Event; 3],
        "watch events, not a list: a new object must not wait behind a re-list"
    );
}

#[tokio::test]
async fn watcher_should_reconnect_after_a_forced_410_and_report_it() {
    let (sim, ns, api) = fresh_namespace().await;
    create(&api, "steady", "v1").await;
    let (spec, _store) = metadata_spec(&sim, &ns);
    let w = Running::start(&spec).await;
    w.wait_enqueued("steady", 1).await;

    sim.faults().force_gone(1);
    sim.faults().drop_watches();
    let failed = eventually(SOON, "a reported watch error", || {
        w.reporter
            .states()
            .into_iter()
            .find(|s| s.errors > 0 && !s.connected)
    })
    .await;
    let error = failed.last_error.expect("error described");
    assert!(error.contains("410"), "the error names the 410: {error}");
    w.wait_connected().await;

    create(&api, "after", "v1").await;
    w.wait_enqueued("after", 1).await;
    assert_eq!(
        w.sink.count("steady"),
        1,
        "the re-list does not re-enqueue an unchanged object"
    );
    assert!(
        !w.cell.get_status().ge(&ractor::ActorStatus::Stopping),
        "the watcher survived"
    );
}

#[tokio::test]
async fn watcher_should_stay_synced_through_an_error_in_a_quiet_namespace() {
    let (sim, ns, api) = fresh_namespace().await;
    let (spec, _store) = metadata_spec(&sim, &ns);
    let w = Running::start(&spec).await;

    // The watch ends and its restart fails: the stream resumes from its resourceVersion
    // without a re-list, and nothing happens in the namespace, so no event follows.
    sim.faults().fail(Some("watch"), Some("secrets"), 1.0, 500);
    sim.faults().drop_watches();
    let failed = eventually(SOON, "a reported watch error", || {
        w.reporter.states().into_iter().find(|s| s.errors > 0)
    })
    .await;
    sim.faults().clear();
    assert!(
        failed.synced,
        "an error must not unsync a listed watch: {failed:?}"
    );

    create(&api, "after", "v1").await;
    w.wait_enqueued("after", 1).await;
    let unsynced: Vec<_> = w
        .reporter
        .states()
        .into_iter()
        .skip_while(|s| !s.synced)
        .filter(|s| !s.synced)
        .collect();
    assert!(unsynced.is_empty(), "synced went back to false: {unsynced:?}");
    assert_eq!(w.sink.count("after"), 1, "the resumed watch delivers new objects");
}

#[tokio::test]
async fn watcher_should_enqueue_objects_deleted_while_its_watch_was_down() {
    let (sim, ns, api) = fresh_namespace().await;
    create(&api, "kept", "v1").await;
    create(&api, "gone", "v1").await;
    let (spec, _store) = metadata_spec(&sim, &ns);
    let w = Running::start(&spec).await;
    w.wait_enqueued("gone", 1).await;

    // Keep the watch down, delete, compact history: the reconnect must re-list and notice.
    sim.faults().hang(Some("watch"), Some("secrets"));
    sim.faults().drop_watches();
    delete(&api, "gone").await;
    sim.faults().compact();
    sim.faults().unhang();

    w.wait_enqueued("gone", 2).await;
    assert!(
        w.reporter
            .states()
            .iter()
            .any(|s| s.last_error.as_deref().is_some_and(|e| e.contains("410"))),
        "the watch came back through a 410 and a re-list, not through a delete event"
    );
    assert_eq!(w.sink.count("kept"), 1, "unchanged objects are not re-enqueued");
    assert_eq!(
        w.sink.causes("gone"),
        [Cause::Listed, Cause::Event],
        "found by the initial list, then its lost deletion is an event"
    );
}

#[tokio::test]
async fn watcher_should_survive_dropped_watches() {
    let (sim, ns, api) = fresh_namespace().await;
    let (spec, _store) = typed_spec(&sim, &ns);
    let w = Running::start(&spec).await;

    for round in 0..3 {
        sim.faults().drop_watches();
        let name = format!("s{round}");
        create(&api, &name, "v").await;
        w.wait_enqueued(&name, 1).await;
    }
    assert_eq!(w.sink.names(), ["s0", "s1", "s2"]);
}

#[tokio::test]
async fn mapper_panic_should_fail_the_watcher_and_a_restart_should_resume_with_the_same_store() {
    let (sim, ns, api) = fresh_namespace().await;
    let (spec, store) = metadata_spec(&sim, &ns);
    let w = Running::start(&spec).await;

    create(&api, "boom", "v").await;
    let failure = eventually(SOON, "the supervisor seeing ActorFailed", || {
        w.children.lock().expect("children").iter().find_map(|e| match e {
            ChildEvent::Failed(_, error) => Some(error.clone()),
            ChildEvent::Started(_) | ChildEvent::Terminated(_) => None,
        })
    })
    .await;
    assert!(
        failure.contains("panic"),
        "a panic is reported as such: {failure}"
    );

    // What a supervisor does: spawn the spec again. The store reader stays valid, and the
    // re-list does not map "boom" again (it is unchanged since the store saw it).
    let restarted = spec
        .spawn_linked(
            &Spawner::standalone(w.supervisor.get_cell()),
            w.sink.clone(),
            w.reporter.clone(),
            WatchStart::Restart,
        )
        .await
        .expect("respawn watcher");
    create(&api, "fine", "v").await;
    w.wait_enqueued("fine", 1).await;
    eventually(SOON, "the shared store showing the new object", || {
        store.state().iter().any(|m| m.name_any() == "fine").then_some(())
    })
    .await;
    assert!(
        store.state().iter().any(|m| m.name_any() == "boom"),
        "the store kept what exists"
    );
    assert_eq!(w.sink.names(), ["fine"]);
    restarted.stop(None);
}

fn deployment(name: &str, replicas: i32) -> Deployment {
    serde_json::from_value(serde_json::json!({
        "metadata": { "name": name },
        "spec": {
            "replicas": replicas,
            "selector": { "matchLabels": { "app": name } },
            "template": {
                "metadata": { "labels": { "app": name } },
                "spec": { "containers": [{ "name": "app", "image": "example/app:1" }] }
            }
        }
    }))
    .expect("a valid Deployment")
}

#[tokio::test]
async fn default_filter_should_skip_status_writes_and_enqueue_spec_changes() {
    let (sim, ns, _) = fresh_namespace().await;
    let api: Api<Deployment> = Api::namespaced(sim.client(), &ns);
    let (spec, _store) = WatchSpec::full("Deployment", api.clone(), watcher::Config::default());
    let w = Running::start(&spec.map(|d: &Deployment| key_of(&d.metadata))).await;
    let pp = PostParams::default();

    api.create(&pp, &deployment("web", 1)).await.expect("create");
    w.wait_enqueued("web", 1).await;
    let status = serde_json::json!({ "status": { "observedGeneration": 1, "replicas": 1 } });
    api.patch_status("web", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status write");
    // Events of one watch arrive in order: once the marker is seen, the status write was judged.
    api.create(&pp, &deployment("marker", 1))
        .await
        .expect("create marker");
    w.wait_enqueued("marker", 1).await;
    assert_eq!(w.sink.count("web"), 1, "a status-only write must not enqueue");

    let scale = serde_json::json!({ "spec": { "replicas": 3 } });
    api.patch("web", &PatchParams::default(), &Patch::Merge(&scale))
        .await
        .expect("spec change");
    w.wait_enqueued("web", 2).await;
    assert_eq!(w.sink.names(), ["web", "marker", "web"]);
}

#[tokio::test]
async fn watcher_should_drop_managed_fields_and_the_last_applied_copy_before_the_filter_and_the_store() {
    let (sim, ns, api) = fresh_namespace().await;
    create(&api, "listed", "v1").await;
    let sent = api.get("listed").await.expect("get secret");
    assert!(
        !sent.managed_fields().is_empty(),
        "the server sends managedFields, or this test proves nothing"
    );
    let filter_saw_managed_fields = Arc::new(Mutex::new(Vec::new()));
    let seen = filter_saw_managed_fields.clone();
    let (spec, store) = WatchSpec::full("Secret", secrets(&sim, &ns), watcher::Config::default());
    let spec =
        spec.map(|s: &Secret| key_of(&s.metadata))
            .matters(move |old: Option<&Secret>, new: &Secret| {
                let carries = |s: &Secret| s.metadata.managed_fields.is_some();
                seen.lock()
                    .expect("not poisoned")
                    .push(carries(new) || old.is_some_and(carries));
                true
            });
    let (meta_spec, meta_store) = metadata_spec(&sim, &ns);
    let typed = Running::start(&spec).await;
    let metadata = Running::start(&meta_spec).await;
    // Watch events come in order: once "watched" is in, so is this edit.
    edit(&api, "listed", |s| {
        s.metadata.annotations = Some([(LAST_APPLIED.into(), r#"{"data":{}}"#.into())].into());
    })
    .await;
    create(&api, "watched", "v1").await;
    edit(&api, "watched", |s| {
        s.data
            .get_or_insert_default()
            .insert("k".into(), ByteString(b"v2".to_vec()));
        let annotations = s.metadata.annotations.get_or_insert_default();
        annotations.insert(LAST_APPLIED.into(), r#"{"data":{"k":"djI="}}"#.into());
        annotations.insert("team".into(), "shop".into());
    })
    .await;
    typed.wait_enqueued("watched", 2).await;
    metadata.wait_enqueued("watched", 2).await;

    let judged = filter_saw_managed_fields.lock().expect("not poisoned").clone();
    assert_eq!(
        judged, [false; 4],
        "list, edit, create, edit: the filter never sees managedFields"
    );
    let typed_objects = store.state();
    assert_eq!(typed_objects.len(), 2);
    assert!(
        typed_objects.iter().all(|s| s.metadata.managed_fields.is_none()),
        "{typed_objects:?}"
    );
    assert!(
        typed_objects.iter().all(|s| s.data.is_some()),
        "only managedFields are dropped"
    );
    let metas = meta_store.state();
    assert_eq!(metas.len(), 2);
    assert!(
        metas.iter().all(|m| m.metadata.managed_fields.is_none()),
        "{metas:?}"
    );
    let watched: Vec<BTreeMap<String, String>> = typed_objects
        .iter()
        .map(|s| &s.metadata)
        .chain(metas.iter().map(|m| &m.metadata))
        .filter(|m| m.name.as_deref() == Some("watched"))
        .map(|m| m.annotations.clone().unwrap_or_default())
        .collect();
    assert_eq!(
        watched,
        vec![BTreeMap::from([("team".to_owned(), "shop".to_owned())]); 2],
        "kubectl's last-applied copy is dropped from both stores, other annotations stay"
    );
    let listed = typed_objects
        .iter()
        .map(|s| &s.metadata)
        .chain(metas.iter().map(|m| &m.metadata))
        .filter(|m| m.name.as_deref() == Some("listed"));
    assert!(
        listed.clone().count() == 2 && listed.clone().all(|m| m.annotations.is_none()),
        "a map left empty is dropped with its node: {:?}",
        listed.collect::<Vec<_>>()
    );
    assert!(
        metas.iter().all(|m| m.types.is_none()),
        "metadata objects forget their constant apiVersion and kind"
    );
}

/// The annotation `kubectl apply` writes: a copy of the whole object.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// A projection keeping only the `keep` label (and no data).
fn keep_label_only(secret: &mut Secret) {
    secret.data = None;
    let labels = secret.metadata.labels.take().unwrap_or_default();
    let kept: BTreeMap<String, String> = labels.into_iter().filter(|(k, _)| k == "keep").collect();
    secret.metadata.labels = (!kept.is_empty()).then_some(kept);
}

#[tokio::test]
async fn watcher_should_store_and_judge_only_what_the_spec_projection_keeps() {
    let (sim, ns, api) = fresh_namespace().await;
    let (spec, store) = WatchSpec::full("Secret", secrets(&sim, &ns), watcher::Config::default());
    let spec = spec
        .trim(keep_label_only)
        .map(|s: &Secret| key_of(&s.metadata))
        .matters(|old: Option<&Secret>, new: &Secret| {
            old.is_none_or(|old| old.metadata.labels != new.metadata.labels || old.data != new.data)
        });
    let w = Running::start(&spec).await;
    create(&api, "a", "v1").await;
    w.wait_enqueued("a", 1).await;
    // Dropped by the projection: a data edit and another label matter to nothing. Events of one
    // watch arrive in order, so once the kept label's change is seen both were judged.
    edit(&api, "a", |s| {
        s.data
            .get_or_insert_default()
            .insert("k".into(), ByteString(b"v2".to_vec()));
    })
    .await;
    edit(&api, "a", |s| {
        s.labels_mut().insert("other".into(), "x".into());
    })
    .await;
    edit(&api, "a", |s| {
        s.labels_mut().insert("keep".into(), "yes".into());
    })
    .await;
    w.wait_enqueued("a", 2).await;
    assert_eq!(w.sink.count("a"), 2, "the dropped fields' edits enqueued nothing");
    let stored = store.state();
    assert_eq!(stored.len(), 1);
    assert_eq!(
        (stored[0].data.as_ref(), stored[0].metadata.labels.clone()),
        (
            None,
            Some(BTreeMap::from([("keep".to_owned(), "yes".to_owned())]))
        ),
        "the store holds the projection"
    );
}
