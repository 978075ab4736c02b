//! One [`Handler`] per server. Each server is a single handler that dispatches on the path, so
//! the method rule (GET/HEAD, else 405) and the 404 are decided in one place.
//!
//! # Guarantees
//! - `/metrics` decides the method (405) and the path (404) before anything else: with secure
//!   metrics, a request that could never be served costs no TokenReview or SubjectAccessReview.
//! - `/metrics` bodies come from a [`RenderCache`]: every scrape within a second shares one body.

use std::{future::Future, net::SocketAddr, sync::Arc};

use bytes::Bytes;
use controller_actors::{HealthHandle, QueueHandle, TreeHandle};
use futures::future::BoxFuture;
use http::{Method, StatusCode, header, request::Parts};
use http_body_util::Full;
use prometheus_client::registry::Registry;

use super::{
    debug_queue::{self, QueueReport},
    exposition::{self, Format},
    healthz,
    render_cache::RenderCache,
    secure::{MetricsGuard, Refusal},
};
use crate::ferrvault::FerrVault;

const TEXT: &str = "text/plain; charset=utf-8";
const JSON: &str = "application/json";

/// A response with its whole body (every answer here is built at once, or shared).
pub type Reply = http::Response<Full<Bytes>>;

/// A server's behaviour: a request head in (no server here reads a body), a response out.
pub type Handler = Arc<dyn Fn(Parts) -> BoxFuture<'static, Reply> + Send + Sync>;

/// The address of the client that sent a request, put in the request's extensions by the
/// listener (secure metrics limits reviews per address).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer(pub SocketAddr);

/// `/metrics`: every registered metric, OpenMetrics when the `Accept` header asks for it
/// (Prometheus does), else the classic text format (promtool, curl); one body per format shared
/// by the scrapes of a second ([`RenderCache`]). With a `guard`, a request for `/metrics` is
/// authenticated and authorized first (secure metrics); any other request is refused before.
pub fn metrics(registry: Arc<Registry>, guard: Option<Arc<MetricsGuard>>) -> Handler {
    let bodies = Arc::new(RenderCache::new(move |format, capacity| {
        exposition::encode(&registry, format, capacity)
    }));
    Arc::new(move |parts: Parts| {
        let (bodies, guard) = (bodies.clone(), guard.clone());
        Box::pin(async move {
            if let Some(refused) = refuse_method(&parts.method) {
                return refused;
            }
            if parts.uri.path() != "/metrics" {
                return not_found();
            }
            if let Some(guard) = guard
                && let Err(refusal) = guard.admit(&parts, source(&parts)).await
            {
                return refused(&refusal);
            }
            let format = Format::negotiate(accept(&parts).as_deref());
            match bodies.body(format).await {
                Ok(body) => reply_bytes(StatusCode::OK, format.content_type(), body),
                Err(error) => reply(StatusCode::INTERNAL_SERVER_ERROR, TEXT, format!("{error}\n")),
            }
        })
    })
}

/// `/healthz` (liveness) and `/readyz` (readiness, with the role), with their `/<check>`
/// sub-paths, `?verbose` and `?exclude=`, as controller-runtime answers them ([`healthz`]).
pub fn probes(health: HealthHandle) -> Handler {
    server(move |path, query, _accept| {
        let answer = [("/healthz", true), ("/readyz", false)]
            .into_iter()
            .find_map(|(root, live)| {
                let sub_path = path.strip_prefix(root)?;
                (sub_path.is_empty() || sub_path.starts_with('/')).then_some((sub_path, live))
            })
            .map(|(sub_path, live)| {
                let report = if live {
                    health.liveness()
                } else {
                    health.readiness()
                };
                healthz::answer(&report, sub_path, &query)
            });
        async move {
            match answer {
                Some(answer) => {
                    let mut response = reply(answer.status, TEXT, answer.body);
                    response.headers_mut().insert(
                        header::X_CONTENT_TYPE_OPTIONS,
                        header::HeaderValue::from_static("nosniff"),
                    );
                    response
                }
                None => not_found(),
            }
        }
    })
}

/// `/debug/actors` (JSON; `?format=text` for an indented tree) and `/debug/queue`.
pub fn debug(tree: TreeHandle, queues: QueueHandle, ferrvault: FerrVault) -> Handler {
    server(move |path, query, _accept| {
        let (tree, queues, ferrvault) = (tree.clone(), queues.clone(), ferrvault.clone());
        async move {
            match path.as_str() {
                "/debug/actors" if wants_text(&query) => reply(StatusCode::OK, TEXT, tree.to_text()),
                "/debug/actors" => reply(StatusCode::OK, JSON, tree.to_json().to_string()),
                "/debug/queue" => {
                    let mut reports = Vec::new();
                    for controller in queues.controllers() {
                        reports.push(QueueReport {
                            controller,
                            stats: queues.stats(controller),
                            keys: queues.keys(controller).await,
                        });
                    }
                    let document = debug_queue::document(&reports, &ferrvault.limiter_snapshots());
                    reply(StatusCode::OK, JSON, document.to_string())
                }
                _ => not_found(),
            }
        }
    })
}

