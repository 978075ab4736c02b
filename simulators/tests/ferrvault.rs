//! The FerrVault simulator driven over real HTTP on 127.0.0.1: every status path, rate limiting with
//! and without debt, capped debt and sliding window, faults, accounting, cloud mode, OIDC exchange, the admin paths and the CLI.

use std::time::{Duration, SystemTime};

use ferrvault_sim::ferrvault::{
    Endpoint, FaultSpec, FerrVaultSim, LimiterMode, RetryAfterFormat, SimConfig, SimStats, token_fingerprint,
};
use serde_json::{Value, json};

const PROD_SAT: &str = "fvsat_prod_test_token";
const STAGING_SAT: &str = "fvsat_staging_test_token";
const ORG_TOKEN: &str = "fft_acme_test_token";
const OTHER_ORG_TOKEN: &str = "fft_globex_test_token";
const JWT: &str = "eyJhbGciOi.test.jwt";
const DB_URL: &str = "postgres://app:hunter2@db/prod";
/// Generous: only turns a hang into a failure.
const HANG_GUARD: Duration = Duration::from_secs(20);

fn config() -> SimConfig {
    SimConfig::default()
        .vault("prod", [("DB_URL", DB_URL), ("API_KEY", "sk_live_1")])
        .vault("staging", [("DB_URL", "postgres://staging")])
        .cloud_vault(
            "acme",
            "shop 1",
            "my vault/blue",
            [("DB URL", "v1"), ("API&KEY", "v2"), ("OTHER", "v3")],
        )
        .service_account_token(PROD_SAT, "prod")
        .token_label(PROD_SAT, "prod-sat")
        .service_account_token(STAGING_SAT, "staging")
        .org_token(ORG_TOKEN, "acme")
        .org_token(OTHER_ORG_TOKEN, "globex")
        .oidc_cluster("cluster-1", JWT, "acme")
}

/// A running simulator and an HTTP client for it.
struct Fixture {
    sim: FerrVaultSim,
    http: reqwest::Client,
}

impl Fixture {
    async fn start(config: SimConfig) -> Self {
        // Another test in this process may have installed the provider first; either way one is set.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let sim = FerrVaultSim::start(config).await.expect("simulator should start");
        let http = reqwest::Client::builder()
            .timeout(HANG_GUARD)
            .build()
            .expect("client builds");
        Self { sim, http }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.sim.url())
    }

    async fn reveal(&self, token: Option<&str>, body: Value) -> reqwest::Response {
        let mut request = self.http.post(self.url("/operator/secrets/reveal")).json(&body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send().await.expect("reveal should get an HTTP answer")
    }

    async fn reveal_prod(&self) -> reqwest::Response {
        self.reveal(Some(PROD_SAT), json!({ "vault": "prod" })).await
    }

    /// The request `reveal_prod` sends, built on `client`, for tests that send it themselves.
    fn reveal_prod_request(&self, client: &reqwest::Client) -> reqwest::RequestBuilder {
        client
            .post(self.url("/operator/secrets/reveal"))
            .bearer_auth(PROD_SAT)
            .json(&json!({ "vault": "prod" }))
    }

    /// Make reveals hang, send a prod reveal in the background, and hand it back once the
    /// simulator holds it.
    async fn hanging_reveal(&self) -> tokio::task::JoinHandle<reqwest::Result<reqwest::Response>> {
        self.sim
            .faults()
            .set(Endpoint::Reveal, FaultSpec::default().with_hang());
        let pending = tokio::spawn(self.reveal_prod_request(&self.http).send());
        self.sim
            .wait_for_requests(1, HANG_GUARD)
            .await
            .expect("the request should reach the simulator");
        pending
    }

    async fn cloud(&self, token: &str, namespace: Option<&str>, path_and_query: &str) -> reqwest::Response {
        let mut request = self.http.get(self.url(path_and_query)).bearer_auth(token);
        if let Some(namespace) = namespace {
            request = request.header("X-FerrVault-Namespace", namespace);
        }
        request
            .send()
            .await
            .expect("cloud reveal should get an HTTP answer")
    }

    async fn exchange(&self, cluster_id: &str, jwt: &str) -> reqwest::Response {
        let body = json!({ "cluster_id": cluster_id, "token": jwt });
        let url = self.url("/api/v1/clusters/oidc-exchange");
        self.http
            .post(url)
            .json(&body)
            .send()
            .await
            .expect("exchange should get an HTTP answer")
    }
}

async fn status_and_json(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let body = response.json().await.expect("body should be JSON");
    (status, body)
}

fn retry_after(response: &reqwest::Response) -> String {
    let value = response
        .headers()
        .get("retry-after")
        .expect("a 429 should carry Retry-After");
    value.to_str().expect("Retry-After is ASCII").to_owned()
}

// === endpoints and status codes ===

