//! Events written through `events.k8s.io/v1` (as the operator writes them, with kube-rs's
//! `Recorder`) are the same objects as core `v1` Events: `kubectl get events` lists them,
//! `kubectl describe` finds them with its `involvedObject.*` field selector.

use crate::{
    kube_sim_support::{Widget, WidgetSpec, install_widget_crd, sim},
    kubectl_support::Kubectl,
};
use ferrvault_sim::kube::KubeSim;
use k8s_openapi::api::{core::v1::Event as CoreEvent, events::v1::Event};
use kube::{
    Api, Resource,
    api::{ListParams, PostParams},
    runtime::events::{Event as Published, EventType, Recorder, Reporter},
};
use serde_json::Value;

/// A widget `w1` and a recorder publishing about it as the operator does.
async fn widget_and_recorder(sim: &KubeSim) -> (Widget, Recorder) {
    install_widget_crd(&sim.client()).await;
    let widget = Api::<Widget>::namespaced(sim.client(), "default")
        .create(&PostParams::default(), &Widget::new("w1", WidgetSpec { size: 1 }))
        .await
        .expect("widget created");
    let reporter = Reporter {
        controller: "ferrvault-operator".into(),
        instance: Some("ferrvault-operator-0".into()),
    };
    (widget, Recorder::new(sim.client(), reporter))
}

fn sync_failed() -> Published {
    Published {
        type_: EventType::Warning,
        reason: "SyncFailed".into(),
        note: Some("FerrVaultUnavailable: 3 retries".into()),
        action: "Sync".into(),
        secondary: None,
    }
}

#[tokio::test]
async fn an_events_api_event_should_be_listed_by_kubectl_get_events_as_a_core_event() {
    let sim = sim().await;
    let (widget, recorder) = widget_and_recorder(&sim).await;
    let reference = widget.object_ref(&());
    recorder
        .publish(&sync_failed(), &reference)
        .await
        .expect("created");
    recorder
        .publish(&sync_failed(), &reference)
        .await
        .expect("patched as a series");

    let k = Kubectl::new(&sim);
    let table = k.ok(&["get", "events", "-n", "default"]).await;
    let lines: Vec<&str> = table.lines().collect();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        header,
        ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        "{table}"
    );
    let row: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        row[1..],
        [
            "Warning",
            "SyncFailed",
            "widget/w1",
            "FerrVaultUnavailable:",
            "3",
            "retries"
        ],
        "{table}"
    );

    let core: Value =
        serde_json::from_str(&k.ok(&["get", "events", "-n", "default", "-o", "json"]).await).expect("json");
    let event = &core["items"][0];
    assert_eq!(event["apiVersion"], "v1");
    assert_eq!(event["involvedObject"]["name"], "w1");
    assert_eq!(event["message"], "FerrVaultUnavailable: 3 retries");
    assert_eq!(event["reportingComponent"], "ferrvault-operator");
    assert_eq!(
        event["series"]["count"], 2,
        "the merge patch of the events API reached it"
    );

    let through_events_api = Api::<Event>::namespaced(sim.client(), "default")
        .list(&ListParams::default().fields("regarding.name=w1"))
        .await
        .expect("events.k8s.io list");
    let e = &through_events_api.items[0];
    assert_eq!(
        (e.note.as_deref(), e.reporting_controller.as_deref()),
        (
            Some("FerrVaultUnavailable: 3 retries"),
            Some("ferrvault-operator")
        )
    );
    assert_eq!(e.regarding.as_ref().and_then(|r| r.name.as_deref()), Some("w1"));
}

#[tokio::test]
async fn kubectl_describe_should_show_the_events_of_the_object() {
    let sim = sim().await;
    let (widget, recorder) = widget_and_recorder(&sim).await;
    recorder
        .publish(&sync_failed(), &widget.object_ref(&()))
        .await
        .expect("created");
    let k = Kubectl::new(&sim);
    let described = k.ok(&["describe", "widget", "w1"]).await;
    let events = described
        .split("Events:")
        .nth(1)
        .unwrap_or_else(|| panic!("no Events section: {described}"));
    assert!(!events.contains("<none>"), "{described}");
    let row = events
        .lines()
        .find(|l| l.contains("SyncFailed"))
        .unwrap_or_else(|| panic!("no SyncFailed event: {described}"));
    assert!(
        row.contains("Warning")
            && row.contains("ferrvault-operator")
            && row.contains("FerrVaultUnavailable: 3 retries"),
        "{row}"
    );
}

#[tokio::test]
async fn core_event_field_selectors_should_find_events_written_through_the_events_api() {
    let sim = sim().await;
    let (widget, recorder) = widget_and_recorder(&sim).await;
    recorder
        .publish(&sync_failed(), &widget.object_ref(&()))
        .await
        .expect("created");
    let core: Api<CoreEvent> = Api::namespaced(sim.client(), "default");
    let uid = widget.metadata.uid.clone().expect("uid");
    let matching = core
        .list(&ListParams::default().fields(&format!(
            "involvedObject.name=w1,involvedObject.kind=Widget,involvedObject.uid={uid}"
        )))
        .await
        .expect("list");
    assert_eq!(matching.items.len(), 1);
    let other = core
        .list(&ListParams::default().fields("involvedObject.name=w2"))
        .await
        .expect("list");
    assert!(other.items.is_empty());
}
