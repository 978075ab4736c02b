//! What a hostile FerrVault answer may cost the client (issue 34): error bodies read no further
//! than 64 KiB and never built into a JSON tree, probe and token-exchange answers refused past
//! 64 KiB, reveal answers refused past their body cap, their key count or their bytes, and none
//! of these failures retried.

use std::time::Duration;

use ferrvault_operator::ferrvault::{
    ClientConfig, Credential, Endpoint, FerrVault, FerrVaultError, KeySelector, MAX_REVEAL_KEYS,
    MAX_SMALL_BODY_BYTES, RequestResult, ResponseBound, RetryPolicy, RevealRequest, RevealScope, decoders,
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    time::Instant,
};

use crate::{
    ferrvault_stub::{Reply, Stub},
    peak_growth,
};

const TOKEN: &str = "fvsat_bounds-token-0123456789";

/// One attempt of at most 10 s: a client that waited for a body to end would time out.
fn client() -> FerrVault {
    FerrVault::new(ClientConfig {
        attempt_timeout: Duration::from_secs(10),
        retry: RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        },
        coalesce_window: Duration::ZERO,
        ..crate::plain_http_config()
    })
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(20)
}

async fn reveal(
    client: &FerrVault,
    url: &str,
) -> Result<ferrvault_operator::ferrvault::Revealed, FerrVaultError> {
    let request = RevealRequest {
        scope: RevealScope::FerrVault,
        vault: "app".into(),
        keys: KeySelector::All,
    };
    client
        .reveal(
            &Endpoint::parse(url).unwrap(),
            &Credential::new(TOKEN).unwrap(),
            request,
            soon(),
        )
        .await
}

/// `[0,0,…,0]` of about `bytes` bytes: the cheapest JSON to send and, as a generic tree, the
/// dearest to hold (a 32-byte value per 2 bytes).
fn zeros(bytes: usize) -> String {
    format!("[{}0]", "0,".repeat(bytes / 2))
}

/// A server answering every request with `head` (status line and headers, no blank line) and
/// then `sent` bytes of `[0,0,…`, and then holding the connection open without another byte:
/// only a client that stops reading by itself returns before its attempt times out.
async fn holding_server(head: &'static str, sent: usize) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                // The request's content does not matter; only that the client sent one.
                let _ = stream.read(&mut request).await;
                let reply = format!("{head}\r\ncontent-type: application/json\r\n\r\n{}", zeros(sent));
                if stream.write_all(reply.as_bytes()).await.is_ok() {
                    // Hold the connection until the client drops it.
                    let _ = stream.read(&mut request).await;
                }
            });
        }
    });
    url
}

#[tokio::test]
async fn an_error_body_should_be_read_no_further_than_64_kib() {
    let url = holding_server(
        "HTTP/1.1 500 Internal Server Error\r\ncontent-length: 8388608",
        MAX_SMALL_BODY_BYTES + 4096,
    )
    .await;
    let error = reveal(&client(), &url).await.unwrap_err();
    assert!(
        matches!(&error, FerrVaultError::Server { status: 500, message, .. } if message == "internal server error"),
        "the status is mapped from the first 64 KiB, the rest never awaited: {error:?}"
    );
    let probe = client().probe(&Endpoint::parse(&url).unwrap(), soon()).await;
    assert!(
        matches!(probe, Err(FerrVaultError::Server { status: 500, .. })),
        "{probe:?}"
    );
}

