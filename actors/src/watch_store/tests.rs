use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;

use super::*;

fn map(namespace: &str, name: &str, version: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            namespace: Some(namespace.to_owned()),
            name: Some(name.to_owned()),
            resource_version: Some(version.to_owned()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

fn version(store: &WatchStore<ConfigMap>, namespace: &str, name: &str) -> Option<String> {
    store
        .get(namespace, name)
        .and_then(|object| object.metadata.resource_version.clone())
}

fn names(objects: &[Arc<ConfigMap>]) -> Vec<String> {
    let mut names: Vec<String> = objects
        .iter()
        .map(|o| format!("{}/{}", key_of(&**o).0, key_of(&**o).1))
        .collect();
    names.sort();
    names
}

#[test]
fn an_object_should_be_found_by_namespace_and_name_replaced_and_forgotten() {
    let (store, mut writer) = watch_store::<ConfigMap>();
    writer.apply(Event::Apply(map("a", "x", "1")));
    writer.apply(Event::Apply(map("b", "x", "2")));
    assert_eq!(version(&store, "a", "x").as_deref(), Some("1"));
    assert_eq!(
        version(&store, "b", "x").as_deref(),
        Some("2"),
        "same name, other namespace"
    );
    assert_eq!(version(&store, "a", "y"), None);

    let Applied::Stored { previous, listed, .. } = writer.apply(Event::Apply(map("a", "x", "3"))) else {
        panic!("an apply stores the object");
    };
    let previous = previous.and_then(|o| o.metadata.resource_version.clone());
    assert_eq!(previous.as_deref(), Some("1"), "the version it replaced");
    assert!(!listed, "a watch event, not a list");
    assert_eq!(version(&store, "a", "x").as_deref(), Some("3"));
    assert_eq!(store.len(), 2, "a new version replaces the old");

    writer.apply(Event::Delete(map("a", "x", "4")));
    assert_eq!(version(&store, "a", "x"), None);
    assert_eq!(names(&store.state()), ["b/x"]);
}

#[test]
fn a_relist_should_show_only_once_complete_and_name_what_it_no_longer_had() {
    let (store, mut writer) = watch_store::<ConfigMap>();
    writer.apply(Event::Init);
    writer.apply(Event::InitApply(map("a", "kept", "1")));
    writer.apply(Event::InitApply(map("a", "gone", "1")));
    assert!(store.is_empty(), "a list shows once complete");
    let Applied::Listed { vanished } = writer.apply(Event::InitDone) else {
        panic!("InitDone completes the list");
    };
    assert!(vanished.is_empty(), "nothing was stored before the first list");
    assert_eq!(names(&store.state()), ["a/gone", "a/kept"]);

    writer.apply(Event::Init);
    let Applied::Stored { previous, listed, .. } = writer.apply(Event::InitApply(map("a", "kept", "2")))
    else {
        panic!("a listed object is stored");
    };
    let previous = previous.and_then(|o| o.metadata.resource_version.clone());
    assert_eq!(
        previous.as_deref(),
        Some("1"),
        "the version readers saw before the re-list"
    );
    assert!(listed);
    writer.apply(Event::InitApply(map("a", "new", "2")));
    assert_eq!(
        version(&store, "a", "kept").as_deref(),
        Some("1"),
        "the old contents until done"
    );
    let Applied::Listed { vanished } = writer.apply(Event::InitDone) else {
        panic!("InitDone completes the list");
    };
    assert_eq!(names(&vanished), ["a/gone"]);
    assert_eq!(names(&store.state()), ["a/kept", "a/new"]);
    assert_eq!(version(&store, "a", "kept").as_deref(), Some("2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_waiter_should_wake_when_the_first_list_completes() {
    let (store, mut writer) = watch_store::<ConfigMap>();
    let waiting: Vec<_> = (0..16)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.wait_until_listed().await.is_ok() })
        })
        .collect();
    // Every waiter has polled the store at least once before the list completes.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!store.is_listed());
    writer.apply(Event::Init);
    writer.apply(Event::InitDone);
    for waiter in waiting {
        let woke = tokio::time::timeout(Duration::from_secs(5), waiter).await;
        assert!(
            matches!(woke, Ok(Ok(true))),
            "a waiter slept through the first list"
        );
    }
    assert!(store.is_listed());
}

#[tokio::test]
async fn waiting_should_fail_once_the_writer_is_gone_without_a_list() {
    let (store, writer) = watch_store::<ConfigMap>();
    drop(writer);
    let waited = tokio::time::timeout(Duration::from_secs(5), store.wait_until_listed()).await;
    assert!(matches!(waited, Ok(Err(WatchGone))));
}

#[test]
fn the_objects_of_one_namespace_should_be_listed_without_the_others() {
    let (store, mut writer) = watch_store::<ConfigMap>();
    writer.apply(Event::Apply(map("a", "x", "1")));
    writer.apply(Event::Apply(map("a", "y", "1")));
    writer.apply(Event::Apply(map("b", "x", "1")));
    assert_eq!(names(&store.in_namespace("a")), ["a/x", "a/y"]);
    assert_eq!(names(&store.in_namespace("b")), ["b/x"]);
    assert!(
        store.in_namespace("c").is_empty(),
        "a namespace with nothing stored"
    );

    writer.apply(Event::Delete(map("b", "x", "2")));
    assert!(store.in_namespace("b").is_empty(), "its last object deleted");
    writer.apply(Event::Apply(map("b", "z", "3")));
    assert_eq!(
        names(&store.in_namespace("b")),
        ["b/z"],
        "stored again after it emptied"
    );
    assert_eq!(store.len(), 3);
}

#[test]
fn a_relist_should_replace_each_namespace_and_count_what_it_holds() {
    let (store, mut writer) = watch_store::<ConfigMap>();
    writer.apply(Event::Apply(map("a", "x", "1")));
    writer.apply(Event::Apply(map("b", "x", "1")));
    writer.apply(Event::Init);
    writer.apply(Event::InitApply(map("b", "y", "2")));
    let Applied::Listed { vanished } = writer.apply(Event::InitDone) else {
        panic!("InitDone completes the list");
    };
    assert_eq!(
        names(&vanished),
        ["a/x", "b/x"],
        "both namespaces' unlisted objects"
    );
    assert!(store.in_namespace("a").is_empty());
    assert_eq!(names(&store.in_namespace("b")), ["b/y"]);
    assert_eq!(store.len(), 1);
}
