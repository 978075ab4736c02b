//! Scenario 1 of issue 7, the incident the Go operator had: 29 FerrVaultSecrets share one
//! FerrVault token limited to 1 request/s (burst 5, rejected requests spending budget) while 4
//! connections cannot read their token Secret.

use std::time::{Duration, Instant};

use crate::scenario_support::{
    cluster::{CONNECTION, Cluster, TOKEN_LABEL, ferrvault_config},
    finish,
    fixtures::{PROD_TOKEN, secret_spec},
    operator::OperatorProcess,
};
use ferrvault_sim::ferrvault::rate_limit::RateLimit;

const HEALTHY: usize = 29;
const BURST: u32 = 5;
const RATE: f64 = 1.0;

#[tokio::test(flavor = "multi_thread")]
async fn one_rate_limited_token_should_converge_near_the_ideal_time_without_429s_or_requests_for_broken_connections()
 {
    let started = Instant::now();
    let cluster = Cluster::start(ferrvault_config(
        RateLimit {
            per_second: RATE,
            burst: BURST,
        },
        true,
    ))
    .await;
    cluster.healthy_connection().await;
    let healthy = cluster.create_many("app", HEALTHY, CONNECTION).await;
    // Two token Secrets that do not exist, two that lack the `token` key.
    let mut broken = Vec::new();
    for i in 0..4 {
        let (conn, token_secret) = (format!("broken-{i}"), format!("broken-token-{i}"));
        if i % 2 == 1 {
            cluster
                .create_secret(&token_secret, &[("not-token", PROD_TOKEN)])
                .await;
        }
        cluster.connection(&conn, &token_secret).await;
        let name = format!("broken-app-{i}");
        cluster.create_fvs(&name, secret_spec(&conn, "prod")).await;
        broken.push(name);
    }

    let launched = Instant::now();
    let operator = OperatorProcess::launch(
        &cluster,
        "1-incident",
        "operator-0",
        &["--ferrvault-rate=1", "--ferrvault-burst=5"],
    );
    let ideal = (HEALTHY as f64 - f64::from(BURST)) / RATE;
    let budget = Duration::from_secs_f64(1.2 * ideal + 10.0);
    cluster
        .wait_reason(&healthy, "True", "Synced", budget + Duration::from_secs(30))
        .await;
    let took = launched.elapsed();
    cluster
        .wait_reason(&broken, "False", "TokenUnreadable", Duration::from_secs(30))
        .await;

    assert!(
        took <= budget,
        "all {HEALTHY} healthy secrets Ready took {took:?}, over 1.2 × ideal ({ideal}s) + 10s = {budget:?}"
    );
    for name in &healthy {
        cluster.assert_synced_target(name).await;
    }
    let stats = cluster.fv.stats();
    // A broken connection has no credential, so a request for it could only be anonymous;
    // anonymous requests may only be the unauthenticated health probes of connections.
    let unexpected: Vec<_> = stats
        .tokens
        .iter()
        .filter(|(key, counters)| {
            *key != TOKEN_LABEL && counters.endpoints.keys().any(|endpoint| endpoint != "healthz")
        })
        .collect();
    assert!(
        unexpected.is_empty(),
        "requests were sent for credentials other than the healthy token: {unexpected:?}"
    );
    let total = stats.total.requests;
    let throttled = stats.total.rate_limited;
    assert!(
        throttled as f64 <= 0.01 * total as f64,
        "{throttled} of {total} FerrVault requests were answered 429 (at most 1% allowed)"
    );
    eprintln!(
        "scenario 1: {HEALTHY} Ready in {took:.1?} (ideal {ideal}s, budget {budget:?}); {total} requests, {throttled} 429s"
    );

    finish("1-incident", started, &cluster, vec![operator], &[]).await;
}