/// A server made of one handler `(path, raw query, Accept header) -> response`, behind the
/// method rule.
fn server<H, F>(handler: H) -> Handler
where
    H: Fn(String, String, Option<String>) -> F + Send + Sync + 'static,
    F: Future<Output = Reply> + Send + 'static,
{
    Arc::new(move |parts: Parts| {
        if let Some(refused) = refuse_method(&parts.method) {
            return Box::pin(std::future::ready(refused));
        }
        let query = parts.uri.query().unwrap_or_default().to_owned();
        Box::pin(handler(parts.uri.path().to_owned(), query, accept(&parts)))
    })
}

/// 405 with an `Allow` header for anything but GET and HEAD.
fn refuse_method(method: &Method) -> Option<Reply> {
    if method == Method::GET || method == Method::HEAD {
        return None;
    }
    let mut response = reply(
        StatusCode::METHOD_NOT_ALLOWED,
        TEXT,
        format!("method {method} not allowed: this server only answers GET and HEAD\n"),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, header::HeaderValue::from_static("GET, HEAD"));
    Some(response)
}

/// The request's `Accept` header, if it is text.
fn accept(parts: &Parts) -> Option<String> {
    parts
        .headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

/// The client's address; requests the listener did not mark (none in this process) share the
/// unspecified address, and so its limits.
fn source(parts: &Parts) -> std::net::IpAddr {
    parts
        .extensions
        .get::<Peer>()
        .map_or(std::net::Ipv4Addr::UNSPECIFIED.into(), |peer| peer.0.ip())
}

/// The answer to a refused scrape, with `Retry-After` when the refusal says when to come back.
fn refused(refusal: &Refusal) -> Reply {
    let mut response = reply(refusal.status(), TEXT, refusal.body());
    if let Some(after) = refusal.retry_after() {
        // Whole seconds, rounded up: a client that waits as told finds a review waiting.
        let seconds = after.as_secs() + u64::from(after.subsec_nanos() > 0);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from(seconds.max(1)));
    }
    response
}

fn wants_text(query: &str) -> bool {
    query.split('&').any(|pair| pair == "format=text")
}

/// A response with a text body of `content_type`.
pub(super) fn reply(status: StatusCode, content_type: &'static str, body: String) -> Reply {
    reply_bytes(status, content_type, Bytes::from(body))
}

/// A response whose body is `body` itself (a shared body is not copied).
fn reply_bytes(status: StatusCode, content_type: &'static str, body: Bytes) -> Reply {
    let mut response = http::Response::new(Full::new(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    response
}

/// A plain-text answer of the server itself (limits), not of a handler.
pub(super) fn text(status: StatusCode, body: &str) -> Reply {
    reply(status, TEXT, body.to_owned())
}

fn not_found() -> Reply {
    reply(StatusCode::NOT_FOUND, TEXT, "not found\n".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A secure `/metrics` whose API server is unreachable: any review it sends fails (500).
    fn secure_metrics() -> Handler {
        let config = kube::Config::new("http://127.0.0.1:1".parse().expect("url"));
        let client = kube::Client::try_from(config).expect("client");
        metrics(Arc::new(Registry::default()), Some(MetricsGuard::new(client)))
    }

    async fn status(handler: &Handler, method: Method, path: &str) -> StatusCode {
        let request = http::Request::builder()
            .method(method)
            .uri(path)
            .header(header::AUTHORIZATION, "Bearer some-token")
            .body(())
            .expect("request");
        handler(request.into_parts().0).await.status()
    }

    #[tokio::test]
    async fn secure_metrics_should_refuse_unknown_paths_and_methods_before_any_review() {
        let handler = secure_metrics();
        assert_eq!(
            status(&handler, Method::GET, "/metrics").await,
            StatusCode::INTERNAL_SERVER_ERROR,
            "/metrics is reviewed (and the review fails)"
        );
        assert_eq!(
            status(&handler, Method::GET, "/debug").await,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            status(&handler, Method::GET, "/metrics/x").await,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            status(&handler, Method::POST, "/metrics").await,
            StatusCode::METHOD_NOT_ALLOWED
        );
    }

    #[test]
    fn only_the_exact_format_text_pair_should_select_text() {
        assert!(wants_text("format=text"));
        assert!(wants_text("a=1&format=text"));
        assert!(!wants_text("format=json"));
        assert!(!wants_text(""));
    }
}
