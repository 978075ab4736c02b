//! What the client refuses to send, over real HTTP against scripted stubs: plain `http://`
//! without the opt-in, any redirect (probe, reveal, OIDC exchange), and the cluster bearer where
//! it does not belong. Each time, the host that would have received it records nothing.

use std::time::{Duration, SystemTime};

use crate::ferrvault_stub::{Reply, Stub};
use ferrvault_operator::ferrvault::{
    ClientConfig, ClusterIdentity, Credential, Endpoint, FerrVault, FerrVaultError, IdentityRefusal,
    KeySelector, OidcSource, RevealRequest, RevealScope,
};
use tokio::time::Instant;

const PROJECTED: &str = "eyJ.REFUSALS-PROJECTED-JWT.sig";
const CLUSTER_ID: &str = "0b6f1c1e-7d0a-4c55-9e55-3f1a2b3c4d5e";

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

fn cloud(namespace: &str) -> RevealRequest {
    RevealRequest {
        scope: RevealScope::Cloud {
            organization: "acme".into(),
            project: "shop".into(),
            namespace: namespace.into(),
        },
        vault: "prod".into(),
        keys: KeySelector::All,
    }
}

fn ferrvault_mode() -> RevealRequest {
    RevealRequest {
        scope: RevealScope::FerrVault,
        vault: "prod".into(),
        keys: KeySelector::All,
    }
}

/// A client whose cluster identity trusts `trusted`, with its projected token in `dir`.
fn identity_client(trusted: &str, dir: &tempfile::TempDir) -> FerrVault {
    let token_path = dir.path().join("token");
    std::fs::write(&token_path, PROJECTED).unwrap();
    let identity = ClusterIdentity::new(CLUSTER_ID, token_path, &[trusted.to_owned()], true).unwrap();
    FerrVault::new(ClientConfig {
        cluster_identity: Some(identity),
        ..crate::plain_http_config()
    })
}

fn exchange_reply() -> Reply {
    let expires_at = jiff::Timestamp::try_from(SystemTime::now() + Duration::from_secs(900)).unwrap();
    Reply::json(
        200,
        &serde_json::json!({"access_token": "ffclust_minted", "expires_at": expires_at.to_string()})
            .to_string(),
    )
}

#[tokio::test]
async fn plain_http_should_be_refused_before_anything_is_sent_unless_opted_in() {
    let stub = Stub::start(Reply::json(200, "{}")).await;
    let endpoint = Endpoint::parse(&stub.url).unwrap();
    let strict = FerrVault::new(ClientConfig::default());
    let token = Credential::new("fvsat_REFUSALS_token").unwrap();
    let errors = [
        strict.probe(&endpoint, soon()).await.unwrap_err(),
        strict
            .reveal(&endpoint, &token, ferrvault_mode(), soon())
            .await
            .unwrap_err(),
    ];
    for error in errors {
        assert!(matches!(error, FerrVaultError::InsecureUrl), "{error:?}");
        assert_eq!(error.reason(), "InsecureUrl");
    }
    assert!(stub.requests().is_empty(), "nothing reached the http:// server");
    FerrVault::new(crate::plain_http_config())
        .probe(&endpoint, soon())
        .await
        .expect("allowed with the opt-in");
    assert_eq!(stub.requests().len(), 1);
}

#[tokio::test]
async fn a_redirect_should_end_every_call_and_the_location_should_receive_nothing() {
    let second = Stub::start(Reply::json(200, "{}")).await;
    let redirect = Reply::json(307, "{}").header("location", &format!("{}/elsewhere", second.url));
    let first = Stub::start(redirect).await;
    let endpoint = Endpoint::parse(&first.url).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = identity_client(&first.url, &dir);
    let token = Credential::new("fvsat_REFUSALS_token").unwrap();
    let source = OidcSource {
        namespace: "team-a".into(),
        name: "conn".into(),
        endpoint: endpoint.clone(),
    };
    let errors = [
        client.probe(&endpoint, soon()).await.unwrap_err(),
        client
            .reveal(&endpoint, &token, ferrvault_mode(), soon())
            .await
            .unwrap_err(),
        client.oidc_token(&source, soon()).await.unwrap_err(),
    ];
    for error in &errors {
        assert!(
            matches!(error, FerrVaultError::Redirected { status: 307 }),
            "{error:?}"
        );
        let printed = format!("{error} {error:?}");
        assert!(
            !printed.contains("REFUSALS") && !printed.contains("elsewhere"),
            "{printed}"
        );
    }
    assert_eq!(
        first.requests().len(),
        3,
        "one attempt per call: a redirect is not retried"
    );
    assert!(
        second.requests().is_empty(),
        "the location named by the redirect received nothing"
    );
}

#[tokio::test]
async fn a_cluster_bearer_should_only_travel_to_its_trusted_url_with_a_namespace() {
    let trusted = Stub::start(exchange_reply()).await;
    let other = Stub::start(Reply::json(200, "{}")).await;
    let dir = tempfile::tempdir().unwrap();
    let client = identity_client(&trusted.url, &dir);
    let endpoint = Endpoint::parse(&trusted.url).unwrap();
    let source = OidcSource {
        namespace: "team-a".into(),
        name: "conn".into(),
        endpoint: endpoint.clone(),
    };
    let bearer = client.oidc_token(&source, soon()).await.unwrap();
    assert_eq!(trusted.requests().len(), 1, "the exchange");
    let elsewhere = Endpoint::parse(&other.url).unwrap();
    for (at, request, refusal) in [
        (&elsewhere, cloud("team-a"), IdentityRefusal::UntrustedUrl),
        (&endpoint, cloud(""), IdentityRefusal::NoNamespace),
        (&endpoint, ferrvault_mode(), IdentityRefusal::NoNamespace),
    ] {
        let error = client.reveal(at, &bearer, request, soon()).await.unwrap_err();
        assert!(
            matches!(error, FerrVaultError::ClusterIdentity(r) if r == refusal),
            "{error:?}"
        );
    }
    assert!(other.requests().is_empty(), "the untrusted host received nothing");
    assert_eq!(
        trusted.requests().len(),
        1,
        "no reveal was sent without a namespace"
    );
    trusted.then([Reply::json(200, r#"{"secrets":{}}"#)]);
    client
        .reveal(&endpoint, &bearer, cloud("team-a"), soon())
        .await
        .expect("a cloud reveal naming its namespace goes through");
    let sent = trusted.requests();
    assert_eq!(
        sent[1].headers.get("x-ferrvault-namespace").map(|v| v.as_bytes()),
        Some(&b"team-a"[..])
    );
}
