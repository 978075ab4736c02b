//! The OIDC token broker against a scripted stub: the operator's cluster identity exchanged,
//! cached until 60s before expiry, invalidated, shared by concurrent callers, refused where it
//! does not belong, and failures that never echo a token.

use std::time::{Duration, SystemTime};

use crate::ferrvault_stub::{Reply, Stub};
use ferrvault_operator::ferrvault::{
    ClientConfig, ClusterIdentity, Endpoint, FerrVault, FerrVaultError, IdentityRefusal, OidcSource,
};
use tokio::time::Instant;

const PROJECTED: &str = "eyJhbGciOi.PROJECTED-SA-JWT.sig";
const CLUSTER_ID: &str = "0b6f1c1e-7d0a-4c55-9e55-3f1a2b3c4d5e";

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
    token_path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

/// A client whose cluster identity trusts `urls`, reading its projected token at `token_path`.
fn client_trusting(urls: &[String], token_path: &std::path::Path) -> FerrVault {
    let identity = ClusterIdentity::new(CLUSTER_ID, token_path.to_owned(), urls, true).unwrap();
    FerrVault::new(ClientConfig {
        cluster_identity: Some(identity),
        ..crate::plain_http_config()
    })
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
    };
    Setup {
        client: client_trusting(std::slice::from_ref(&stub.url), &token_path),
        stub,
        source,
        token_path,
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
        assert!(bearer.is_cluster(), "marked as minted from the cluster identity");
        let expected = ferrvault_operator::ferrvault::Credential::new("ffclust_one").unwrap();
        assert_eq!(bearer.fingerprint(&s.stub.url), expected.fingerprint(&s.stub.url));
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
        serde_json::json!({"cluster_id": CLUSTER_ID, "token": PROJECTED})
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
async fn invalidation_and_a_changed_url_should_force_a_new_exchange() {
    let s = setup(exchange_reply("ffclust_one", Duration::from_secs(900))).await;
    let second = Stub::start(exchange_reply("ffclust_two", Duration::from_secs(900))).await;
    let client = client_trusting(&[s.stub.url.clone(), second.url.clone()], &s.token_path);
    client.oidc_token(&s.source, soon()).await.unwrap();
    client.invalidate_oidc("team-a", "conn");
    client.oidc_token(&s.source, soon()).await.unwrap();
    assert_eq!(s.stub.requests().len(), 2);
    let moved = OidcSource {
        endpoint: Endpoint::parse(&second.url).unwrap(),
        ..s.source.clone()
    };
    client.oidc_token(&moved, soon()).await.unwrap();
    assert_eq!(
        second.requests().len(),
        1,
        "the new URL exchanges for its own bearer"
    );
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

    let missing = client_trusting(std::slice::from_ref(&s.stub.url), "/nonexistent/token".as_ref());
    assert_eq!(
        missing.oidc_token(&s.source, soon()).await.unwrap_err().reason(),
        "TokenUnreadable"
    );
    std::fs::write(&s.token_path, " \n").unwrap();
    assert_eq!(
        s.client.oidc_token(&s.source, soon()).await.unwrap_err().reason(),
        "TokenUnreadable"
    );
}

#[tokio::test]
async fn the_cluster_identity_should_go_nowhere_but_a_trusted_url_of_a_configured_identity() {
    let s = setup(exchange_reply("ffclust_one", Duration::from_secs(900))).await;
    let elsewhere = Stub::start(exchange_reply("ffclust_two", Duration::from_secs(900))).await;
    let untrusted = OidcSource {
        endpoint: Endpoint::parse(&elsewhere.url).unwrap(),
        ..s.source.clone()
    };
    let refused = s.client.oidc_token(&untrusted, soon()).await.unwrap_err();
    assert!(
        matches!(
            refused,
            FerrVaultError::ClusterIdentity(IdentityRefusal::UntrustedUrl)
        ),
        "{refused:?}"
    );
    let without_identity = FerrVault::new(crate::plain_http_config());
    let refused = without_identity.oidc_token(&s.source, soon()).await.unwrap_err();
    assert!(
        matches!(
            refused,
            FerrVaultError::ClusterIdentity(IdentityRefusal::NotConfigured)
        ),
        "{refused:?}"
    );
    assert!(
        elsewhere.requests().is_empty() && s.stub.requests().is_empty(),
        "nothing was sent"
    );
}
