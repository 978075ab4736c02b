//! The routes served by the real accept loop, read byte for byte as a client reads them (the
//! answers a hand-written dispatch gave before warp, `date` aside).

use controller_actors::Check;
use prometheus_client::metrics::counter::Counter;

use super::*;
use crate::admin::{
    fixtures::{exchange, serving},
    limits::HttpLimits,
};

const NOT_FOUND: &str = "HTTP/1.1 404 Not Found\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: \
                         close\r\ncontent-length: 10\r\n\r\nnot found\n";

/// `/healthz` with a failing `progress` check and a passing `workers` one; `/readyz` passing.
fn probes_fixture() -> Routes {
    let check = |name, ok, detail: &str| Check {
        name,
        ok,
        detail: detail.to_owned(),
    };
    probe_routes(move |probe| {
        let checks = match probe {
            Probe::Liveness => vec![
                check("progress", false, "stalled"),
                check("workers", true, "none stuck"),
            ],
            Probe::Readiness => vec![check("role", true, "leader")],
        };
        ProbeReport {
            ok: checks.iter().all(|check| check.ok),
            body: String::new(),
            checks,
        }
    })
}

/// `/metrics` over a registry holding one counter, incremented once.
fn metrics_fixture() -> Routes {
    let mut registry = Registry::default();
    let requests = Counter::<u64>::default();
    requests.inc();
    registry.register("requests", "Requests made", requests);
    metrics(Arc::new(registry), None)
}

/// A secure `/metrics` whose API server is unreachable: any review it sends fails (500).
fn secure_metrics_fixture() -> Routes {
    let config = kube::Config::new("http://127.0.0.1:1".parse().expect("url"));
    let client = kube::Client::try_from(config).expect("client");
    metrics(Arc::new(Registry::default()), Some(MetricsGuard::new(client)))
}

fn serve(routes: Routes) -> SocketAddr {
    // Each test's runtime ends with the test, and the server with it.
    serving(routes, HttpLimits::default()).0
}

