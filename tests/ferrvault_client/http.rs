//! The FerrVault client against a scripted stub server: wire format, status-code mapping,
//! retries, timeouts, cancellation, `Retry-After` and redaction.

use std::time::Duration;

use crate::ferrvault_stub::{Reply, Stub};
use ferrvault_operator::ferrvault::{
    ClientConfig, Credential, DeadlineStage, Endpoint, FerrVault, FerrVaultError, KeySelector, RequestResult,
    RetryPolicy, RevealRequest, RevealScope,
};
use tokio::time::Instant;

const TOKEN: &str = "fvsat_TOPSECRET-token-0123456789";
const VALUE: &str = "VALUE-that-must-never-leak";

fn hits(pairs: &[(&str, &str)], missing: &[&str]) -> String {
    let hits: Vec<_> = pairs
        .iter()
        .map(|(n, v)| serde_json::json!({"name": n, "value": v, "version": 1, "fetched_at": "2026-01-01T00:00:00Z"}))
        .collect();
    serde_json::json!({ "hits": hits, "missing": missing }).to_string()
}

/// A client with fast retries, so failure paths finish quickly.
fn client() -> FerrVault {
    FerrVault::new(ClientConfig {
        retry: RetryPolicy {
            backoff: vec![Duration::from_millis(20)],
            ..RetryPolicy::default()
        },
        coalesce_window: Duration::ZERO,
        ..crate::plain_http_config()
    })
}

fn request(vault: &str, names: &[&str]) -> RevealRequest {
    RevealRequest {
        scope: RevealScope::FerrVault,
        vault: vault.to_owned(),
        keys: KeySelector::from_names(names.iter().copied()),
    }
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(20)
}

struct Setup {
    stub: Stub,
    client: FerrVault,
    endpoint: Endpoint,
    credential: Credential,
}

async fn setup(default: Reply) -> Setup {
    let stub = Stub::start(default).await;
    let endpoint = Endpoint::parse(&stub.url).unwrap();
    Setup {
        stub,
        client: client(),
        endpoint,
        credential: Credential::new(TOKEN).unwrap(),
    }
}

impl Setup {
    async fn reveal(
        &self,
        names: &[&str],
    ) -> Result<ferrvault_operator::ferrvault::Revealed, FerrVaultError> {
        self.client
            .reveal(&self.endpoint, &self.credential, request("app", names), soon())
            .await
    }
}

#[tokio::test]
async fn ferrvault_reveal_should_post_vault_and_names_with_the_bearer() {
    let s = setup(Reply::json(200, &hits(&[("A", VALUE)], &["B"]))).await;
    let revealed = s.reveal(&["A", "B"]).await.unwrap();
    assert_eq!(revealed.secrets["A"].expose(), VALUE);
    assert_eq!(revealed.missing.names(), ["B"]);
    let sent = &s.stub.requests()[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/operator/secrets/reveal")
    );
    assert_eq!(sent.headers["authorization"], format!("Bearer {TOKEN}").as_str());
    assert_eq!(sent.headers["content-type"], "application/json");
    assert_eq!(sent.headers["accept"], "application/json");
    assert!(sent.headers.get("x-ferrvault-namespace").is_none());
    let body: serde_json::Value = serde_json::from_slice(&sent.body).unwrap();
    assert_eq!(body, serde_json::json!({"vault": "app", "names": ["A", "B"]}));

    s.reveal(&[]).await.unwrap();
    let body: serde_json::Value = serde_json::from_slice(&s.stub.requests()[1].body).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"vault": "app"}),
        "names is omitted when every key is wanted"
    );
}

#[tokio::test]
async fn cloud_reveal_should_escape_segments_and_send_names_as_one_query_value() {
    let s = setup(Reply::json(
        200,
        r#"{"secrets":{"a":"1"},"missing":["b c"],"vault":{"id":"1"}}"#,
    ))
    .await;
    let scope = RevealScope::Cloud {
        organization: "my org".into(),
        project: "p/1".into(),
        namespace: "team-a".into(),
    };
    let req = RevealRequest {
        scope,
        vault: "v?x".into(),
        keys: KeySelector::from_names(["a", "b c"]),
    };
    let revealed = s
        .client
        .reveal(&s.endpoint, &s.credential, req, soon())
        .await
        .unwrap();
    assert_eq!(revealed.missing.names(), ["b c"]);
    let sent = &s.stub.requests()[0];
    assert_eq!(sent.method, "GET");
    assert_eq!(
        sent.path,
        "/api/v1/orgs/my%20org/projects/p%2F1/vaults/by-name/v%3Fx/secrets/reveal"
    );
    assert_eq!(sent.query, "names=a%2Cb+c");
    assert_eq!(sent.headers["x-ferrvault-namespace"], "team-a");
}