#[tokio::test]
async fn healthz_should_answer_ok_without_auth_and_never_be_rate_limited() {
    let fx = Fixture::start(config().rate_limit(1.0, 1).debt_mode(true)).await;
    for _ in 0..20 {
        let (status, body) = status_and_json(fx.http.get(fx.url("/healthz")).send().await.unwrap()).await;
        assert_eq!((status, body), (200, json!({ "status": "ok" })));
    }
    let stats = fx.sim.stats();
    assert_eq!(stats.total.rate_limited, 0);
    assert_eq!(stats.total.endpoints.get("healthz"), Some(&20));
}

#[tokio::test]
async fn reveal_should_return_requested_hits_and_missing_names() {
    let fx = Fixture::start(config()).await;
    let body = json!({ "vault": "prod", "names": ["DB_URL", "NOPE"] });
    let (status, body) = status_and_json(fx.reveal(Some(PROD_SAT), body).await).await;
    assert_eq!(status, 200);
    let hits = body["hits"].as_array().expect("hits is an array");
    assert_eq!(hits.len(), 1);
    assert_eq!(
        (hits[0]["name"].as_str(), hits[0]["value"].as_str()),
        (Some("DB_URL"), Some(DB_URL))
    );
    assert_eq!(hits[0]["version"], 1);
    let fetched_at = hits[0]["fetched_at"].as_str().expect("fetched_at is a string");
    fetched_at
        .parse::<jiff::Timestamp>()
        .expect("fetched_at should be RFC 3339");
    assert_eq!(body["missing"], json!(["NOPE"]));
}

#[tokio::test]
async fn reveal_without_names_should_return_every_key_of_the_vault() {
    let fx = Fixture::start(config()).await;
    let (status, body) = status_and_json(fx.reveal_prod().await).await;
    assert_eq!(status, 200);
    let names: Vec<&str> = body["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["API_KEY", "DB_URL"]);
    assert_eq!(body["missing"], json!([]));
}

#[tokio::test]
async fn reveal_should_answer_401_for_absent_unknown_or_wrong_kind_tokens() {
    let fx = Fixture::start(config()).await;
    for token in [None, Some("fvsat_unknown"), Some(ORG_TOKEN)] {
        let (status, body) = status_and_json(fx.reveal(token, json!({ "vault": "prod" })).await).await;
        assert_eq!(
            (status, body),
            (401, json!({ "error": "unauthorized" })),
            "token {token:?}"
        );
    }
}

#[tokio::test]
async fn reveal_with_another_vaults_token_should_answer_403_wrong_vault_in_message() {
    let fx = Fixture::start(config()).await;
    let (status, body) =
        status_and_json(fx.reveal(Some(STAGING_SAT), json!({ "vault": "prod" })).await).await;
    assert_eq!((status, body), (403, json!({ "message": "wrong vault" })));
}

#[tokio::test]
async fn reveal_of_an_unknown_vault_or_with_a_bad_body_should_answer_404_or_400() {
    let fx = Fixture::start(config()).await;
    let (status, body) = status_and_json(fx.reveal(Some(PROD_SAT), json!({ "vault": "nope" })).await).await;
    assert_eq!((status, body["error"].as_str()), (404, Some("vault not found")));
    let (status, _) = status_and_json(fx.reveal(Some(PROD_SAT), json!({ "names": [] })).await).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn put_secret_should_change_the_value_and_bump_the_version() {
    let fx = Fixture::start(config()).await;
    assert!(fx.sim.put_secret("prod", "DB_URL", "postgres://new"));
    let (_, body) = status_and_json(
        fx.reveal(Some(PROD_SAT), json!({ "vault": "prod", "names": ["DB_URL"] }))
            .await,
    )
    .await;
    assert_eq!(
        (
            body["hits"][0]["value"].as_str(),
            body["hits"][0]["version"].as_u64()
        ),
        (Some("postgres://new"), Some(2))
    );
}

// === rate limiting ===

#[tokio::test]
async fn rate_limiter_should_answer_429_with_integer_retry_after_once_the_burst_is_spent() {
    let fx = Fixture::start(config().rate_limit(1.0, 2)).await;
    assert_eq!(fx.reveal_prod().await.status(), 200);
    assert_eq!(fx.reveal_prod().await.status(), 200);
    let rejected = fx.reveal_prod().await;
    assert_eq!(rejected.status(), 429);
    assert_eq!(retry_after(&rejected), "1");
    let (_, body) = status_and_json(rejected).await;
    assert!(
        body["error"].is_string(),
        "429 body should carry an error: {body}"
    );
    let sat = fx.sim.stats().token("prod-sat");
    assert_eq!((sat.requests, sat.accepted, sat.rate_limited), (3, 2, 1));
    assert_eq!(
        fx.sim.token_stats(&token_fingerprint(PROD_SAT)),
        sat,
        "fingerprint should reach the label"
    );
}

#[tokio::test]
async fn retry_after_should_be_an_http_date_in_the_future_when_switched() {
    let fx = Fixture::start(config().rate_limit(1.0, 1)).await;
    fx.sim.set_retry_after_format(RetryAfterFormat::HttpDate);
    assert_eq!(fx.reveal_prod().await.status(), 200);
    let before = SystemTime::now();
    let rejected = fx.reveal_prod().await;
    assert_eq!(rejected.status(), 429);
    let date =
        httpdate::parse_http_date(&retry_after(&rejected)).expect("Retry-After should be an HTTP-date");
    // The next token is ~1s away; rounding up to a whole second adds at most one more.
    assert!(date > before, "Retry-After date should be in the future");
    assert!(
        date <= before + Duration::from_secs(3),
        "Retry-After date should be about 1s away"
    );
}

#[tokio::test]
async fn rate_limiter_without_debt_should_admit_again_after_one_refill_despite_rejections() {
    let fx = Fixture::start(config().rate_limit(1.0, 1)).await;
    assert_eq!(fx.reveal_prod().await.status(), 200);
    for _ in 0..3 {
        assert_eq!(fx.reveal_prod().await.status(), 429);
    }
    // One refill is 1s away; the rejections above should not have moved it.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    assert_eq!(
        fx.reveal_prod().await.status(),
        200,
        "rejections should be free without debt mode"
    );
}

#[tokio::test]
async fn rate_limiter_in_debt_mode_should_charge_rejections_and_push_retry_after_out() {
    let fx = Fixture::start(config().rate_limit(1.0, 1).debt_mode(true)).await;
    assert_eq!(fx.reveal_prod().await.status(), 200);
    let mut waits = Vec::new();
    for _ in 0..3 {
        let rejected = fx.reveal_prod().await;
        assert_eq!(rejected.status(), 429);
        waits.push(retry_after(&rejected).parse::<u64>().expect("integer seconds"));
    }
    assert!(
        waits.windows(2).all(|w| w[0] <= w[1]) && waits[2] >= 3,
        "debt should grow Retry-After: {waits:?}"
    );
    // 3 tokens of debt need 4s to pay back; one refill period later the bucket is still short.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    assert_eq!(
        fx.reveal_prod().await.status(),
        429,
        "the debt of 3 rejections should outlast one refill"
    );
}

