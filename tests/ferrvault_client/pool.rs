//! The pool of HTTP clients under a connection whose URL and CA bundle keep changing: one pooled
//! client whatever the history, and memory (bytes allocated and still live in this process)
//! flat; every client shares the system roots instead of parsing its own copy.

use std::time::Duration;

use ferrvault_operator::ferrvault::{Endpoint, FerrVault};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    time::Instant,
};

use crate::{live_bytes, plain_http_config};

const FIXTURE_CA: &[u8] = include_bytes!("tls_fixtures/ca.pem");

/// A server answering every request `200 {}` and closing, keeping nothing.
async fn healthy_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let response = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}";
                // The client may already be gone; nothing to do about it in a test server.
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    url
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

/// The `i`th version of one connection's endpoint: a new URL each time, and one of two CA
/// bundles or none.
fn edit(url: &str, i: usize, other_ca: &[u8]) -> Endpoint {
    let endpoint = Endpoint::parse(&format!("{url}/v{i}")).expect("URL");
    match i % 3 {
        0 => endpoint,
        1 => endpoint.with_extra_ca_pem(FIXTURE_CA).expect("CA"),
        _ => endpoint.with_extra_ca_pem(other_ca).expect("CA"),
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_thousand_url_and_ca_changes_of_one_connection_should_keep_one_pooled_client_and_memory_flat() {
    let url = healthy_server().await;
    let other_ca = rcgen::generate_simple_self_signed(vec!["ca.test".to_owned()])
        .expect("CA")
        .cert
        .pem();
    let client = FerrVault::new(plain_http_config());
    let use_edit = |i: usize| {
        let endpoint = edit(&url, i, other_ca.as_bytes());
        client.claim_endpoint("team", "conn", &endpoint);
        let client = client.clone();
        async move { client.probe(&endpoint, soon()).await.expect("probe") }
    };
    // Warm up: everything allocated once per process (system roots, runtime, DNS) is in place.
    for i in 0..30 {
        use_edit(i).await;
    }
    let before = live_bytes();
    for i in 30..1_030 {
        use_edit(i).await;
        assert_eq!(client.pooled_clients(), 1, "after edit {i}");
    }
    let growth = live_bytes() - before;
    assert!(
        growth < 256 * 1024,
        "{growth} bytes more live after 1,000 edits (from {before})"
    );
    client.release_endpoint("team", "conn");
    assert_eq!(
        client.pooled_clients(),
        0,
        "a deleted connection leaves nothing pooled"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn pooled_clients_should_share_the_system_roots_instead_of_each_parsing_a_copy() {
    let url = healthy_server().await;
    let client = FerrVault::new(plain_http_config());
    // The first client loads the system roots, once.
    let first = Endpoint::parse(&format!("{url}/first")).expect("URL");
    client.claim_endpoint("team", "first", &first);
    client.probe(&first, soon()).await.expect("probe");
    let before = live_bytes();
    for i in 0..50 {
        let endpoint = Endpoint::parse(&format!("{url}/c{i}"))
            .expect("URL")
            .with_extra_ca_pem(FIXTURE_CA)
            .expect("CA");
        client.claim_endpoint("team", &format!("c{i}"), &endpoint);
        client.probe(&endpoint, soon()).await.expect("probe");
    }
    assert_eq!(client.pooled_clients(), 51);
    let per_client = (live_bytes() - before) / 50;
    assert!(
        per_client < 32 * 1024,
        "{per_client} bytes live per pooled client"
    );
}
