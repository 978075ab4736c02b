//! The OIDC token broker against a scripted stub: exchange, caching until 60s before expiry,
//! invalidation, shared exchanges, and failures that never echo a token.

use std::time::{Duration, SystemTime};

use crate::ferrvault_stub::{Reply, Stub};
use ferrvault_operator::ferrvault::{ClientConfig, Endpoint, FerrVault, OidcSource};
use tokio::time::Instant;

const PROJECTED: &str = "eyJhbGciOi.PROJECTED-SA-JWT.sig";

fn exchange_reply(bearer: &str, lifetime: Duration) -> Reply {
    let expires_at = jiff::Timestamp::try_from(SystemTime::now() + lifetime).unwrap();
    Reply::json(
        200,
        &serde_json::json!({"access_token": bearer, "expires_at": expires_at.to_string(), "token_type": "Bearer"})
            .to_string(),
    )
}

struct Setup {
    stub: Stub,
    client: FerrVault,
    source: OidcSource,
    _dir: tempfile::TempDir,
}

async fn setup(default: Reply) -> Setup {
    let stub = Stub::start(default).await;
    let dir = tempfile::tempdir().unwrap();
    let token_path = dir.path().join("token");
    std::fs::write(&token_path, format!("{PROJECTED}\n")).unwrap();
    let source = OidcSource {
        namespace: "team-a".into(),
        name: "conn".into(),
        endpoint: Endpoint::parse(&stub.url).unwrap(),
        cluster_id: "0b6f1c1e-7d0a-4c55-9e55-3f1a2b3c4d5e".into(),
        token_path,
    };
    Setup {
        stub,
        client: FerrVault::new(ClientConfig::default()),
        source,
        _dir: dir,
    }
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

#[tokio::test]
async fn oidc_bearer_should_be_exchanged_once_and_cached() {
    let s = setup(exchange_reply("ffclust_one", Duration::from_secs(900))).await;
    for _ in 0..3 {
        let bearer = s.client.oidc_token(&s.source, soon()).await.unwrap();
        assert_eq!(
            bearer,
            ferrvault_operator::ferrvault::Credential::new("ffclust_one").unwrap()
        );
    }
    let sent = s.stub.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].method.as_str(), sent[0].path.as_str()),
        ("POST", "/api/v1/clusters/oidc-exchange")
    );
    assert!(sent[0].headers.get("authorization").is_none());
    let body: serde_json::Value = serde_json::from_slice(&sent[0].body).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"cluster_id": s.source.cluster_id, "token": PROJECTED})
    );
}

#[tokio::test]
async fn oidc_bearer_should_be_refreshed_within_60s_of_expiry() {
    let s = setup(exchange_reply("ffclust_short", Duration::from_secs(45))).await;
    s.client.oidc_token(&s.source, soon()).await.unwrap();
    s.client.oidc_token(&s.source, soon()).await.unwrap();
    assert_eq!(s.stub.requests().len(), 2);
}

#[tokio::test]
async fn invalidation_and_spec_changes_should_force_a_new_exchange() {
    let s = setup(exchange_reply("ffclust_one", Duration::from_secs(900))).await;
    s.client.oidc_token(&s.source, soon()).await.unwrap();
    s.client.invalidate_oidc("team-a", "conn");
    s.client.oidc_token(&s.source, soon()).await.unwrap();
    assert_eq!(s.stub.requests().len(), 2);
    let changed = OidcSource {
        cluster_id: "11111111-2222-3333-4444-555555555555".into(),
        ..s.source.clone()
    };
    s.client.oidc_token(&changed, soon()).await.unwrap();
    assert_eq!(s.stub.requests().len(), 3);
}

#[tokio::test]
async fn concurrent_callers_for_one_connection_should_share_one_exchange() {
    let s = setup(exchange_reply("ffclust_one", Duration::from_secs(900)).after(Duration::from_millis(200)))
        .await;
    let calls = (0..5).map(|_| s.client.oidc_token(&s.source, soon()));
    for bearer in futures::future::join_all(calls).await {
        bearer.unwrap();
    }
    assert_eq!(s.stub.requests().len(), 1);
}

#[tokio::test]
async fn oidc_failures_should_be_typed_and_never_echo_a_token() {
    let s = setup(Reply::json(
        401,
        &format!(r#"{{"error":"rejected {PROJECTED}"}}"#),
    ))
    .await;
    let err = s.client.oidc_token(&s.source, soon()).await.unwrap_err();
    assert!(err.is_auth(), "{err:?}");
    let printed = format!("{err} {err:?}");
    assert!(!printed.contains("PROJECTED-SA-JWT"), "{printed}");

    let missing = OidcSource {
        token_path: "/nonexistent/token".into(),
        ..s.source.clone()
    };
    assert_eq!(
        s.client.oidc_token(&missing, soon()).await.unwrap_err().reason(),
        "TokenUnreadable"
    );
    std::fs::write(&s.source.token_path, " \n").unwrap();
    assert_eq!(
        s.client.oidc_token(&s.source, soon()).await.unwrap_err().reason(),
        "TokenUnreadable"
    );
}