#[tokio::test]
async fn capped_debt_should_charge_rejections_but_bound_retry_after_and_recovery() {
    let capped = LimiterMode::CappedDebt { max_debt: 1 };
    let fx = Fixture::start(config().rate_limit(1.0, 1).limiter_mode(capped)).await;
    assert_eq!(fx.reveal_prod().await.status(), 200);
    let mut waits = Vec::new();
    for _ in 0..5 {
        let rejected = fx.reveal_prod().await;
        assert_eq!(rejected.status(), 429);
        waits.push(retry_after(&rejected).parse::<u64>().expect("integer seconds"));
    }
    // Unbounded debt would say 2, 3, 4, 5, 6; one token of debt caps the wait at 2s.
    assert_eq!(waits, [2, 2, 2, 2, 2], "the debt should stop at its cap");
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    assert_eq!(
        fx.reveal_prod().await.status(),
        200,
        "a capped debt is paid back within (max_debt + 1) / rate"
    );
    let sat = fx.sim.stats().token("prod-sat");
    assert_eq!((sat.accepted, sat.rate_limited), (2, 5));
}

#[tokio::test]
async fn sliding_window_should_admit_its_capacity_per_window_whatever_the_burst() {
    let window = LimiterMode::SlidingWindow { window_seconds: 2.0 };
    let fx = Fixture::start(config().rate_limit(1.0, 5).limiter_mode(window)).await;
    assert_eq!(fx.reveal_prod().await.status(), 200);
    assert_eq!(fx.reveal_prod().await.status(), 200);
    let rejected = fx.reveal_prod().await;
    assert_eq!(rejected.status(), 429, "1/s over 2s admits 2, not the burst of 5");
    assert_eq!(retry_after(&rejected), "2");
    // Rejections are free: once the first two leave the window, two more are admitted.
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    assert_eq!(fx.reveal_prod().await.status(), 200);
    assert_eq!(fx.reveal_prod().await.status(), 200);
    assert_eq!(fx.reveal_prod().await.status(), 429);
}

#[tokio::test]
async fn set_rate_limit_should_change_one_tokens_budget_at_runtime() {
    let fx = Fixture::start(config().rate_limit(1.0, 5)).await;
    // Addressed by fingerprint although the token is labelled: it reaches the same bucket.
    fx.sim.set_rate_limit(&token_fingerprint(PROD_SAT), 0.5, 1);
    assert_eq!(fx.reveal_prod().await.status(), 200);
    let rejected = fx.reveal_prod().await;
    assert_eq!(
        (rejected.status().as_u16(), retry_after(&rejected)),
        (429, "2".to_owned())
    );
    // The staging token, addressed by fingerprint, keeps the default burst of 5.
    for _ in 0..5 {
        assert_eq!(
            fx.reveal(Some(STAGING_SAT), json!({ "vault": "staging" }))
                .await
                .status(),
            200
        );
    }
    assert_eq!(fx.sim.stats().token(&token_fingerprint(STAGING_SAT)).accepted, 5);
}