#[tokio::test]
async fn every_server_should_answer_405_with_allow_to_other_methods_before_looking_at_the_path() {
    for routes in [metrics_fixture(), probes_fixture(), secure_metrics_fixture()] {
        let addr = serve(routes);
        assert_eq!(
            exchange(
                addr,
                b"POST /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            .await,
            "HTTP/1.1 405 Method Not Allowed\r\ncontent-type: text/plain; charset=utf-8\r\nallow: GET, \
             HEAD\r\nconnection: close\r\ncontent-length: 63\r\n\r\nmethod POST not allowed: this server \
             only answers GET and HEAD\n"
        );
    }
}

#[tokio::test]
async fn metrics_should_be_taken_at_its_exact_path_only() {
    let addr = serve(metrics_fixture());
    for request in [
        &b"GET /metrics/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"[..],
        b"GET /metrics/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"GET /metricsx HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    ] {
        assert_eq!(
            exchange(addr, request).await,
            NOT_FOUND,
            "{}",
            String::from_utf8_lossy(request)
        );
    }
}

#[tokio::test]
async fn secure_metrics_should_refuse_unknown_paths_and_methods_before_any_review() {
    let addr = serve(secure_metrics_fixture());
    let status = |answer: String| answer.lines().next().unwrap_or_default().to_owned();
    assert_eq!(
        status(
            exchange(
                addr,
                b"GET /metrics HTTP/1.1\r\nAuthorization: Bearer t\r\nConnection: close\r\n\r\n"
            )
            .await
        ),
        "HTTP/1.1 500 Internal Server Error",
        "/metrics is reviewed (and the review fails)"
    );
    for (request, expected) in [
        (
            &b"GET /debug HTTP/1.1\r\nAuthorization: Bearer t\r\nConnection: close\r\n\r\n"[..],
            "HTTP/1.1 404 Not Found",
        ),
        (
            b"GET /metrics/x HTTP/1.1\r\nAuthorization: Bearer t\r\nConnection: close\r\n\r\n",
            "HTTP/1.1 404 Not Found",
        ),
        (
            b"POST /metrics HTTP/1.1\r\nAuthorization: Bearer t\r\nConnection: close\r\n\r\n",
            "HTTP/1.1 405 Method Not Allowed",
        ),
    ] {
        assert_eq!(
            status(exchange(addr, request).await),
            expected,
            "{}",
            String::from_utf8_lossy(request)
        );
    }
}

#[tokio::test]
async fn metrics_should_serve_the_format_the_accept_header_asks_for() {
    let addr = serve(metrics_fixture());
    let openmetrics = exchange(
        addr,
        b"GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5\r\n\
          Connection: close\r\n\r\n",
    )
    .await;
    assert!(
        openmetrics.starts_with(
            "HTTP/1.1 200 OK\r\ncontent-type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\n"
        ) && openmetrics.ends_with(
            "\r\n\r\n# HELP requests Requests made.\n# TYPE requests counter\nrequests_total 1\n# EOF\n"
        ),
        "{openmetrics}"
    );
    // An `Accept` header that is not text asks for nothing: the classic format.
    for request in [
        &b"GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n"[..],
        b"GET /metrics HTTP/1.1\r\nAccept: \xff\xfe\r\nConnection: close\r\n\r\n",
    ] {
        let text = exchange(addr, request).await;
        assert!(
            text.starts_with("HTTP/1.1 200 OK\r\ncontent-type: text/plain; version=0.0.4; charset=utf-8\r\n")
                && text.ends_with(
                    "\r\n\r\n# HELP requests_total Requests made.\n# TYPE requests_total counter\nrequests_total 1\n"
                ),
            "{text}"
        );
    }
}

#[tokio::test]
async fn probes_should_answer_as_controller_runtime_does() {
    let addr = serve(probes_fixture());
    let probe = |status: &str, body: &str| {
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\nx-content-type-options: \
             nosniff\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let failing = "[-]progress failed: stalled\n[+]workers ok: none stuck\nhealthz check failed\n";
    for (request, expected) in [
        (
            &b"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n"[..],
            probe("500 Internal Server Error", failing),
        ),
        (
            b"GET /healthz/ HTTP/1.1\r\nConnection: close\r\n\r\n",
            probe("500 Internal Server Error", failing),
        ),
        (
            b"GET /healthz?exclude=reconcile-progress HTTP/1.1\r\nConnection: close\r\n\r\n",
            probe("200 OK", "ok"),
        ),
        (
            b"GET /healthz/workers HTTP/1.1\r\nConnection: close\r\n\r\n",
            probe("200 OK", "ok"),
        ),
        (
            b"GET /healthz//progress/ HTTP/1.1\r\nConnection: close\r\n\r\n",
            probe("500 Internal Server Error", "internal server error: stalled\n"),
        ),
        (
            b"GET /healthz/nope HTTP/1.1\r\nConnection: close\r\n\r\n",
            probe("404 Not Found", "404 page not found\n"),
        ),
        (
            b"GET /readyz?verbose HTTP/1.1\r\nConnection: close\r\n\r\n",
            probe("200 OK", "[+]role ok: leader\nhealthz check passed\n"),
        ),
        (
            b"HEAD /readyz HTTP/1.1\r\nConnection: close\r\n\r\n",
            probe("200 OK", "ok").replace("\r\n\r\nok", "\r\n\r\n"),
        ),
        (
            b"GET /healthzx HTTP/1.1\r\nConnection: close\r\n\r\n",
            NOT_FOUND.to_owned(),
        ),
        (
            b"GET //healthz HTTP/1.1\r\nConnection: close\r\n\r\n",
            NOT_FOUND.to_owned(),
        ),
    ] {
        assert_eq!(
            exchange(addr, request).await,
            expected,
            "{}",
            String::from_utf8_lossy(request)
        );
    }
}

#[test]
fn only_the_exact_format_text_pair_should_select_text() {
    assert!(wants_text("format=text"));
    assert!(wants_text("a=1&format=text"));
    assert!(!wants_text("format=json"));
    assert!(!wants_text(""));
}
