//! The egress policy over real HTTP: a URL whose host name resolves to, or whose IP literal is,
//! an address the policy refuses fails with `EgressDenied` and nothing reaches that address;
//! allowed, the same URL is served.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use ferrvault_operator::ferrvault::{
    ClientConfig, Credential, EgressRule, Endpoint, FerrVault, FerrVaultError, KeySelector, RevealRequest,
    RevealScope,
};
use tokio::time::Instant;

use crate::ferrvault_stub::{Reply, Stub};

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

fn reveal() -> RevealRequest {
    RevealRequest {
        scope: RevealScope::FerrVault,
        vault: "prod".into(),
        keys: KeySelector::All,
    }
}

/// The probe's and a reveal's errors through `client` at `endpoint`.
async fn both_calls(client: &FerrVault, endpoint: &Endpoint) -> [FerrVaultError; 2] {
    let token = Credential::new("fvsat_EGRESS_token").unwrap();
    [
        client.probe(endpoint, soon()).await.unwrap_err(),
        client
            .reveal(endpoint, &token, reveal(), soon())
            .await
            .unwrap_err(),
    ]
}

#[tokio::test]
async fn a_host_name_resolving_to_a_refused_address_should_be_refused_with_nothing_sent() {
    let stub = Stub::start(Reply::json(200, "{}")).await;
    let port = stub.url.rsplit_once(':').expect("a port").1;
    let endpoint = Endpoint::parse(&format!("http://localhost:{port}")).unwrap();
    // Plain http allowed, the egress policy the default: loopback refused.
    let strict = FerrVault::new(ClientConfig {
        allow_insecure_http: true,
        ..ClientConfig::default()
    });
    assert!(
        strict.admit(&endpoint).is_ok(),
        "a name is judged when resolved, not before"
    );
    for error in both_calls(&strict, &endpoint).await {
        let FerrVaultError::EgressDenied(refusal) = &error else {
            panic!("not an egress refusal: {error:?}");
        };
        assert_eq!(
            (refusal.host.as_deref(), refusal.rule),
            (Some("localhost"), EgressRule::Loopback)
        );
        assert_eq!(error.reason(), "EgressDenied");
        assert!(
            error
                .to_string()
                .contains(&format!("localhost resolves to 127.0.0.1:{port}")),
            "{error}"
        );
    }
    assert!(stub.requests().is_empty(), "nothing reached the refused address");

    FerrVault::new(crate::plain_http_config())
        .probe(&endpoint, soon())
        .await
        .expect("served once 127.0.0.1 is allowed");
    assert_eq!(stub.requests().len(), 1);
}

/// Accepts (and counts) connections on 127.0.0.2, which the tests' policy does not allow.
async fn listener_on_127_0_0_2() -> (u16, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.2:0")
        .await
        .expect("bind 127.0.0.2");
    let port = listener.local_addr().expect("addr").port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (port, accepted)
}

#[tokio::test]
async fn an_ip_literal_host_should_be_refused_in_every_spelling_before_anything_is_sent() {
    let (port, accepted) = listener_on_127_0_0_2().await;
    let client = FerrVault::new(crate::plain_http_config());
    // 2130706434 and 0x7f.2 are 127.0.0.2 to the URL parser; ::ffff:7f00:2 reaches it over IPv6.
    for url in [
        format!("http://127.0.0.2:{port}"),
        format!("http://2130706434:{port}"),
        format!("http://0x7f.2:{port}"),
        format!("http://[::ffff:127.0.0.2]:{port}"),
    ] {
        let endpoint = Endpoint::parse(&url).unwrap();
        let admitted = client.admit(&endpoint).unwrap_err();
        assert_eq!(admitted.reason(), "EgressDenied", "{url}: {admitted}");
        for error in both_calls(&client, &endpoint).await {
            let FerrVaultError::EgressDenied(refusal) = &error else {
                panic!("{url}: not an egress refusal: {error:?}");
            };
            assert_eq!(
                (refusal.address, refusal.rule),
                (format!("127.0.0.2:{port}").parse().unwrap(), EgressRule::Loopback),
                "{url}"
            );
        }
    }
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        0,
        "a refused address was connected to"
    );
}