#[tokio::test]
async fn client_errors_should_map_to_typed_errors_and_never_be_retried() {
    let cases: [(u16, &str, &str); 6] = [
        (401, r#"{"error":"bad token"}"#, "AuthFailed"),
        (403, r#"{"message":"wrong vault"}"#, "AuthFailed"),
        (404, "{}", "VaultNotFound"),
        (400, r#"{"error":"bad names"}"#, "ClientError"),
        (429, "{}", "RateLimited"),
        (409, "not json", "ClientError"),
    ];
    for (status, body, reason) in cases {
        let s = setup(Reply::json(status, body)).await;
        let err = s.reveal(&["A"]).await.unwrap_err();
        assert_eq!(err.reason(), reason, "status {status}: {err}");
        assert_eq!(s.stub.requests().len(), 1, "status {status} was retried");
        if status == 403 {
            assert_eq!(err.to_string(), "ferrvault forbidden: wrong vault");
        }
    }
}

#[tokio::test]
async fn server_errors_should_be_retried_three_times_then_report_the_attempts() {
    let s = setup(Reply::json(503, r#"{"error":"maintenance"}"#)).await;
    let err = s.reveal(&["A"]).await.unwrap_err();
    assert!(
        matches!(
            err,
            FerrVaultError::Server {
                status: 503,
                attempts: 3,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(s.stub.requests().len(), 3);
    let snapshot = &s.client.limiter_snapshots()[0];
    assert_eq!(snapshot.requests.get(RequestResult::ServerError), 3);
}

#[tokio::test]
async fn a_server_error_then_success_should_succeed_on_the_second_attempt() {
    let s = setup(Reply::json(200, &hits(&[("A", "1")], &[]))).await;
    s.stub.then([Reply::json(500, "{}")]);
    assert!(s.reveal(&["A"]).await.is_ok());
    assert_eq!(s.stub.requests().len(), 2);
}

#[tokio::test]
async fn every_attempt_should_be_bounded_by_the_attempt_timeout() {
    let s = setup(Reply::json(200, "{}").after(Duration::from_secs(30))).await;
    let client = FerrVault::new(ClientConfig {
        attempt_timeout: Duration::from_millis(200),
        retry: RetryPolicy {
            backoff: vec![Duration::from_millis(10)],
            ..RetryPolicy::default()
        },
        coalesce_window: Duration::ZERO,
        ..crate::plain_http_config()
    });
    let started = Instant::now();
    let err = client
        .reveal(&s.endpoint, &s.credential, request("app", &["A"]), soon())
        .await
        .unwrap_err();
    assert!(
        matches!(err, FerrVaultError::Timeout { attempts: 3, .. }),
        "{err:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(s.stub.requests().len(), 3);
}

#[tokio::test]
async fn the_callers_deadline_should_cancel_a_hanging_request() {
    let s = setup(Reply::json(200, "{}").after(Duration::from_secs(3600))).await;
    let started = Instant::now();
    let deadline = started + Duration::from_millis(300);
    let err = s
        .client
        .reveal(&s.endpoint, &s.credential, request("app", &["A"]), deadline)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            FerrVaultError::Deadline {
                stage: DeadlineStage::InFlight
            }
        ),
        "{err:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn the_callers_deadline_should_cut_the_retry_loop_short() {
    let s = setup(Reply::json(503, "{}")).await;
    let client = FerrVault::new(ClientConfig {
        retry: RetryPolicy {
            backoff: vec![Duration::from_secs(5)],
            ..RetryPolicy::default()
        },
        coalesce_window: Duration::ZERO,
        ..crate::plain_http_config()
    });
    let started = Instant::now();
    let err = client
        .reveal(
            &s.endpoint,
            &s.credential,
            request("app", &["A"]),
            started + Duration::from_secs(1),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, FerrVaultError::Server { attempts: 1, .. }),
        "{err:?}"
    );
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "it slept past the deadline"
    );
}

#[tokio::test]
async fn retry_after_in_seconds_should_pause_the_credential() {
    let s = setup(Reply::json(200, &hits(&[("A", "1")], &[]))).await;
    s.stub
        .then([Reply::json(429, r#"{"error":"slow down"}"#).header("Retry-After", "2")]);
    let err = s.reveal(&["A"]).await.unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(2)));
    let snapshot = &s.client.limiter_snapshots()[0];
    assert_eq!(snapshot.rate_limited_total, 1);
    let paused = snapshot.paused_for.expect("the credential is paused");
    assert!(
        paused > Duration::from_millis(1500) && paused <= Duration::from_secs(2),
        "{paused:?}"
    );

    let impatient = Instant::now() + Duration::from_millis(500);
    let err = s
        .client
        .reveal(&s.endpoint, &s.credential, request("app", &["A"]), impatient)
        .await
        .unwrap_err();
    assert!(
        err.is_rate_limited() && err.reason() == "BudgetDeadline",
        "{err:?}"
    );
    assert_eq!(
        s.stub.requests().len(),
        1,
        "nothing is sent while the credential is paused"
    );

    let started = Instant::now();
    assert!(s.reveal(&["A"]).await.is_ok());
    assert!(
        started.elapsed() >= Duration::from_millis(1000),
        "the pause was not honoured"
    );
}

#[tokio::test]
async fn retry_after_as_an_http_date_should_be_parsed() {
    let s = setup(Reply::json(200, "{}")).await;
    let date = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(4));
    s.stub.then([Reply::json(429, "{}").header("Retry-After", &date)]);
    let retry_after = s
        .reveal(&["A"])
        .await
        .unwrap_err()
        .retry_after()
        .expect("a parsed Retry-After");
    assert!(
        retry_after > Duration::from_secs(2) && retry_after <= Duration::from_secs(4),
        "{retry_after:?}"
    );
}

#[tokio::test]
async fn malformed_bodies_should_be_decode_errors() {
    let s = setup(Reply::json(200, r#"{"hits":[{"name":"A","value":"#)).await;
    assert_eq!(s.reveal(&["A"]).await.unwrap_err().reason(), "DecodeError");
    assert_eq!(
        s.client.limiter_snapshots()[0]
            .requests
            .get(RequestResult::Decode),
        1
    );
}

#[tokio::test]
async fn a_dropped_connection_should_be_retried_as_a_transport_error() {
    // A raw listener that hangs up on the first connection and answers the second.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut buf = vec![0u8; 8192];
        let (mut first, _) = listener.accept().await.unwrap();
        let _ = first.read(&mut buf).await;
        drop(first);
        let (mut second, _) = listener.accept().await.unwrap();
        let _ = second.read(&mut buf).await;
        let body = hits(&[("A", "1")], &[]);
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        second.write_all(response.as_bytes()).await.unwrap();
    });
    let client = client();
    let revealed = client
        .reveal(
            &Endpoint::parse(&url).unwrap(),
            &Credential::new(TOKEN).unwrap(),
            request("app", &["A"]),
            soon(),
        )
        .await
        .unwrap();
    assert_eq!(revealed.secrets.len(), 1);
    let counts = &client.limiter_snapshots()[0].requests;
    assert_eq!(
        (
            counts.get(RequestResult::Transport),
            counts.get(RequestResult::Success)
        ),
        (1, 1)
    );

    let refused = Endpoint::parse("http://127.0.0.1:9").unwrap();
    let err = client
        .reveal(
            &refused,
            &Credential::new(TOKEN).unwrap(),
            request("app", &["A"]),
            soon(),
        )
        .await;
    assert!(
        matches!(err, Err(FerrVaultError::Transport { attempts: 3, .. })),
        "{err:?}"
    );
}

#[tokio::test]
async fn probe_should_get_healthz_without_credentials_and_retry_server_errors() {
    let s = setup(Reply::json(200, r#"{"status":"ok"}"#)).await;
    s.stub.then([Reply::json(502, "{}")]);
    s.client.probe(&s.endpoint, soon()).await.unwrap();
    let sent = s.stub.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(
        (sent[1].method.as_str(), sent[1].path.as_str()),
        ("GET", "/healthz")
    );
    assert!(sent[1].headers.get("authorization").is_none());
    assert!(s.client.limiter_snapshots().is_empty(), "the probe is not paced");

    let s = setup(Reply::json(404, "{}")).await;
    assert!(
        s.client
            .probe(&s.endpoint, soon())
            .await
            .unwrap_err()
            .is_not_found()
    );
}

#[tokio::test]
async fn one_http_client_should_be_pooled_per_endpoint() {
    let s = setup(Reply::json(200, &hits(&[], &[]))).await;
    for _ in 0..3 {
        s.reveal(&["A"]).await.unwrap();
    }
    s.client.probe(&s.endpoint, soon()).await.unwrap();
    assert_eq!(s.client.pooled_clients(), 1);
    let other = Stub::start(Reply::json(200, "{}")).await;
    s.client
        .probe(&Endpoint::parse(&other.url).unwrap(), soon())
        .await
        .unwrap();
    assert_eq!(s.client.pooled_clients(), 2);
}

#[tokio::test]
async fn no_error_debug_output_or_metric_should_contain_the_token_or_a_value() {
    let echo = format!(r#"{{"error":"token {TOKEN} is not allowed here"}}"#);
    let mut printed = Vec::new();
    for (status, body) in [
        (401, echo.as_str()),
        (403, echo.as_str()),
        (404, echo.as_str()),
        (429, echo.as_str()),
        (500, echo.as_str()),
        (418, echo.as_str()),
        (
            200,
            r#"{"hits":[{"name":"A","value":12}],"missing":"VALUE-that-must-never-leak"}"#,
        ),
    ] {
        let s = setup(Reply::json(status, body)).await;
        let err = s.reveal(&["A"]).await.unwrap_err();
        printed.push(format!("{err} | {err:?} | {err:#?} | {}", err.reason()));
        printed.push(format!("{:?}", s.client));
        printed.push(format!("{:?}", s.client.limiter_snapshots()));
    }
    let s = setup(Reply::json(200, &hits(&[("A", VALUE)], &[]))).await;
    let revealed = s.reveal(&["A"]).await.unwrap();
    printed.push(format!(
        "{revealed:?} {revealed:#?} {:?} {:?}",
        revealed.secrets, s.credential
    ));
    let mut registry = prometheus_client::registry::Registry::default();
    ferrvault_operator::ferrvault::metrics::register(&mut registry, &s.client);
    let mut scrape = String::new();
    prometheus_client::encoding::text::encode(&mut scrape, &registry).unwrap();
    printed.push(scrape);
    for text in &printed {
        assert!(
            !text.contains(TOKEN) && !text.contains("TOPSECRET"),
            "token leaked: {text}"
        );
        assert!(!text.contains(VALUE), "value leaked: {text}");
    }
    assert!(
        printed[0].contains("<redacted>"),
        "the echoed token was replaced: {}",
        printed[0]
    );
}

#[tokio::test]
async fn metrics_should_expose_limiter_state_by_credential_fingerprint() {
    let s = setup(Reply::json(200, &hits(&[], &[]))).await;
    s.reveal(&["A"]).await.unwrap();
    let mut registry = prometheus_client::registry::Registry::default();
    ferrvault_operator::ferrvault::metrics::register(&mut registry, &s.client);
    let mut scrape = String::new();
    prometheus_client::encoding::text::encode(&mut scrape, &registry).unwrap();
    let fingerprint = s.credential.fingerprint(s.endpoint.base_url());
    for line in [
        format!(r#"ferrvault_client_requests_total{{credential="{fingerprint}",result="success"}} 1"#),
        format!(r#"ferrvault_client_limiter_configured_rate{{credential="{fingerprint}"}} 1.0"#),
        format!(r#"ferrvault_client_limiter_waiters{{credential="{fingerprint}"}} 0"#),
        format!(r#"ferrvault_client_rate_limited_total{{credential="{fingerprint}"}} 0"#),
    ] {
        assert!(scrape.contains(&line), "missing {line} in:\n{scrape}");
    }
}

#[tokio::test]
async fn longest_call_should_cover_three_attempts_and_their_backoff() {
    let floor = FerrVault::new(ClientConfig::default()).longest_call();
    assert_eq!(
        floor,
        Duration::from_millis(30_625) + ClientConfig::DEFAULT_COALESCE_WINDOW
    );
}