#[tokio::test]
async fn a_probe_answer_over_64_kib_should_be_refused_unread() {
    // Announced: refused on the header. Chunked (no length): refused once 64 KiB arrived.
    let announced = holding_server("HTTP/1.1 200 OK\r\ncontent-length: 8388608", 16).await;
    let chunked = holding_server(
        "HTTP/1.1 200 OK\r\nconnection: close",
        MAX_SMALL_BODY_BYTES + 4096,
    )
    .await;
    for url in [announced, chunked] {
        let error = client()
            .probe(&Endpoint::parse(&url).unwrap(), soon())
            .await
            .unwrap_err();
        assert!(
            matches!(
                error,
                FerrVaultError::ResponseTooLarge(ResponseBound::Body(MAX_SMALL_BODY_BYTES))
            ),
            "{error:?}"
        );
        assert_eq!(error.reason(), "ResponseTooLarge");
        assert_eq!(
            error.to_string(),
            "ferrvault answer refused, a body over 65536 bytes: over the operator's bound, nothing of it was used"
        );
    }
    let exactly = Stub::start(Reply::json(200, &"x".repeat(MAX_SMALL_BODY_BYTES))).await;
    client()
        .probe(&Endpoint::parse(&exactly.url).unwrap(), soon())
        .await
        .expect("an answer of exactly 64 KiB is accepted");
}

#[tokio::test]
async fn a_reveal_over_its_body_cap_should_be_refused_and_counted_but_not_retried() {
    let cap = ClientConfig::default().max_body_bytes;
    let stub = Stub::start(Reply::json(
        200,
        &format!(r#"{{"hits":[],"pad":"{}"}}"#, "x".repeat(cap)),
    ))
    .await;
    let retrying = FerrVault::new(ClientConfig {
        coalesce_window: Duration::ZERO,
        ..crate::plain_http_config()
    });
    let error = reveal(&retrying, &stub.url).await.unwrap_err();
    assert!(
        matches!(error, FerrVaultError::ResponseTooLarge(ResponseBound::Body(max)) if max == cap),
        "{error:?}"
    );
    assert_eq!(
        stub.requests().len(),
        1,
        "not retried: the server would answer the same"
    );
    assert_eq!(
        retrying.limiter_snapshots()[0]
            .requests
            .get(RequestResult::Decode),
        1
    );
}

#[tokio::test]
async fn a_reveal_naming_more_keys_than_the_bound_should_be_refused() {
    let hits: Vec<serde_json::Value> = (0..=MAX_REVEAL_KEYS)
        .map(|i| serde_json::json!({ "name": format!("K{i}"), "value": "" }))
        .collect();
    let stub = Stub::start(Reply::json(200, &serde_json::json!({ "hits": hits }).to_string())).await;
    let error = reveal(&client(), &stub.url).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "ferrvault answer refused, more than 4096 keys: over the operator's bound, nothing of it was used"
    );
    assert!(error.is_response_too_large());
}

#[tokio::test]
async fn an_oidc_exchange_answer_over_64_kib_should_be_refused() {
    let dir = tempfile::tempdir().unwrap();
    let token_path = dir.path().join("token");
    std::fs::write(&token_path, "eyJhbGciOi.PROJECTED.sig").unwrap();
    let padded = serde_json::json!({
        "access_token": "ffclust_padded",
        "expires_at": "2030-01-01T00:00:00Z",
        "pad": "x".repeat(MAX_SMALL_BODY_BYTES),
    });
    let stub = Stub::start(Reply::json(200, &padded.to_string())).await;
    let identity = ferrvault_operator::ferrvault::ClusterIdentity::new(
        "0b6f1c1e-7d0a-4c55-9e55-3f1a2b3c4d5e",
        token_path,
        std::slice::from_ref(&stub.url),
        true,
    )
    .unwrap();
    let client = FerrVault::new(ClientConfig {
        cluster_identity: Some(identity),
        ..crate::plain_http_config()
    });
    let source = ferrvault_operator::ferrvault::OidcSource {
        namespace: "team-a".into(),
        name: "conn".into(),
        endpoint: Endpoint::parse(&stub.url).unwrap(),
    };
    let error = client.oidc_token(&source, soon()).await.unwrap_err();
    assert!(
        matches!(
            error,
            FerrVaultError::ResponseTooLarge(ResponseBound::Body(MAX_SMALL_BODY_BYTES))
        ),
        "{error:?}"
    );
}

