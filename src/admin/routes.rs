//! The routes of each server, as warp filters: [`metrics`], [`probes`] and [`debug`]. The
//! hardened accept loop (`listener.rs`) serves them through `warp::service`; warp's own server
//! is not used.
//!
//! # Guarantees
//! - The method is the first filter of every server: anything but GET and HEAD gets 405 with an
//!   `Allow` header before a path is looked at.
//! - A path no route takes gets 404. `/metrics`, `/debug/actors` and `/debug/queue` are taken
//!   exactly (no sub-path, no trailing slash); `/healthz` and `/readyz` take their `/<check>`
//!   sub-paths.
//! - `/metrics` decides the method (405) and the path (404) before its guard: with secure
//!   metrics, a request that could never be served costs no TokenReview or SubjectAccessReview.
//! - `/metrics` bodies come from a [`RenderCache`]: every scrape within a second shares one body.
//! - The routes read snapshots (the health verdict, the published tree, the registry); a probe
//!   never waits on an actor.

use std::{
    convert::Infallible,
    net::{IpAddr, Ipv4Addr, SocketAddr},
    sync::Arc,
};

use bytes::Bytes;
use controller_actors::{HealthHandle, ProbeReport, QueueHandle, TreeHandle};
use http::{HeaderValue, Method, StatusCode, header};
use prometheus_client::registry::Registry;
use warp::{
    Filter, Rejection,
    filters::{BoxedFilter, path::FullPath},
    path::Tail,
};

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
pub type Reply = warp::reply::Response;

/// A server's routes: a request in (no route reads a body), a response out. Every refusal is
/// answered (405, 404, the guard's), so the filter never rejects.
pub type Routes = BoxedFilter<(Reply,)>;

/// The address of the client that sent a request, put in the request's extensions by the
/// listener (secure metrics limits reviews per address).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer(pub SocketAddr);

/// `/metrics`: every registered metric, OpenMetrics when the `Accept` header asks for it
/// (Prometheus does), else the classic text format (promtool, curl); one body per format shared
/// by the scrapes of a second ([`RenderCache`]). With a `guard`, a request for `/metrics` is
/// authenticated and authorized first (secure metrics); any other request is refused before.
pub fn metrics(registry: Arc<Registry>, guard: Option<Arc<MetricsGuard>>) -> Routes {
    let bodies = Arc::new(RenderCache::new(move |format, capacity| {
        exposition::encode(&registry, format, capacity)
    }));
    let scrape = exact("/metrics")
        .and(admitted(guard))
        .and(header_value("accept"))
        .and_then(move |accept: Option<HeaderValue>| {
            let bodies = bodies.clone();
            async move {
                let format = Format::negotiate(accept.as_ref().and_then(|value| value.to_str().ok()));
                Ok::<_, Infallible>(match bodies.body(format).await {
                    Ok(body) => reply_bytes(StatusCode::OK, format.content_type(), body),
                    Err(error) => reply(StatusCode::INTERNAL_SERVER_ERROR, TEXT, format!("{error}\n")),
                })
            }
        });
    server(scrape)
}

/// Which probe a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    /// `/healthz`.
    Liveness,
    /// `/readyz`.
    Readiness,
}

/// `/healthz` (liveness) and `/readyz` (readiness, with the role), with their `/<check>`
/// sub-paths, `?verbose` and `?exclude=`, as controller-runtime answers them ([`healthz`]).
pub fn probes(health: HealthHandle) -> Routes {
    probe_routes(move |probe| match probe {
        Probe::Liveness => health.liveness(),
        Probe::Readiness => health.readiness(),
    })
}

/// The probe routes over `report`, which reads the verdict of a probe.
fn probe_routes(report: impl Fn(Probe) -> ProbeReport + Clone + Send + Sync + 'static) -> Routes {
    let probe = move |root: &'static str, probe: Probe| {
        let report = report.clone();
        warp::path(root)
            .and(warp::path::tail())
            .and(raw_query())
            .map(move |check: Tail, query: String| {
                let answer = healthz::answer(&report(probe), check.as_str(), &query);
                let mut response = reply(answer.status, TEXT, answer.body);
                response.headers_mut().insert(
                    header::X_CONTENT_TYPE_OPTIONS,
                    HeaderValue::from_static("nosniff"),
                );
                response
            })
    };
    server(
        probe("healthz", Probe::Liveness)
            .or(probe("readyz", Probe::Readiness))
            .unify(),
    )
}

/// `/debug/actors` (JSON; `?format=text` for an indented tree) and `/debug/queue`.
pub fn debug(tree: TreeHandle, queues: QueueHandle, ferrvault: FerrVault) -> Routes {
    let actors = exact("/debug/actors").and(raw_query()).map(move |query: String| {
        if wants_text(&query) {
            reply(StatusCode::OK, TEXT, tree.to_text())
        } else {
            reply(StatusCode::OK, JSON, tree.to_json().to_string())
        }
    });
    let queue = exact("/debug/queue").and_then(move || {
        let (queues, ferrvault) = (queues.clone(), ferrvault.clone());
        async move {
            let mut reports = Vec::new();
            for controller in queues.controllers() {
                reports.push(QueueReport {
                    controller,
                    stats: queues.stats(controller),
                    keys: queues.keys(controller).await,
                });
            }
            let document = debug_queue::document(&reports, &ferrvault.limiter_snapshots());
            Ok::<_, Infallible>(reply(StatusCode::OK, JSON, document.to_string()))
        }
    });
    server(actors.or(queue).unify())
}

