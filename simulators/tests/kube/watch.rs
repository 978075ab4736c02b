//! Watches against the simulator: `kube_runtime::watcher` (list-watch and streaming
//! lists), bookmarks, compaction, forced 410s, dropped watches, selector transitions,
//! timeouts and `metadata_watcher`.

use crate::kube_sim_support::{eventually, unique, within};
use ferrvault_sim::kube::{KubeSim, KubeSimOptions};
use futures::{Stream, StreamExt};
use k8s_openapi::api::{
    coordination::v1::Lease,
    core::v1::{Namespace, Secret},
};
use kube::runtime::watcher::{self, Event};
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams},
    core::PartialObjectMeta,
};
use serde_json::json;
use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

async fn fast_bookmarks() -> KubeSim {
    let options = KubeSimOptions {
        bookmark_interval: Duration::from_millis(100),
        ..KubeSimOptions::default()
    };
    KubeSim::start_with(SocketAddr::from(([127, 0, 0, 1], 0)), options)
        .await
        .expect("simulator starts")
}

/// What a watcher stream produced, as short strings: `Init`, `InitApply:x`, `InitDone`,
/// `Apply:x`, `Delete:x`, `Error:<message>`.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl Recorder {
    fn spawn<K: ResourceExt + Send + 'static>(
        stream: impl Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static,
    ) -> Self {
        let rec = Recorder::default();
        let sink = rec.0.clone();
        tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            while let Some(item) = stream.next().await {
                let line = match item {
                    Ok(Event::Init) => "Init".to_string(),
                    Ok(Event::InitApply(o)) => format!("InitApply:{}", o.name_any()),
                    Ok(Event::InitDone) => "InitDone".to_string(),
                    Ok(Event::Apply(o)) => format!("Apply:{}", o.name_any()),
                    Ok(Event::Delete(o)) => format!("Delete:{}", o.name_any()),
                    Err(e) => format!("Error:{e}"),
                };
                sink.lock().expect("recorder lock").push(line);
            }
        });
        rec
    }

    fn events(&self) -> Vec<String> {
        self.0.lock().expect("recorder lock").clone()
    }

    fn errors(&self) -> Vec<String> {
        self.events()
            .into_iter()
            .filter(|e| e.starts_with("Error:"))
            .collect()
    }

    async fn wait_for(&self, event: &str) {
        eventually(
            &format!("the watcher reports {event} (saw {:?})", self.events()),
            || async { self.events().iter().any(|e| e == event).then_some(()) },
        )
        .await;
    }

    fn count(&self, event: &str) -> usize {
        self.events().iter().filter(|e| *e == event).count()
    }
}

async fn namespace(client: &kube::Client) -> String {
    let name = unique("ns");
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}})).expect("namespace");
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .expect("namespace created");
    name
}

async fn create_secret(api: &Api<Secret>, name: &str, labels: serde_json::Value) -> Secret {
    let s: Secret = serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}, "data": {}}))
        .expect("secret");
    api.create(&PostParams::default(), &s)
        .await
        .expect("secret created")
}

#[tokio::test]
async fn watcher_with_bookmarks_should_see_every_change_with_zero_errors_across_compaction_and_dropped_watches()
 {
    let sim = fast_bookmarks().await;
    let client = sim.client();
    let ns = namespace(&client).await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let first = create_secret(&secrets, "a", json!({})).await;
    create_secret(&secrets, "b", json!({})).await;
    let rec = Recorder::spawn(watcher::watcher(secrets.clone(), watcher::Config::default()));
    rec.wait_for("InitDone").await;
    create_secret(&secrets, "c", json!({})).await;
    rec.wait_for("Apply:c").await;

    // Unrelated writes move the cluster resourceVersion past every Secret event.
    let leases: Api<Lease> = Api::namespaced(client.clone(), &ns);
    let lease: Lease = serde_json::from_value(json!({"metadata": {"name": "l"}})).expect("lease");
    leases
        .create(&PostParams::default(), &lease)
        .await
        .expect("lease");
    for i in 0..5 {
        let p = Patch::Merge(json!({"spec": {"leaseTransitions": i}}));
        leases
            .patch("l", &PatchParams::default(), &p)
            .await
            .expect("lease patch");
    }
    let before = sim.bookmarks_sent();
    eventually(
        "two bookmarks carry the new resourceVersion to the watcher",
        || async { (sim.bookmarks_sent() >= before + 2).then_some(()) },
    )
    .await;

    // Compaction: resuming from the last Secret event would now be 410 Gone.
    sim.faults().compact();
    let mut stale = secrets
        .watch(&WatchParams::default(), &first.resource_version().expect("rv"))
        .await
        .expect("watch starts")
        .boxed();
    let gone = within("the stale watch answers", stale.next())
        .await
        .expect("one event")
        .expect("decodes");
    assert!(
        matches!(&gone, WatchEvent::Error(s) if s.code == 410),
        "stale watch must get 410, got {gone:?}"
    );

    // The bookmarked watcher resumes from a fresh resourceVersion instead.
    sim.faults().drop_watches();
    create_secret(&secrets, "d", json!({})).await;
    secrets
        .delete("a", &DeleteParams::default())
        .await
        .expect("delete");
    rec.wait_for("Apply:d").await;
    rec.wait_for("Delete:a").await;
    sim.faults().drop_watches();
    secrets
        .delete("b", &DeleteParams::default())
        .await
        .expect("delete");
    rec.wait_for("Delete:b").await;
    assert_eq!(rec.errors(), Vec::<String>::new(), "events: {:?}", rec.events());
    assert_eq!(rec.count("Init"), 1, "no relist was needed: {:?}", rec.events());
}

