//! `suspend` / `resume`: `spec.suspend` patched, and refused where the CRD cannot hold it.

use serde_json::{Value, json};

use crate::support::{Cluster, Crds, NS};

async fn suspend_field(api: &kube::Api<kube::api::DynamicObject>, name: &str) -> Value {
    let object = api.get(name).await.expect("the object");
    object
        .data
        .pointer("/spec/suspend")
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread")]
async fn suspend_and_resume_should_set_and_remove_spec_suspend() {
    let cluster = Cluster::start().await;
    cluster.create_fvs(NS, "app", "prod", json!({})).await;
    cluster.create_fvs(NS, "db", "prod", json!({})).await;
    cluster
        .create_connection(NS, "prod", "prod-token", "LEAKCHECK-token")
        .await;
    let fvs = cluster.fvs(NS);

    let run = cluster.plugin(&["suspend", "app"]).await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "ferrvaultsecret/app suspended\n"),
        "{run:?}"
    );
    assert_eq!(suspend_field(&fvs, "app").await, json!(true));
    assert_eq!(
        suspend_field(&fvs, "db").await,
        Value::Null,
        "only the named object"
    );
    let status = cluster.plugin(&["status", "-o", "json"]).await.json();
    assert_eq!(status["items"][0]["suspended"], json!(true));

    let run = cluster.plugin(&["resume", "fvs/app"]).await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "ferrvaultsecret/app resumed\n"),
        "{run:?}"
    );
    assert_eq!(
        suspend_field(&fvs, "app").await,
        Value::Null,
        "resuming removes the field, so nothing is defaulted into the object"
    );

    let run = cluster.plugin(&["suspend", "--all"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    for name in ["app", "db"] {
        assert_eq!(suspend_field(&fvs, name).await, json!(true), "{name}");
    }

    let run = cluster.plugin(&["suspend", "fvc/prod"]).await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "ferrvaultconnection/prod suspended\n"),
        "{run:?}"
    );
    assert_eq!(suspend_field(&cluster.fvc(NS), "prod").await, json!(true));
}

#[tokio::test(flavor = "multi_thread")]
async fn suspend_should_fail_on_a_cluster_whose_crd_has_no_suspend_field() {
    let cluster = Cluster::start_with(Crds::WithoutIssue36).await;
    cluster.create_fvs(NS, "app", "prod", json!({})).await;
    let run = cluster.plugin(&["suspend", "app"]).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("the cluster's CRD has no spec.suspend") && run.stdout.is_empty(),
        "{run:?}"
    );
    assert_eq!(suspend_field(&cluster.fvs(NS), "app").await, Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn suspend_should_exit_1_for_a_missing_object() {
    let cluster = Cluster::start().await;
    let run = cluster.plugin(&["suspend", "ghost"]).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stderr,
        "Error from server (NotFound): ferrvaultsecrets.ferrvault.com \"ghost\" not found\n"
    );
}
