//! End-to-end: a connection's service-account token as `GET /operator/me` describes it (issue 38
//! point 5): expiry and role in status, the `TokenHealthy` condition, a Warning Event and the
//! expiry gauge 7 days before it expires; a server without `me` reported once, not asked again.

use ferrvault_operator::api::FerrVaultConnection;
use ferrvault_sim::ferrvault::{Endpoint, Role, Unserved};

use crate::operator_support::*;

/// The harness's simulator with the prod token expiring in `days` days as a `writer`.
async fn start_with_token_expiring_in(days: i64) -> (Harness, jiff::Timestamp) {
    let expires_at = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(24 * days);
    let fv = sim_config()
        .token_expires_at(PROD_TOKEN, expires_at)
        .token_role(PROD_TOKEN, Role::Writer);
    let h = Harness::start_with_fv(test_settings(), fv).await;
    (h, expires_at)
}

async fn token_condition(h: &Harness, reason: &str) -> FerrVaultConnection {
    h.eventually(&format!("TokenHealthy with reason {reason}"), || async {
        let conn = h.fvc().get("conn").await.ok()?;
        let status = conn.status.as_ref()?;
        (condition(&status.conditions, "TokenHealthy")?.reason == reason).then_some(conn)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_expiring_within_seven_days_should_be_reported_in_status_an_event_and_the_gauge() {
    let (h, expires_at) = start_with_token_expiring_in(5).await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let conn = token_condition(&h, "TokenExpiresSoon").await;
    let status = conn.status.expect("status");
    let healthy = condition(&status.conditions, "TokenHealthy").expect("condition");
    assert_eq!(healthy.status, "False");
    assert!(
        healthy.message.contains("writer token expires at"),
        "{}",
        healthy.message
    );
    assert_eq!(
        status.token_expires_at.map(|t| t.0.as_second()),
        Some(expires_at.as_second())
    );
    assert_eq!(status.token_role.as_deref(), Some("writer"));
    assert_eq!(
        ready(Some(&status.conditions)).expect("ready").reason,
        "Reachable",
        "Ready is the probe's"
    );

    let events = h
        .eventually("the TokenExpiresSoon Event", || async {
            let events = h.events_for("conn", "TokenExpiresSoon").await;
            (!events.is_empty()).then_some(events)
        })
        .await;
    assert_eq!(events[0].type_.as_deref(), Some("Warning"));
    let gauge = r#"ferrvault_connection_token_expiry_timestamp_seconds{namespace="default",name="conn"}"#;
    h.eventually("the token expiry gauge", || async {
        (h.metric(gauge) == Some(expires_at.as_second() as f64)).then_some(())
    })
    .await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_with_more_than_seven_days_left_should_be_healthy_without_an_event() {
    let (h, _) = start_with_token_expiring_in(30).await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let conn = token_condition(&h, "TokenValid").await;
    assert_eq!(
        condition(&conn.status.unwrap().conditions, "TokenHealthy")
            .unwrap()
            .status,
        "True"
    );
    assert!(h.events_for("conn", "TokenExpiresSoon").await.is_empty());
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_me_should_be_reported_once_and_not_asked_again_at_that_generation() {
    let h = Harness::start_with_fv(
        test_settings(),
        sim_config().unserved(Endpoint::Me, Unserved::NotFound),
    )
    .await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let conn = token_condition(&h, "Unsupported").await;
    let status = conn.status.expect("status");
    assert_eq!(
        condition(&status.conditions, "TokenHealthy").unwrap().status,
        "Unknown"
    );
    assert_eq!(ready(Some(&status.conditions)).unwrap().reason, "Reachable");
    let asked = h.fv.stats().total.endpoints.get("me").copied();
    assert_eq!(asked, Some(1));
    // A token Secret change makes the next pass probe again, at the same generation.
    h.put_secret("conn-token", &[("token", PROD_TOKEN), ("rotated", "1")])
        .await;
    h.eventually("a second probe", || async {
        (h.fv.stats().total.endpoints.get("healthz").copied().unwrap_or(0) >= 2).then_some(())
    })
    .await;
    assert_eq!(
        h.fv.stats().total.endpoints.get("me").copied(),
        Some(1),
        "me is not asked again"
    );
    h.finish().await;
}