// === cloud mode and OIDC ===

const CLOUD_PATH: &str =
    "/api/v1/orgs/acme/projects/shop%201/vaults/by-name/my%20vault%2Fblue/secrets/reveal";

#[tokio::test]
async fn cloud_reveal_should_decode_path_segments_and_comma_joined_names() {
    let fx = Fixture::start(config()).await;
    let path = format!("{CLOUD_PATH}?names=DB%20URL%2CAPI%26KEY%2CNOPE");
    let (status, body) = status_and_json(fx.cloud(ORG_TOKEN, None, &path).await).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["secrets"], json!({ "DB URL": "v1", "API&KEY": "v2" }));
    assert_eq!(body["missing"], json!(["NOPE"]));
    assert_eq!(
        body["vault"],
        json!({ "id": "vault-my vault/blue", "name": "my vault/blue", "environment": "production" })
    );
    assert_eq!(fx.sim.stats().total.vaults.get("my vault/blue"), Some(&1));
}

#[tokio::test]
async fn cloud_reveal_without_names_should_return_every_secret() {
    let fx = Fixture::start(config()).await;
    let (status, body) = status_and_json(fx.cloud(ORG_TOKEN, None, CLOUD_PATH).await).await;
    assert_eq!(status, 200);
    assert_eq!(body["secrets"].as_object().map(|s| s.len()), Some(3));
}

#[tokio::test]
async fn cloud_reveal_should_refuse_wrong_kind_other_org_and_unknown_vaults() {
    let fx = Fixture::start(config()).await;
    assert_eq!(fx.cloud(PROD_SAT, None, CLOUD_PATH).await.status(), 401);
    let (status, body) = status_and_json(fx.cloud(OTHER_ORG_TOKEN, None, CLOUD_PATH).await).await;
    assert_eq!(status, 403);
    assert!(body["message"].is_string(), "403 should carry message: {body}");
    let unknown = "/api/v1/orgs/acme/projects/shop%201/vaults/by-name/nope/secrets/reveal";
    assert_eq!(fx.cloud(ORG_TOKEN, None, unknown).await.status(), 404);
    let wrong_project = "/api/v1/orgs/acme/projects/other/vaults/by-name/my%20vault%2Fblue/secrets/reveal";
    assert_eq!(fx.cloud(ORG_TOKEN, None, wrong_project).await.status(), 404);
}

#[tokio::test]
async fn oidc_exchange_should_mint_a_cluster_token_only_for_the_configured_jwt() {
    let fx = Fixture::start(config().cluster_token_ttl(Duration::from_secs(600))).await;
    assert_eq!(fx.exchange("cluster-1", "forged.jwt").await.status(), 401);
    assert_eq!(fx.exchange("cluster-2", JWT).await.status(), 401);
    let (status, body) = status_and_json(fx.exchange("cluster-1", JWT).await).await;
    assert_eq!(status, 200);
    assert_eq!(body["token_type"], "Bearer");
    let token = body["access_token"].as_str().expect("access_token");
    assert!(
        token.starts_with("ffclust_"),
        "minted token should be a cluster token"
    );
    let expires: jiff::Timestamp = body["expires_at"]
        .as_str()
        .unwrap()
        .parse()
        .expect("RFC 3339 expires_at");
    let ttl = expires.duration_since(jiff::Timestamp::now()).as_secs();
    assert!(
        (590..=600).contains(&ttl),
        "expires_at should be ~600s away, is {ttl}s"
    );

    let (status, body) = status_and_json(fx.cloud(token, None, CLOUD_PATH).await).await;
    assert_eq!(
        status, 400,
        "a cluster token without X-FerrVault-Namespace should be refused: {body}"
    );
    assert_eq!(fx.cloud(token, Some("team-a"), CLOUD_PATH).await.status(), 200);
    fx.sim.expire_cluster_tokens();
    assert_eq!(fx.cloud(token, Some("team-a"), CLOUD_PATH).await.status(), 401);
    let stats = fx.sim.stats();
    assert_eq!(stats.token("oidc:cluster-1").statuses.get("200"), Some(&1));
    assert_eq!(stats.token("oidc:cluster-1").statuses.get("401"), Some(&1));
    assert_eq!(stats.token("oidc:cluster-2").requests, 1);
}