#[tokio::test]
async fn watcher_should_relist_and_converge_after_a_forced_410() {
    let sim = fast_bookmarks().await;
    let client = sim.client();
    let ns = namespace(&client).await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    create_secret(&secrets, "a", json!({})).await;
    let rec = Recorder::spawn(watcher::watcher(secrets.clone(), watcher::Config::default()));
    rec.wait_for("InitDone").await;
    sim.faults().force_gone(1);
    sim.faults().drop_watches();
    eventually("the watcher relists after the 410", || async {
        (rec.count("InitDone") == 2).then_some(())
    })
    .await;
    create_secret(&secrets, "b", json!({})).await;
    rec.wait_for("Apply:b").await;
    // kube-runtime reports a 410 ERROR event as one `WatchError` item before relisting
    // (kube-runtime 5 watcher.rs, State::Watching, WatchEvent::Error arm).
    let errors = rec.errors();
    assert_eq!(errors.len(), 1, "{:?}", rec.events());
    assert!(
        errors[0].contains("410") || errors[0].to_lowercase().contains("too old"),
        "{errors:?}"
    );
}

#[tokio::test]
async fn streaming_list_watcher_should_get_initial_events_then_the_end_bookmark() {
    let sim = fast_bookmarks().await;
    let ns = namespace(&sim.client()).await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), &ns);
    create_secret(&secrets, "a", json!({})).await;
    create_secret(&secrets, "b", json!({})).await;
    let rec = Recorder::spawn(watcher::watcher(
        secrets.clone(),
        watcher::Config::default().streaming_lists(),
    ));
    rec.wait_for("InitDone").await;
    assert_eq!(rec.events(), ["Init", "InitApply:a", "InitApply:b", "InitDone"]);
    create_secret(&secrets, "c", json!({})).await;
    rec.wait_for("Apply:c").await;
    assert!(rec.errors().is_empty(), "{:?}", rec.events());
}

#[tokio::test]
async fn metadata_watcher_should_stream_secret_metadata_only() {
    let sim = fast_bookmarks().await;
    let ns = namespace(&sim.client()).await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), &ns);
    create_secret(&secrets, "a", json!({"app": "x"})).await;
    let seen: Arc<Mutex<Vec<PartialObjectMeta<Secret>>>> = Arc::default();
    let sink = seen.clone();
    // kube 5's replacement for the deprecated `metadata_watcher`: an
    // `Api<PartialObjectMeta<K>>` makes metadata-only requests.
    let meta_api: Api<PartialObjectMeta<Secret>> = Api::namespaced(sim.client(), &ns);
    let stream = watcher::watcher(meta_api, watcher::Config::default());
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(Ok(ev)) = stream.next().await {
            if let Event::InitApply(m) | Event::Apply(m) = ev {
                sink.lock().expect("lock").push(m);
            }
        }
    });
    create_secret(&secrets, "b", json!({})).await;
    let names = eventually("metadata of both Secrets arrives", || async {
        let names: Vec<String> = seen.lock().expect("lock").iter().map(|m| m.name_any()).collect();
        (names.len() >= 2).then_some(names)
    })
    .await;
    assert_eq!(names, ["a", "b"]);
    let first = seen.lock().expect("lock")[0].clone();
    assert_eq!(first.labels().get("app").map(String::as_str), Some("x"));
    assert_eq!(
        first.types.as_ref().map(|t| t.kind.as_str()),
        Some("PartialObjectMetadata")
    );
}

#[tokio::test]
async fn watch_with_a_selector_should_report_objects_leaving_it_as_deleted() {
    let sim = fast_bookmarks().await;
    let ns = namespace(&sim.client()).await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), &ns);
    let s = create_secret(&secrets, "a", json!({"app": "x"})).await;
    let wp = WatchParams::default().labels("app=x");
    let mut stream = secrets
        .watch(&wp, &s.resource_version().expect("rv"))
        .await
        .expect("watch")
        .boxed();
    secrets
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"app": "y"}}})),
        )
        .await
        .expect("relabel");
    let ev = within("the relabel event", stream.next())
        .await
        .expect("event")
        .expect("decodes");
    assert!(
        matches!(&ev, WatchEvent::Deleted(o) if o.name_any() == "a"),
        "{ev:?}"
    );
}

#[tokio::test]
async fn watch_should_end_after_timeout_seconds() {
    let sim = fast_bookmarks().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let stream = secrets
        .watch(&WatchParams::default().timeout(1), "0")
        .await
        .expect("watch");
    let events: Vec<_> = within("a 1s watch ends", stream.collect::<Vec<_>>()).await;
    let objects: Vec<_> = events
        .iter()
        .filter(|e| !matches!(e, Ok(WatchEvent::Bookmark(_))))
        .collect();
    assert!(objects.is_empty(), "no Secrets exist in default: {objects:?}");
}

#[tokio::test]
async fn shutdown_should_end_open_watches() {
    let sim = fast_bookmarks().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let stream = secrets.watch(&WatchParams::default(), "0").await.expect("watch");
    let drained = tokio::spawn(stream.collect::<Vec<_>>());
    within("shutdown", sim.shutdown()).await;
    within("the watch stream ends after shutdown", drained)
        .await
        .expect("task");
}