#[test]
fn an_8_mib_error_body_should_be_decoded_without_building_a_tree() {
    let array = zeros(8 << 20);
    let object = format!(r#"{{"pad":{array},"error":"kept"}}"#);
    let (message, peak) = peak_growth(|| decoders::server_message(object.as_bytes()));
    assert_eq!(message.as_deref(), Some("kept"));
    assert!(
        peak < 4096,
        "decoding an 8 MiB error object held {peak} bytes at once"
    );
    let (message, peak) = peak_growth(|| decoders::server_message(array.as_bytes()));
    assert_eq!(message, None);
    assert!(peak < 4096, "decoding an 8 MiB array held {peak} bytes at once");
}

fn cloud() -> RevealScope {
    RevealScope::Cloud {
        organization: "acme".into(),
        project: "shop".into(),
        namespace: String::new(),
    }
}

#[test]
fn a_key_flood_should_be_refused_holding_no_more_than_the_bound() {
    let flood = format!(
        r#"{{"secrets":{{{}"last":""}}}}"#,
        (0..250_000).map(|i| format!(r#""K{i}":"","#)).collect::<String>()
    );
    assert!(
        flood.len() < ClientConfig::default().max_body_bytes,
        "within the body cap"
    );
    let (result, peak) = peak_growth(|| decoders::decode_reveal(&cloud(), flood.as_bytes()));
    assert!(
        matches!(
            result,
            Err(FerrVaultError::ResponseTooLarge(ResponseBound::Keys(_)))
        ),
        "{:?}",
        result.map(|revealed| revealed.secrets.len())
    );
    assert!(peak < 1 << 20, "refusing 250,000 keys held {peak} bytes at once");
    let missing = format!(
        r#"{{"hits":[],"missing":[{}"last"]}}"#,
        (0..250_000).map(|i| format!(r#""M{i}","#)).collect::<String>()
    );
    let (result, peak) = peak_growth(|| decoders::decode_reveal(&RevealScope::FerrVault, missing.as_bytes()));
    assert!(result.is_err_and(|e| e.is_response_too_large()));
    assert!(
        peak < 1 << 20,
        "refusing 250,000 missing names held {peak} bytes at once"
    );
}

#[tokio::test]
async fn an_error_body_should_be_read_whole_at_64_kib_and_cut_one_byte_over() {
    // `{"error":"kept","pad":"xx…"}` of exactly `len` bytes.
    let body = |len: usize| {
        let frame = r#"{"error":"kept","pad":""}"#.len();
        format!(r#"{{"error":"kept","pad":"{}"}}"#, "x".repeat(len - frame))
    };
    for (len, message) in [
        (MAX_SMALL_BODY_BYTES, "kept"),
        // Cut, it is no longer JSON: the status text stands in.
        (MAX_SMALL_BODY_BYTES + 1, "internal server error"),
    ] {
        let stub = Stub::start(Reply::json(500, &body(len))).await;
        let error = reveal(&client(), &stub.url).await.unwrap_err();
        assert!(
            matches!(&error, FerrVaultError::Server { message: shown, .. } if shown == message),
            "{len} bytes: {error:?}"
        );
    }
}

#[tokio::test]
async fn a_reveal_body_should_be_accepted_at_its_cap_and_refused_one_byte_over() {
    let cap = 1024;
    let capped = FerrVault::new(ClientConfig {
        max_body_bytes: cap,
        coalesce_window: Duration::ZERO,
        ..crate::plain_http_config()
    });
    // `{"hits":[],"pad":"xx…"}` of exactly `len` bytes.
    let body = |len: usize| {
        format!(
            r#"{{"hits":[],"pad":"{}"}}"#,
            "x".repeat(len - r#"{"hits":[],"pad":""}"#.len())
        )
    };
    let at = Stub::start(Reply::json(200, &body(cap))).await;
    reveal(&capped, &at.url)
        .await
        .expect("a body of exactly the cap is read");
    let over = Stub::start(Reply::json(200, &body(cap + 1))).await;
    let error = reveal(&capped, &over.url).await.unwrap_err();
    assert!(
        matches!(error, FerrVaultError::ResponseTooLarge(ResponseBound::Body(1024))),
        "{error:?}"
    );
}