#[tokio::test]
async fn minted_cluster_tokens_should_work_for_their_whole_ttl_and_stop_after_it() {
    const TTL: Duration = Duration::from_secs(2);
    /// Often enough that a token expiring a tenth of its TTL early meets a request in that tenth.
    const POLL: Duration = Duration::from_millis(50);
    // A bucket no poll can empty: every answer is about the token, never a 429.
    let fx = Fixture::start(config().cluster_token_ttl(TTL).rate_limit(1000.0, 1000)).await;
    let asked = tokio::time::Instant::now();
    let (status, body) = status_and_json(fx.exchange("cluster-1", JWT).await).await;
    let minted = tokio::time::Instant::now();
    assert_eq!(status, 200, "exchange: {body}");
    let token = body["access_token"].as_str().expect("access_token").to_owned();
    // The simulator minted the token between `asked` and `minted` (its clock is this process's
    // tokio clock), so it expires between `asked + TTL` and `minted + TTL`: an answer that came
    // back before `asked + TTL` was judged before the expiry and must be 200 (the lower bound);
    // a request sent after `minted + TTL` was judged after it and must be 401 (the upper bound).
    let mut answered_200 = 0;
    loop {
        let sent = tokio::time::Instant::now();
        let status = fx.cloud(&token, Some("ns"), CLOUD_PATH).await.status().as_u16();
        let answered = tokio::time::Instant::now();
        match status {
            200 => {
                answered_200 += 1;
                assert!(
                    sent <= minted + TTL,
                    "the token still answered 200 to a request sent {:?} after it was minted (TTL {TTL:?})",
                    sent - minted
                );
            }
            401 => {
                assert!(
                    answered >= asked + TTL,
                    "the token expired early: 401 answered {:?} after the exchange was asked (TTL {TTL:?})",
                    answered - asked
                );
                break;
            }
            other => panic!("a minted token's reveal answered {other}, not 200 or 401"),
        }
        tokio::time::sleep(POLL).await;
    }
    assert!(answered_200 > 0, "the token never answered 200 before it expired");
}

// === faults ===

#[tokio::test]
async fn server_error_fault_should_answer_the_configured_status_for_its_budget_then_recover() {
    let fx = Fixture::start(config()).await;
    fx.sim.faults().set(
        Endpoint::Reveal,
        FaultSpec::default().with_server_errors(1.0, 502).times(2),
    );
    assert_eq!(fx.reveal_prod().await.status(), 502);
    assert_eq!(fx.reveal_prod().await.status(), 502);
    assert_eq!(fx.reveal_prod().await.status(), 200);
}

#[tokio::test]
async fn latency_fault_should_delay_answers_of_its_endpoint_only() {
    let fx = Fixture::start(config()).await;
    fx.sim.faults().set(
        Endpoint::Reveal,
        FaultSpec::default().with_latency(Duration::from_millis(400)),
    );
    let started = tokio::time::Instant::now();
    assert_eq!(fx.reveal_prod().await.status(), 200);
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "reveal answered before the latency"
    );
    let started = tokio::time::Instant::now();
    assert_eq!(
        fx.http.get(fx.url("/healthz")).send().await.unwrap().status(),
        200
    );
    assert!(
        started.elapsed() < Duration::from_millis(400),
        "healthz should not be delayed"
    );
}

#[tokio::test]
async fn hang_fault_should_hold_requests_until_cleared() {
    let fx = Fixture::start(config()).await;
    let pending = fx.hanging_reveal().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!pending.is_finished(), "a hanging request should not be answered");
    assert_eq!(fx.sim.stats().total.in_flight, 1);
    fx.sim.faults().clear(Endpoint::Reveal);
    let response = tokio::time::timeout(HANG_GUARD, pending)
        .await
        .expect("clearing the fault should release the request")
        .expect("task")
        .expect("answer");
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn malformed_json_fault_should_answer_200_with_a_body_that_does_not_parse() {
    let fx = Fixture::start(config()).await;
    fx.sim
        .faults()
        .set(Endpoint::Reveal, FaultSpec::default().with_malformed_json());
    let response = fx.reveal_prod().await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    assert!(
        serde_json::from_str::<Value>(&text).is_err(),
        "body should be broken JSON: {text}"
    );
}

#[tokio::test]
async fn connection_reset_fault_should_close_the_connection_without_a_response() {
    let fx = Fixture::start(config()).await;
    fx.sim.faults().set(
        Endpoint::Reveal,
        FaultSpec::default().with_connection_reset().times(1),
    );
    let error = fx
        .reveal_prod_request(&fx.http)
        .send()
        .await
        .expect_err("a reset connection should not yield a response");
    assert!(
        error.status().is_none() && !error.is_timeout(),
        "expected a transport error, got {error:?}"
    );
    assert_eq!(fx.sim.stats().total.statuses.get("reset"), Some(&1));
    assert_eq!(
        fx.reveal_prod().await.status(),
        200,
        "the next request should be served again"
    );
}

#[tokio::test]
async fn oversized_body_fault_should_answer_at_least_the_requested_bytes() {
    let fx = Fixture::start(config()).await;
    fx.sim.faults().set(
        Endpoint::Reveal,
        FaultSpec::default().with_oversized_body(8 << 20),
    );
    let response = fx.reveal_prod().await;
    assert_eq!(response.status(), 200);
    assert!(response.bytes().await.unwrap().len() > 8 << 20);
}