/// A server made of `routes`, behind the method rule, with every refusal answered.
fn server<F>(routes: F) -> Routes
where
    F: Filter<Extract = (Reply,), Error = Rejection> + Clone + Send + Sync + 'static,
{
    get_or_head()
        .and(routes)
        .recover(|rejection| async move { Ok::<_, Infallible>(answer(&rejection)) })
        .unify()
        .boxed()
}

/// A method other than GET and HEAD (answered 405).
#[derive(Debug)]
struct MethodRefused(Method);

impl warp::reject::Reject for MethodRefused {}

/// A scrape the metrics guard refused (answered with the refusal's status).
#[derive(Debug)]
struct Refused(Refusal);

impl warp::reject::Reject for Refused {}

/// GET and HEAD pass; any other method is refused.
fn get_or_head() -> impl Filter<Extract = (), Error = Rejection> + Copy {
    warp::method()
        .and_then(|method: Method| async move {
            if method == Method::GET || method == Method::HEAD {
                Ok(())
            } else {
                Err(warp::reject::custom(MethodRefused(method)))
            }
        })
        .untuple_one()
}

/// Requests for exactly `path` (warp's `path!` would take a trailing slash too).
fn exact(path: &'static str) -> impl Filter<Extract = (), Error = Rejection> + Copy {
    warp::path::full()
        .and_then(move |full: FullPath| async move {
            if full.as_str() == path {
                Ok(())
            } else {
                Err(warp::reject::not_found())
            }
        })
        .untuple_one()
}

/// The requests `guard` admits, or every request without a guard (plain metrics); the others
/// are refused with the guard's [`Refusal`].
fn admitted(guard: Option<Arc<MetricsGuard>>) -> BoxedFilter<()> {
    let Some(guard) = guard else {
        return warp::any().boxed();
    };
    warp::method()
        .and(warp::path::full())
        .and(header_value("authorization"))
        .and(source())
        .and_then(
            move |method: Method, path: FullPath, authorization: Option<HeaderValue>, source: IpAddr| {
                let guard = guard.clone();
                async move {
                    guard
                        .admit(&method, path.as_str(), authorization.as_ref(), source)
                        .await
                        .map_err(|refusal| warp::reject::custom(Refused(refusal)))
                }
            },
        )
        .untuple_one()
        .boxed()
}

/// The first value of the header `name`, if any, whatever its bytes (warp's `header::optional`
/// would refuse a value that is not visible ASCII).
fn header_value(
    name: &'static str,
) -> impl Filter<Extract = (Option<HeaderValue>,), Error = Infallible> + Copy {
    warp::header::value(name)
        .map(Some)
        .or(warp::any().map(|| None))
        .unify()
}

/// The raw query, empty when the request has none.
fn raw_query() -> impl Filter<Extract = (String,), Error = Infallible> + Copy {
    warp::query::raw().or(warp::any().map(String::new)).unify()
}

/// The client's address; requests the listener did not mark (none in this process) share the
/// unspecified address, and so its limits.
fn source() -> impl Filter<Extract = (IpAddr,), Error = Infallible> + Copy {
    warp::ext::optional::<Peer>()
        .map(|peer: Option<Peer>| peer.map_or(Ipv4Addr::UNSPECIFIED.into(), |peer| peer.0.ip()))
}

/// The answer to a refused request: 405 for a method, the guard's refusal, and 404 for the
/// rest (the routes refuse nothing else: no route took the path).
fn answer(rejection: &Rejection) -> Reply {
    if let Some(MethodRefused(method)) = rejection.find() {
        method_refused(method)
    } else if let Some(Refused(refusal)) = rejection.find() {
        refused(refusal)
    } else {
        reply(StatusCode::NOT_FOUND, TEXT, "not found\n".to_owned())
    }
}

/// 405 with an `Allow` header.
fn method_refused(method: &Method) -> Reply {
    let mut response = reply(
        StatusCode::METHOD_NOT_ALLOWED,
        TEXT,
        format!("method {method} not allowed: this server only answers GET and HEAD\n"),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    response
}

/// The answer to a refused scrape, with `Retry-After` when the refusal says when to come back.
fn refused(refusal: &Refusal) -> Reply {
    let mut response = reply(refusal.status(), TEXT, refusal.body());
    if let Some(after) = refusal.retry_after() {
        // Whole seconds, rounded up: a client that waits as told finds a review waiting.
        let seconds = after.as_secs() + u64::from(after.subsec_nanos() > 0);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds.max(1)));
    }
    response
}

fn wants_text(query: &str) -> bool {
    query.split('&').any(|pair| pair == "format=text")
}

/// A response with a text body of `content_type`.
fn reply(status: StatusCode, content_type: &'static str, body: String) -> Reply {
    reply_bytes(status, content_type, Bytes::from(body))
}

/// A response whose body is `body` itself (a shared body is not copied).
fn reply_bytes(status: StatusCode, content_type: &'static str, body: Bytes) -> Reply {
    let mut response = Reply::new(body.into());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// A plain-text answer of the server itself (limits), not of a route.
pub(crate) fn text(status: StatusCode, body: &str) -> Reply {
    reply(status, TEXT, body.to_owned())
}

#[cfg(test)]
mod tests;
