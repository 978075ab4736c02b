//! A plain-HTTP client for probing servers under test, and free ports to start them on.

use std::time::Duration;

use tokio::time::Instant;

/// A plain-HTTP client with a 10 s timeout (reqwest needs a crypto provider even for http://).
///
/// # Panics
/// When the client cannot be built.
pub fn client() -> reqwest::Client {
    // Another test in this process may have installed it already: the same provider either way.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("reqwest client builds")
}

/// `method url` → (status, body).
///
/// # Panics
/// When the request fails.
pub async fn call(method: reqwest::Method, url: &str) -> (u16, String) {
    let response = client()
        .request(method, url)
        .send()
        .await
        .unwrap_or_else(|error| panic!("{url}: {error}"));
    let status = response.status().as_u16();
    (status, response.text().await.expect("a text body"))
}

/// `GET url` → (status, body).
///
/// # Panics
/// When the request fails.
pub async fn get(url: &str) -> (u16, String) {
    call(reqwest::Method::GET, url).await
}

/// Polls `GET url` until it answers 200, up to `within` (refused connections count as "not
/// yet": the process may still be starting); returns the body.
///
/// # Panics
/// With the last answer when it never does.
pub async fn wait_for_200(url: &str, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let last = match client().get(url).send().await {
            Ok(response) if response.status() == 200 => {
                return response.text().await.expect("a text body");
            }
            Ok(response) => format!(
                "{}: {}",
                response.status(),
                response.text().await.unwrap_or_default()
            ),
            Err(error) => error.to_string(),
        };
        assert!(
            Instant::now() < deadline,
            "{url} did not answer 200 within {within:?}; last answer:\n{last}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A currently free port on 127.0.0.1 (bound then released).
///
/// # Panics
/// When nothing can be bound.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}