#[tokio::test]
async fn faults_should_not_bypass_the_rate_limiter() {
    let fx = Fixture::start(config().rate_limit(1.0, 1)).await;
    fx.sim.faults().set(
        Endpoint::Reveal,
        FaultSpec::default().with_server_errors(1.0, 503),
    );
    assert_eq!(fx.reveal_prod().await.status(), 503);
    assert_eq!(fx.reveal_prod().await.status(), 429);
    assert_eq!(fx.reveal(None, json!({ "vault": "prod" })).await.status(), 401);
}

// === accounting ===

#[tokio::test]
async fn accounting_should_count_per_token_vault_endpoint_and_peak_concurrency() {
    let fx = Fixture::start(config()).await;
    fx.sim.faults().set(
        Endpoint::Reveal,
        FaultSpec::default().with_latency(Duration::from_millis(500)),
    );
    let calls = (0..4).map(|_| fx.reveal_prod());
    let statuses: Vec<u16> = futures::future::join_all(calls)
        .await
        .iter()
        .map(|r| r.status().as_u16())
        .collect();
    assert_eq!(statuses, [200; 4]);
    fx.reveal(Some(STAGING_SAT), json!({ "vault": "prod" })).await;
    fx.http.get(fx.url("/healthz")).send().await.unwrap();

    let stats = fx.sim.stats();
    let sat = stats.token("prod-sat");
    assert_eq!(
        (sat.requests, sat.accepted, sat.in_flight, sat.peak_in_flight),
        (4, 4, 0, 4)
    );
    assert_eq!(sat.vaults.get("prod"), Some(&4));
    let staging = stats.token(&token_fingerprint(STAGING_SAT));
    assert_eq!(staging.statuses.get("403"), Some(&1));
    assert_eq!(stats.total.vaults.get("prod"), Some(&5));
    assert_eq!(stats.total.endpoints.get("reveal"), Some(&5));
    assert_eq!(stats.total.endpoints.get("healthz"), Some(&1));
    assert_eq!(stats.total.requests, 6);
}

