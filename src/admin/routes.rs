//! One warp filter per server. Each server is a single handler that dispatches on the path, so
//! the method rule (GET/HEAD, else 405) and the 404 are decided in one place.

use std::{future::Future, sync::Arc};

use controller_actors::{HealthHandle, QueueHandle, TreeHandle};
use http::{Method, StatusCode, header};
use prometheus_client::registry::Registry;
use warp::{
    Filter, Reply,
    filters::{BoxedFilter, path::FullPath},
    reply::Response,
};

use super::{
    debug_queue::{self, QueueReport},
    exposition, healthz,
};
use crate::ferrvault::FerrVault;

/// The OpenMetrics text format that `prometheus-client` writes (Prometheus and promtool read it).
pub const OPENMETRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

const TEXT: &str = "text/plain; charset=utf-8";
const JSON: &str = "application/json";

/// `/metrics`: every registered metric, encoded at scrape time: OpenMetrics when the `Accept`
/// header asks for it (Prometheus does), else the classic text format (promtool, curl).
pub fn metrics(registry: Arc<Registry>) -> BoxedFilter<(Response,)> {
    server(move |path, _query, accept| {
        let registry = registry.clone();
        async move {
            if path != "/metrics" {
                return not_found();
            }
            let mut body = String::new();
            match prometheus_client::encoding::text::encode(&mut body, &registry) {
                Ok(()) if exposition::wants_openmetrics(accept.as_deref()) => {
                    reply(StatusCode::OK, OPENMETRICS_CONTENT_TYPE, body)
                }
                Ok(()) => reply(
                    StatusCode::OK,
                    exposition::PROMETHEUS_TEXT,
                    exposition::to_prometheus_text(&body),
                ),
                Err(error) => reply(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    TEXT,
                    format!("encoding metrics failed: {error}\n"),
                ),
            }
        }
    })
}

/// `/healthz` (liveness) and `/readyz` (readiness, with the role), with their `/<check>`
/// sub-paths, `?verbose` and `?exclude=`, as controller-runtime answers them ([`healthz`]).
pub fn probes(health: HealthHandle) -> BoxedFilter<(Response,)> {
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
pub fn debug(tree: TreeHandle, queues: QueueHandle, ferrvault: FerrVault) -> BoxedFilter<(Response,)> {
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
fn server<H, F>(handler: H) -> BoxedFilter<(Response,)>
where
    H: Fn(String, String, Option<String>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response> + Send + 'static,
{
    let raw_query = warp::query::raw().or(warp::any().map(String::new)).unify();
    warp::method()
        .and(warp::path::full())
        .and(raw_query)
        .and(warp::header::optional::<String>("accept"))
        .then(
            move |method: Method, path: FullPath, query: String, accept: Option<String>| {
                let handler = handler.clone();
                async move {
                    if method == Method::GET || method == Method::HEAD {
                        handler(path.as_str().to_owned(), query, accept).await
                    } else {
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
                }
            },
        )
        .boxed()
}

fn wants_text(query: &str) -> bool {
    query.split('&').any(|pair| pair == "format=text")
}

fn reply(status: StatusCode, content_type: &'static str, body: String) -> Response {
    warp::reply::with_status(
        warp::reply::with_header(body, header::CONTENT_TYPE, content_type),
        status,
    )
    .into_response()
}

fn not_found() -> Response {
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
