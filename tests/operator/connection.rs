//! End-to-end: the FerrVaultConnection reconciler (first-pass probe, failures, deletion
//! blocking, OIDC exchange and invalidation, no fan-out of probe status writes).

use std::time::Duration;

use crate::operator_support::*;
use ferrvault_operator::api::names::CONNECTION_FINALIZER;
use ferrvault_sim::ferrvault::{Endpoint, FaultSpec};
use kube::{
    ResourceExt,
    api::{DeleteParams, Patch, PatchParams},
};
use serde_json::json;

/// Waits until `conn`'s `ferrvault_connection_ready` gauge reads `value`: it is set right after
/// the status write a test waits for.
async fn ready_gauge_reads(h: &Harness, value: f64) {
    h.eventually("the connection's ready gauge", || async {
        (h.metric(r#"ferrvault_connection_ready{namespace="default",name="conn"}"#) == Some(value))
            .then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_connection_should_get_its_finalizer_and_be_probed_in_the_first_pass() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let conn = h.wait_connection_reason("conn", "Reachable").await;
    assert!(conn.finalizers().iter().any(|f| f == CONNECTION_FINALIZER));
    let status = conn.status.unwrap();
    assert!(status.last_checked_at.is_some());
    let ready = ready(Some(&status.conditions)).unwrap();
    assert_eq!(ready.status, "True");
    assert_eq!(ready.message, format!("{} responded to /healthz", h.fv.url()));
    ready_gauge_reads(&h, 1.0).await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_probe_should_report_unreachable_and_a_missing_token_token_unreadable() {
    let h = Harness::start().await;
    h.fv.faults().set(
        Endpoint::Healthz,
        FaultSpec::default().with_server_errors(1.0, 503),
    );
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.wait_connection_reason("conn", "Unreachable").await;
    ready_gauge_reads(&h, 0.0).await;
    h.create_connection("other", connection_spec(&h.fv.url(), "absent"))
        .await;
    h.wait_connection_reason("other", "TokenUnreadable").await;
    h.fv.faults().clear(Endpoint::Healthz);
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_deletion_should_be_blocked_while_secrets_reference_it_then_allowed() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    for i in 0..6 {
        h.create_secret(&format!("app-{i}"), secret_spec("conn", "prod"))
            .await;
    }
    h.wait_connection_reason("conn", "Reachable").await;
    h.fvc().delete("conn", &DeleteParams::default()).await.unwrap();
    let blocked = h.wait_connection_reason("conn", "DeletionBlocked").await;
    let message = ready(blocked.status.as_ref().map(|s| s.conditions.as_slice()))
        .unwrap()
        .message
        .clone();
    assert_eq!(
        message,
        "cannot delete: still referenced by 6 FerrVaultSecret(s): [app-0 app-1 app-2 app-3 app-4] (and 1 more)"
    );
    h.eventually("a DeletionBlocked event", || async {
        (!h.events_for("conn", "DeletionBlocked").await.is_empty()).then_some(())
    })
    .await;

    for i in 0..6 {
        h.fvs()
            .delete(&format!("app-{i}"), &DeleteParams::default())
            .await
            .unwrap();
    }
    h.eventually("the connection gone once nothing references it", || async {
        h.fvc().get_opt("conn").await.ok()?.is_none().then_some(())
    })
    .await;
    h.eventually("the ready series removed", || async {
        h.metric(r#"ferrvault_connection_ready{namespace="default",name="conn"}"#)
            .is_none()
            .then_some(())
    })
    .await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oidc_connection_should_exchange_once_and_again_after_a_spec_change() {
    let h = Harness::start().await;
    h.create_connection("conn", h.oidc_connection_spec()).await;
    let mut spec = secret_spec("conn", "prod");
    spec.project = Some("shop".into());
    h.create_secret("app", spec).await;
    h.wait_secret_reason("app", "Synced").await;
    h.wait_connection_reason("conn", "Reachable").await;
    let exchanges = || {
        h.fv.stats()
            .total
            .endpoints
            .get("oidc_exchange")
            .copied()
            .unwrap_or(0)
    };
    assert_eq!(exchanges(), 1, "probe and reveal share one cached bearer");
    let target = h.secrets().get("app").await.unwrap();
    assert_eq!(data_of(&target)["DB_URL"], DB_URL.as_bytes());

    // A spec change (new generation) forgets the bearer: the next probe exchanges again.
    let patch = json!({"spec": {"oidc": {"audience": "https://ferrvault.example"}}});
    h.fvc()
        .patch("conn", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    h.eventually("a second OIDC exchange after the spec change", || async {
        (exchanges() >= 2).then_some(())
    })
    .await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_status_writes_should_not_resync_dependent_secrets() {
    let mut settings = test_settings();
    settings.connection_probe_interval = Duration::from_millis(200);
    let h = Harness::start_with(settings).await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    // Ready before the secret exists, so its first change (none → True) is behind us.
    h.wait_connection_reason("conn", "Reachable").await;
    h.create_secret("app", secret_spec("conn", "prod")).await;
    h.wait_secret_reason("app", "Synced").await;
    let reveals = h.reveals();
    let probes = || h.fv.stats().total.endpoints.get("healthz").copied().unwrap_or(0);
    let seen = probes();
    h.eventually("five more probes", || async {
        (probes() >= seen + 5).then_some(())
    })
    .await;
    assert_eq!(
        h.reveals(),
        reveals,
        "lastCheckedAt writes do not fan out to secrets"
    );

    // A Ready flip does: the secrets re-check their connection.
    h.fv.faults().set(
        Endpoint::Healthz,
        FaultSpec::default().with_server_errors(1.0, 503),
    );
    h.wait_connection_reason("conn", "Unreachable").await;
    h.eventually("a resync after the Ready change", || async {
        (h.reveals() > reveals).then_some(())
    })
    .await;
    h.fv.faults().clear(Endpoint::Healthz);
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_secret_created_later_should_make_the_connection_reachable_at_once() {
    let h = Harness::start().await;
    h.create_connection("conn", connection_spec(&h.fv.url(), "late-token"))
        .await;
    h.wait_connection_reason("conn", "TokenUnreadable").await;
    h.put_secret("late-token", &[("token", PROD_TOKEN)]).await;
    h.wait_connection_reason("conn", "Reachable").await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_or_invalid_ca_bundle_should_be_reported() {
    let h = Harness::start().await;
    h.put_secret("conn-token", &[("token", PROD_TOKEN)]).await;
    let mut spec = connection_spec(&h.fv.url(), "conn-token");
    spec.ca_bundle_secret_ref = Some(ferrvault_operator::api::SecretKeyRef {
        name: "ca".into(),
        key: "ca.crt".into(),
    });
    h.create_connection("conn", spec).await;
    h.wait_connection_reason("conn", "CaBundleUnreadable").await;
    h.put_secret("ca", &[("ca.crt", "not a certificate")]).await;
    h.wait_connection_reason("conn", "InvalidConnection").await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_namespace_should_limit_the_operator_to_that_namespace() {
    let mut settings = test_settings();
    settings.watch_namespaces = vec!["team".into()];
    let h = Harness::start_with(settings).await;
    let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(h.client.clone());
    let team: k8s_openapi::api::core::v1::Namespace =
        serde_json::from_value(json!({"metadata": {"name": "team"}})).unwrap();
    namespaces.create(&Default::default(), &team).await.unwrap();
    // In the watched namespace: reconciled.
    let team_conns: kube::Api<ferrvault_operator::api::FerrVaultConnection> =
        kube::Api::namespaced(h.client.clone(), "team");
    let team_secrets: kube::Api<k8s_openapi::api::core::v1::Secret> =
        kube::Api::namespaced(h.client.clone(), "team");
    let token: k8s_openapi::api::core::v1::Secret =
        serde_json::from_value(json!({"metadata": {"name": "t"}, "stringData": {"token": PROD_TOKEN}}))
            .unwrap();
    team_secrets.create(&Default::default(), &token).await.unwrap();
    team_conns
        .create(
            &Default::default(),
            &ferrvault_operator::api::FerrVaultConnection::new("conn", connection_spec(&h.fv.url(), "t")),
        )
        .await
        .unwrap();
    // Outside it: untouched.
    h.put_secret("conn-token", &[("token", PROD_TOKEN)]).await;
    h.create_connection("conn", connection_spec(&h.fv.url(), "conn-token"))
        .await;
    eventually("the team connection probed", || async {
        let c = team_conns.get("conn").await.ok()?;
        (ready(c.status.as_ref().map(|s| s.conditions.as_slice()))?.reason == "Reachable").then_some(())
    })
    .await;
    let outside = h.fvc().get("conn").await.unwrap();
    assert!(
        outside.status.is_none() && outside.finalizers().is_empty(),
        "default namespace ignored"
    );
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_whose_url_keeps_changing_should_keep_one_pooled_http_client_and_none_once_deleted() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.wait_connection_reason("conn", "Reachable").await;
    let pooled = || h.metric("ferrvault_client_pooled_http_clients");
    assert_eq!(pooled(), Some(1.0));
    for edit in 1..=20 {
        // Another base URL each time (the simulator answers none of them: the probe's answer
        // does not matter, the client it was sent with does).
        let url = format!("{}/edit-{edit}", h.fv.url());
        let changed = h
            .fvc()
            .patch(
                "conn",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"url": url}})),
            )
            .await
            .expect("URL edited");
        let generation = changed.metadata.generation;
        eventually("the edited URL probed", || async {
            let c = h.fvc().get("conn").await.ok()?;
            let probed = ready(c.status.as_ref().map(|s| s.conditions.as_slice()))?.observed_generation;
            (probed == generation).then_some(())
        })
        .await;
        assert_eq!(pooled(), Some(1.0), "after edit {edit}");
    }
    h.fvc()
        .delete("conn", &DeleteParams::default())
        .await
        .expect("deleted");
    eventually("the connection gone", || async {
        h.fvc().get("conn").await.is_err().then_some(())
    })
    .await;
    eventually("no pooled client left", || async {
        (pooled() == Some(0.0)).then_some(())
    })
    .await;
    h.finish().await;
}