#[tokio::test]
async fn admin_stats_should_match_the_rust_stats_and_never_contain_a_token() {
    let fx = Fixture::start(config()).await;
    fx.reveal_prod().await;
    fx.reveal(Some(STAGING_SAT), json!({ "vault": "staging" })).await;
    fx.reveal(Some("fvsat_unknown_secret"), json!({ "vault": "prod" }))
        .await;
    let text = fx
        .http
        .get(fx.url("/_sim/stats"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for token in [PROD_SAT, STAGING_SAT, "fvsat_unknown_secret"] {
        assert!(!text.contains(token), "stats leaked a token: {text}");
    }
    let over_http: SimStats = serde_json::from_str(&text).expect("stats JSON");
    assert_eq!(over_http, fx.sim.stats());
    assert_eq!(
        over_http
            .token(&token_fingerprint("fvsat_unknown_secret"))
            .statuses
            .get("401"),
        Some(&1)
    );
}

#[tokio::test]
async fn reset_stats_should_zero_the_counters() {
    let fx = Fixture::start(config()).await;
    fx.reveal_prod().await;
    fx.sim.reset_stats();
    assert_eq!(fx.sim.stats().total.requests, 0);
    fx.reveal_prod().await;
    assert_eq!(
        fx.sim
            .wait_for_requests(1, HANG_GUARD)
            .await
            .expect("one request")
            .total
            .requests,
        1
    );
}

// === admin paths ===

#[tokio::test]
async fn admin_paths_should_set_faults_limits_and_settings() {
    let fx = Fixture::start(config()).await;
    let put = |path: &str, body: Value| fx.http.put(fx.url(path)).json(&body).send();

    let set = put(
        "/_sim/faults/reveal",
        json!({ "error_rate": 1.0, "error_status": 500 }),
    )
    .await
    .unwrap();
    assert_eq!(set.status(), 204);
    assert_eq!(fx.reveal_prod().await.status(), 500);
    assert_eq!(
        fx.http
            .delete(fx.url("/_sim/faults/reveal"))
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    assert_eq!(fx.reveal_prod().await.status(), 200);
    assert_eq!(put("/_sim/faults/nope", json!({})).await.unwrap().status(), 400);

    assert_eq!(
        put(
            "/_sim/rate-limits/prod-sat",
            json!({ "per_second": 0.5, "burst": 1 })
        )
        .await
        .unwrap()
        .status(),
        204
    );
    assert_eq!(
        put(
            "/_sim/rate-limits/prod-sat",
            json!({ "per_second": 0.0, "burst": 1 })
        )
        .await
        .unwrap()
        .status(),
        400
    );
    let body = json!({ "rejected_requests_spend_budget": true, "retry_after": "http_date" });
    assert_eq!(put("/_sim/settings", body).await.unwrap().status(), 204);
    // The bucket was cut to burst 1 with 3 of 5 tokens left, so it holds one token now.
    assert_eq!(fx.reveal_prod().await.status(), 200);
    let rejected = fx.reveal_prod().await;
    assert_eq!(rejected.status(), 429);
    httpdate::parse_http_date(&retry_after(&rejected)).expect("Retry-After switched to an HTTP-date");
}

#[tokio::test]
async fn unknown_paths_should_answer_json_404() {
    let fx = Fixture::start(config()).await;
    let (status, body) = status_and_json(fx.http.get(fx.url("/v2/operator/me")).send().await.unwrap()).await;
    assert_eq!(status, 404);
    assert!(body["error"].is_string());
}

// === configuration, redaction, CLI ===

#[test]
fn config_debug_should_not_print_tokens_jwts_or_secret_values() {
    let debug = format!("{:?}", config());
    for secret in [PROD_SAT, ORG_TOKEN, JWT, DB_URL] {
        assert!(
            !debug.contains(secret),
            "Debug leaked a credential or value: {debug}"
        );
    }
}

#[test]
fn config_from_yaml_should_refuse_tokens_bound_to_unknown_vaults() {
    let yaml = "vaults: []\nservice_account_tokens: [{ token: fvsat_x, vault: prod }]\n";
    let error = SimConfig::from_yaml(yaml).expect_err("unknown vault should be refused");
    assert!(error.to_string().contains("unknown vault"), "{error}");
    assert!(
        !error.to_string().contains("fvsat_x"),
        "error leaked the token: {error}"
    );
}

#[tokio::test]
async fn sample_config_should_serve_its_vaults_with_its_tokens() {
    let fx = Fixture::start(SimConfig::sample()).await;
    let response = fx
        .reveal(Some("fvsat_prod_sample_token"), json!({ "vault": "prod" }))
        .await;
    let (status, body) = status_and_json(response).await;
    assert_eq!(status, 200);
    assert_eq!(body["hits"].as_array().map(Vec::len), Some(3));
}

/// Runs `ferrvault-sim ferrvault --port 0 [args]` and returns the child and its banner.
async fn spawn_cli(extra: &[&str]) -> (tokio::process::Child, Vec<String>) {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_ferrvault-sim"))
        .args(["ferrvault", "--port", "0"])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary should start");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let mut banner = Vec::new();
    while banner.last().is_none_or(|l: &String| !l.starts_with("stats:")) {
        let line = tokio::time::timeout(HANG_GUARD, lines.next_line())
            .await
            .expect("the CLI should print its banner")
            .expect("stdout readable")
            .unwrap_or_else(|| panic!("the CLI exited before its banner ended: {banner:?}"));
        banner.push(line);
    }
    (child, banner)
}

fn banner_url(banner: &[String]) -> String {
    let first = banner.first().expect("banner has lines");
    first
        .rsplit(' ')
        .next()
        .expect("the first line ends with the URL")
        .to_owned()
}

#[tokio::test]
async fn cli_without_config_should_serve_the_sample_and_print_no_token() {
    let (mut child, banner) = spawn_cli(&[]).await;
    let text = banner.join("\n");
    assert!(
        !text.contains("fvsat_") && !text.contains("fft_"),
        "banner leaked a token:\n{text}"
    );
    let _ = rustls::crypto::ring::default_provider().install_default(); // may already be installed
    let http = reqwest::Client::new();
    let url = format!("{}/operator/secrets/reveal", banner_url(&banner));
    let response = http
        .post(url)
        .bearer_auth("fvsat_prod_sample_token")
        .json(&json!({ "vault": "prod" }))
        .send()
        .await;
    assert_eq!(response.expect("the CLI simulator should answer").status(), 200);
    child.kill().await.expect("stop the CLI simulator");
}

#[tokio::test]
async fn cli_with_config_should_serve_that_file() {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    let yaml = "vaults: [{ name: only, secrets: { K: v } }]\nservice_account_tokens: [{ token: fvsat_cli, vault: only }]\n";
    std::fs::write(file.path(), yaml).expect("write config");
    let path = file.path().to_str().expect("UTF-8 temp path");
    let (mut child, banner) = spawn_cli(&["--config", path]).await;
    assert!(
        banner.iter().any(|l| l.starts_with("vault only")),
        "banner should list the file's vault: {banner:?}"
    );
    let _ = rustls::crypto::ring::default_provider().install_default(); // may already be installed
    let url = format!("{}/operator/secrets/reveal", banner_url(&banner));
    let response = reqwest::Client::new()
        .post(url)
        .bearer_auth("fvsat_cli")
        .json(&json!({ "vault": "only" }))
        .send();
    let (status, body) = status_and_json(response.await.expect("answer")).await;
    assert_eq!((status, body["hits"][0]["value"].as_str()), (200, Some("v")));
    child.kill().await.expect("stop the CLI simulator");
}

#[tokio::test]
async fn wait_until_should_return_once_the_condition_holds_and_time_out_naming_it_otherwise() {
    let fx = Fixture::start(config()).await;
    let waiter = fx
        .sim
        .wait_until(|s| s.token("prod-sat").accepted >= 2, HANG_GUARD, "2 accepted");
    let (stats, _, _) = tokio::join!(waiter, fx.reveal_prod(), fx.reveal_prod());
    assert_eq!(
        stats.expect("condition should hold").token("prod-sat").accepted,
        2
    );
    let error = fx
        .sim
        .wait_until(
            |s| s.total.requests > 2,
            Duration::from_millis(50),
            "a third request",
        )
        .await;
    assert!(
        error
            .expect_err("no third request")
            .to_string()
            .contains("a third request")
    );
}

#[tokio::test]
async fn simulator_debug_should_not_print_tokens_minted_tokens_or_secret_values() {
    let fx = Fixture::start(config()).await;
    let (_, body) = status_and_json(fx.exchange("cluster-1", JWT).await).await;
    let minted = body["access_token"].as_str().expect("access_token").to_owned();
    fx.reveal_prod().await;
    let debug = format!("{:?}", fx.sim);
    for secret in [PROD_SAT, STAGING_SAT, ORG_TOKEN, JWT, DB_URL, minted.as_str()] {
        assert!(
            !debug.contains(secret),
            "Debug of the simulator leaked a credential or value"
        );
    }
}

#[tokio::test]
async fn shutdown_should_end_hanging_requests_and_free_the_port() {
    let fx = Fixture::start(config()).await;
    let pending = fx.hanging_reveal().await;
    let addr = fx.sim.addr();
    fx.sim.shutdown().await;
    let outcome = tokio::time::timeout(HANG_GUARD, pending)
        .await
        .expect("shutdown should end the hang")
        .expect("task");
    assert!(
        outcome.is_err(),
        "a request cut by shutdown should fail, got {outcome:?}"
    );
    tokio::net::TcpListener::bind(addr)
        .await
        .expect("the port should be free after shutdown");
}

#[test]
fn connection_reset_fault_should_reset_the_tcp_connection_not_just_close_it() {
    use std::io::{ErrorKind, Read, Write};
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let sim = runtime
        .block_on(FerrVaultSim::start(config()))
        .expect("simulator should start");
    sim.faults()
        .set(Endpoint::Healthz, FaultSpec::default().with_connection_reset());
    let mut stream = std::net::TcpStream::connect(sim.addr()).expect("connect");
    stream.set_read_timeout(Some(HANG_GUARD)).expect("read timeout");
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: sim\r\n\r\n")
        .expect("send request");
    let mut answer = Vec::new();
    let error = stream
        .read_to_end(&mut answer)
        .expect_err("the read should fail with a reset");
    assert_eq!(
        error.kind(),
        ErrorKind::ConnectionReset,
        "got {error:?} after {} bytes",
        answer.len()
    );
    assert!(answer.is_empty(), "no response bytes should precede the reset");
}

/// Sends raw HTTP/1.1 bytes (with `Connection: close`) and returns the whole answer as text.
async fn raw_http(sim: &FerrVaultSim, request: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(sim.addr()).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut answer = String::new();
    tokio::time::timeout(HANG_GUARD, stream.read_to_string(&mut answer))
        .await
        .expect("the simulator should answer and close")
        .expect("read");
    answer
}

#[tokio::test]
async fn reveal_should_accept_a_chunked_body_and_refuse_a_declared_oversized_one() {
    let fx = Fixture::start(config()).await;
    let body = r#"{"vault":"prod"}"#;
    let chunked = format!(
        "POST /operator/secrets/reveal HTTP/1.1\r\nHost: sim\r\nConnection: close\r\nAuthorization: Bearer {PROD_SAT}\r\n\
         Transfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    );
    let answer = raw_http(&fx.sim, &chunked).await;
    assert!(
        answer.starts_with("HTTP/1.1 200"),
        "chunked reveal should succeed: {}",
        answer.lines().next().unwrap_or("")
    );
    let oversized = format!(
        "POST /operator/secrets/reveal HTTP/1.1\r\nHost: sim\r\nConnection: close\r\nAuthorization: Bearer {PROD_SAT}\r\n\
         Content-Length: 10000000\r\n\r\n"
    );
    let answer = raw_http(&fx.sim, &oversized).await;
    assert!(
        answer.starts_with("HTTP/1.1 413"),
        "oversized body should get 413: {}",
        answer.lines().next().unwrap_or("")
    );
}

#[tokio::test]
async fn a_client_giving_up_on_a_hanging_request_should_end_its_in_flight_period() {
    let fx = Fixture::start(config()).await;
    fx.sim
        .faults()
        .set(Endpoint::Reveal, FaultSpec::default().with_hang());
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .expect("client");
    assert!(
        fx.reveal_prod_request(&impatient)
            .send()
            .await
            .expect_err("the client should time out")
            .is_timeout()
    );
    let stats = fx
        .sim
        .wait_until(
            |s| s.total.in_flight == 0,
            HANG_GUARD,
            "the abandoned request to end",
        )
        .await;
    let stats = stats.expect("in_flight should drop to 0");
    assert_eq!(
        (stats.total.peak_in_flight, stats.total.statuses.get("abandoned")),
        (1, Some(&1))
    );
}
