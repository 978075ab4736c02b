//! One [`Handler`] per server. Each server is a single handler that dispatches on the path, so
//! the method rule (GET/HEAD, else 405) and the 404 are decided in one place.

use std::{future::Future, sync::Arc};

use bytes::Bytes;
use controller_actors::{HealthHandle, QueueHandle, TreeHandle};
use futures::future::BoxFuture;
use http::{Method, StatusCode, header, request::Parts};
use http_body_util::Full;
use prometheus_client::registry::Registry;

use super::{
    debug_queue::{self, QueueReport},
    exposition, healthz,
    secure::MetricsGuard,
};
use crate::ferrvault::FerrVault;

/// The OpenMetrics text format that `prometheus-client` writes (Prometheus and promtool read it).
pub const OPENMETRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

const TEXT: &str = "text/plain; charset=utf-8";
const JSON: &str = "application/json";

/// A response with its whole body (every answer here is small and built at once).
pub type Reply = http::Response<Full<Bytes>>;

/// A server's behaviour: a request head in (no server here reads a body), a response out.
pub type Handler = Arc<dyn Fn(Parts) -> BoxFuture<'static, Reply> + Send + Sync>;

/// `/metrics`: every registered metric, encoded at scrape time: OpenMetrics when the `Accept`
/// header asks for it (Prometheus does), else the classic text format (promtool, curl).
/// With a `guard`, every request is authenticated and authorized first (secure metrics).
pub fn metrics(registry: Arc<Registry>, guard: Option<Arc<MetricsGuard>>) -> Handler {
    let serve = server(move |path, _query, accept| {
        let registry = registry.clone();
        async move {
            if path != "/metrics" {
                return not_found();
            }
            let encoded = if exposition::wants_openmetrics(accept.as_deref()) {
                let mut body = String::new();
                prometheus_client::encoding::text::encode(&mut body, &registry)
                    .map(|()| (OPENMETRICS_CONTENT_TYPE, body))
            } else {
                let mut text = exposition::PrometheusText::default();
                prometheus_client::encoding::text::encode(&mut text, &registry)
                    .map(|()| (exposition::PROMETHEUS_TEXT, text.finish()))
            };
            match encoded {
                Ok((content_type, body)) => reply(StatusCode::OK, content_type, body),
                Err(error) => reply(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    TEXT,
                    format!("encoding metrics failed: {error}\n"),
                ),
            }
        }
    });
    let Some(guard) = guard else {
        return serve;
    };
    Arc::new(move |parts: Parts| {
        let (guard, serve) = (guard.clone(), serve.clone());
        Box::pin(async move {
            match guard.admit(&parts).await {
                Ok(()) => serve(parts).await,
                Err(refusal) => reply(refusal.status(), TEXT, refusal.body()),
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
        if parts.method != Method::GET && parts.method != Method::HEAD {
            return Box::pin(std::future::ready(method_not_allowed(&parts.method)));
        }
        let accept = parts
            .headers
            .get(header::ACCEPT)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let query = parts.uri.query().unwrap_or_default().to_owned();
        Box::pin(handler(parts.uri.path().to_owned(), query, accept))
    })
}

fn method_not_allowed(method: &Method) -> Reply {
    let mut response = reply(
        StatusCode::METHOD_NOT_ALLOWED,
        TEXT,
        format!("method {method} not allowed: this server only answers GET and HEAD\n"),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, header::HeaderValue::from_static("GET, HEAD"));
    response
}

fn wants_text(query: &str) -> bool {
    query.split('&').any(|pair| pair == "format=text")
}

/// A response with a text body of `content_type`.
pub(super) fn reply(status: StatusCode, content_type: &'static str, body: String) -> Reply {
    let mut response = http::Response::new(Full::new(Bytes::from(body)));
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

    #[test]
    fn only_the_exact_format_text_pair_should_select_text() {
        assert!(wants_text("format=text"));
        assert!(wants_text("a=1&format=text"));
        assert!(!wants_text("format=json"));
        assert!(!wants_text(""));
    }
}
