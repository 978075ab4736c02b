//! The warp service: turns HTTP requests into API calls, applies faults, records audit
//! entries and renders `Status` errors.

use super::{
    admin,
    admission::{Directive, FieldValidation},
    api::{self, DeleteOpts, Target, WriteOpts},
    audit::{AuditEntry, audit_time},
    auth::{enforce, reviews, users::authenticate},
    discovery,
    encoding::{json_response, read_object, respond, respond_error, speaks_protobuf},
    errors::ApiError,
    faults::{Verdict, decide, decide_lost, must_wait},
    gc::Propagation,
    list::ListQuery,
    managed::manager_name,
    metadata::View,
    openapi,
    patch::PatchType,
    protobuf::Wire,
    request::{Query, ResourcePath, Route, route, verb},
    scale,
    selectors::{FieldSelector, LabelSelector, Selectors},
    state::Shared,
    watch::{self, WatchQuery},
};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use serde_json::Value;
use std::{sync::Arc, time::Duration};
use warp::{Filter, Reply, reply::Response};

/// Everything the handler needs from one HTTP request.
struct Req {
    method: Method,
    path: String,
    query: Query,
    headers: HeaderMap,
    body: Bytes,
}

/// The warp filter serving the whole simulator. `server_address` is `host:port` for
/// `/api`'s `serverAddressByClientCIDRs`.
pub fn service(
    shared: Arc<Shared>,
    server_address: String,
) -> impl Filter<Extract = (Response,), Error = warp::Rejection> + Clone {
    warp::method()
        .and(warp::path::full())
        .and(warp::query::<Query>().or(warp::any().map(Query::new)).unify())
        .and(warp::header::headers_cloned())
        .and(warp::body::bytes())
        .then(move |method, path: warp::path::FullPath, query, headers, body| {
            let req = Req {
                method,
                path: path.as_str().to_string(),
                query,
                headers,
                body,
            };
            handle(shared.clone(), server_address.clone(), req)
        })
}

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

async fn handle(shared: Arc<Shared>, server_address: String, req: Req) -> Response {
    let route = route(&req.path);
    if let Route::Admin(segments) = &route {
        return admin::handle(&shared, &req.method, segments, &req.query, &req.body);
    }
    let identity = shared.audit.identity(
        req.headers.get("impersonate-user").and_then(|v| v.to_str().ok()),
        header_str(&req.headers, header::AUTHORIZATION),
        header_str(&req.headers, header::USER_AGENT),
    );
    let mut entry = AuditEntry {
        time: String::new(),
        verb: req.method.as_str().to_lowercase(),
        group: String::new(),
        resource: String::new(),
        subresource: String::new(),
        namespace: String::new(),
        name: String::new(),
        identity,
        code: 0,
        path: req.path.clone(),
    };
    let response = match (refusal(&shared, &req, &route), route) {
        (Some(e), _) => respond_error(Wire::Json, &e),
        (None, Route::Resource(p)) => resource_request(&shared, &req, p, &mut entry).await,
        (None, other) => non_resource(&shared, &server_address, other, &req.method, &req.headers).await,
    };
    entry.code = response.status().as_u16();
    entry.time = audit_time();
    shared.audit.record(entry);
    response
}

/// Why the request is refused, when the simulator authorizes requests and RBAC does not
/// allow this one.
fn refusal(shared: &Shared, req: &Req, route: &Route) -> Option<ApiError> {
    if !shared.enforce_rbac {
        return None;
    }
    let attrs = enforce::attributes(route, &req.method, &req.path, is_true(&req.query, "watch"))?;
    let user = authenticate(&req.headers, &shared.audit);
    enforce::check(&shared.read(), user.as_ref(), &attrs).err()
}

async fn non_resource(
    shared: &Shared,
    server_address: &str,
    route: Route,
    method: &Method,
    headers: &HeaderMap,
) -> Response {
    if !matches!(*method, Method::GET | Method::HEAD) {
        return respond_error(Wire::Json, &ApiError::method_not_allowed());
    }
    let store = shared.read();
    if route == Route::OpenApiV2 {
        return openapi::v2::response(&store, header_str(headers, header::ACCEPT).unwrap_or_default());
    }
    let doc = match route {
        Route::Version => Some(discovery::version()),
        Route::CoreVersions => Some(discovery::core_versions(server_address)),
        Route::Groups => Some(discovery::group_list(&store.registry)),
        Route::Group(g) => discovery::group(&store.registry, &g),
        Route::Resources { group, version } => discovery::resource_list(&store.registry, &group, &version),
        Route::OpenApiV3(rest) if rest.is_empty() => Some(openapi::index(&store)),
        Route::OpenApiV3(rest) => openapi::document_at(&store, &rest),
        Route::Health => return warp::reply::with_status("ok", StatusCode::OK).into_response(),
        Route::Admin(_) | Route::Resource(_) | Route::Unknown | Route::OpenApiV2 => None,
    };
    match doc {
        Some(d) => json_response(200, &d),
        None => respond_error(Wire::Json, &ApiError::no_route("get")),
    }
}

fn is_true(q: &Query, k: &str) -> bool {
    matches!(q.get(k).map(String::as_str), Some("true" | "1"))
}

fn selectors(q: &Query, p: &ResourcePath) -> Result<Selectors, ApiError> {
    Ok(Selectors {
        labels: LabelSelector::parse(q.get("labelSelector").map_or("", String::as_str))?,
        fields: FieldSelector::parse(
            q.get("fieldSelector").map_or("", String::as_str),
            &p.group,
            &p.plural,
        )?,
    })
}

/// Waits out hangs and freezes, sleeps the injected latency and rolls for failures.
async fn apply_faults(shared: &Shared, verb: &str, resource: &str, identity: &str) -> Result<(), ApiError> {
    let mut faults = shared.faults.subscribe();
    tokio::select! {
        r = faults.wait_for(|c| !must_wait(c, verb, resource, identity)) => {
            if r.is_err() { return Err(ApiError::injected(503)); }
        }
        () = shared.shutdown.cancelled() => return Err(ApiError::injected(503)),
    }
    let config = shared.faults.borrow().clone();
    if config.latency_ms > 0 {
        tokio::time::sleep(Duration::from_millis(config.latency_ms)).await;
    }
    match decide(&config, verb, resource, identity, rand::random::<f64>()) {
        Verdict::Proceed => Ok(()),
        Verdict::Fail(code) => Err(ApiError::injected(code)),
    }
}

async fn resource_request(
    shared: &Arc<Shared>,
    req: &Req,
    p: ResourcePath,
    entry: &mut AuditEntry,
) -> Response {
    entry.group.clone_from(&p.group);
    entry.resource.clone_from(&p.plural);
    entry.subresource = p.subresource.clone().unwrap_or_default();
    entry.namespace = p.namespace.clone().unwrap_or_default();
    entry.name = p.name.clone().unwrap_or_default();
    let watching = is_true(&req.query, "watch");
    let Some(verb) = verb(&req.method, p.name.is_some(), watching) else {
        return respond_error(Wire::Json, &ApiError::method_not_allowed());
    };
    entry.verb = verb.to_string();
    let wire = negotiate(shared, req, &p);
    if let Err(e) = apply_faults(shared, verb, &p.plural, &entry.identity).await {
        return respond_error(wire.unwrap_or(Wire::Json), &e);
    }
    let answer = match wire {
        Some(wire) => dispatch(shared, req, &p, verb, wire).await,
        None => Err(ApiError::not_acceptable()),
    };
    let answer = answer.and_then(|r| lose_response(shared, verb, &p.plural, &entry.identity).map(|()| r));
    answer.unwrap_or_else(|e| respond_error(wire.unwrap_or(Wire::Json), &e))
}

/// The injected error replacing the answer to a handled request, when a lost-response
/// rule says so.
fn lose_response(shared: &Shared, verb: &str, resource: &str, identity: &str) -> Result<(), ApiError> {
    if verb == "watch" {
        return Ok(());
    }
    let config = shared.faults.borrow().clone();
    match decide_lost(&config, verb, resource, identity, rand::random::<f64>()) {
        Verdict::Proceed => Ok(()),
        Verdict::Fail(code) => Err(ApiError::injected(code)),
    }
}

/// The encoding of the answer: protobuf when the client prefers it and the addressed kind
/// has a protobuf form; `None` when the client accepts nothing offered.
fn negotiate(shared: &Shared, req: &Req, p: &ResourcePath) -> Option<Wire> {
    let offered = shared
        .read()
        .registry
        .lookup(&p.group, &p.version, &p.plural)
        .is_some_and(|rt| speaks_protobuf(rt, &p.version));
    Wire::negotiate(
        header_str(&req.headers, header::ACCEPT).unwrap_or_default(),
        offered,
    )
}

fn target(shared: &Shared, p: &ResourcePath) -> Result<Target, ApiError> {
    let rt = shared
        .read()
        .registry
        .lookup(&p.group, &p.version, &p.plural)
        .cloned()
        .ok_or_else(|| ApiError::no_route(&p.plural))?;
    let bad_sub = match p.subresource.as_deref() {
        None => false,
        Some("status") => !rt.has_status,
        Some("scale") => !scale::is_scalable(&rt),
        Some(_) => true,
    };
    if bad_sub || (!rt.namespaced && p.namespace.is_some()) {
        return Err(ApiError::no_route(&p.plural));
    }
    Ok(Target {
        version: p.version.clone(),
        namespace: p.namespace.clone(),
        name: p.name.clone(),
        subresource: p.subresource.clone(),
        rt,
    })
}

fn parse_object(req: &Req, t: &Target) -> Result<Value, ApiError> {
    let protobuf = speaks_protobuf(&t.rt, &t.version);
    read_object(
        header_str(&req.headers, header::CONTENT_TYPE),
        &req.body,
        protobuf,
    )
}

fn delete_opts(req: &Req) -> Result<DeleteOpts, ApiError> {
    let body: Value = if req.body.is_empty() {
        Value::Null
    } else {
        read_object(header_str(&req.headers, header::CONTENT_TYPE), &req.body, true)?
    };
    let policy = req
        .query
        .get("propagationPolicy")
        .map(String::as_str)
        .or_else(|| body["propagationPolicy"].as_str());
    let propagation = match policy {
        None => None,
        Some(p) => Some(
            Propagation::parse(p)
                .ok_or_else(|| ApiError::bad_request(format!("unknown propagationPolicy {p:?}")))?,
        ),
    };
    let propagation = propagation.or_else(|| match body["orphanDependents"].as_bool() {
        Some(true) => Some(Propagation::Orphan),
        _ => None,
    });
    let pre = |k: &str| body["preconditions"][k].as_str().map(String::from);
    Ok(DeleteOpts {
        propagation,
        uid: pre("uid"),
        resource_version: pre("resourceVersion"),
    })
}

async fn dispatch(
    shared: &Arc<Shared>,
    req: &Req,
    p: &ResourcePath,
    verb: &str,
    wire: Wire,
) -> Result<Response, ApiError> {
    let t = target(shared, p)?;
    let q = &req.query;
    let accept = header_str(&req.headers, header::ACCEPT).unwrap_or("application/json");
    let view = View::negotiate(accept, q.get("includeObject").map(String::as_str));
    let opts = WriteOpts {
        dry_run: q.get("dryRun").is_some_and(|d| d == "All"),
        manager: manager_name(
            q.get("fieldManager").map(String::as_str),
            header_str(&req.headers, header::USER_AGENT),
        ),
        directive: Directive {
            field_validation: FieldValidation::parse(q.get("fieldValidation").map(String::as_str))?,
            ..Directive::default()
        },
    };
    if t.rt.is_review() {
        if verb != "create" {
            return Err(ApiError::method_not_allowed());
        }
        let requester = authenticate(&req.headers, &shared.audit);
        let body = parse_object(req, &t)?;
        let review = reviews::create(&shared.read(), &shared.audit, &t, requester.as_ref(), body)?;
        return Ok(respond(wire, 201, &review));
    }
    if t.subresource.as_deref() == Some("scale") {
        return scale_request(shared, req, &t, verb, &opts).map(|scale| respond(wire, 200, &scale));
    }
    let mut response = match verb {
        "get" => respond(wire, 200, &api::get(shared, &t, view)?),
        "list" => {
            let lq = ListQuery {
                selectors: selectors(q, p)?,
                limit: q.get("limit").and_then(|l| l.parse().ok()),
                continue_token: q.get("continue").cloned(),
                resource_version: q.get("resourceVersion").cloned(),
                resource_version_match: q.get("resourceVersionMatch").cloned(),
            };
            respond(wire, 200, &api::list_objects(shared, &t, &lq, view)?)
        }
        "watch" => {
            let wq = WatchQuery {
                selectors: selectors(q, p)?,
                resource_version: q.get("resourceVersion").cloned(),
                send_initial_events: is_true(q, "sendInitialEvents"),
                bookmarks: is_true(q, "allowWatchBookmarks"),
                timeout: q
                    .get("timeoutSeconds")
                    .and_then(|s| s.parse().ok())
                    .map(Duration::from_secs),
            };
            let body = watch::start(shared.clone(), t, wq, view)?;
            let mut r = warp::reply::stream(body).into_response();
            r.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            r
        }
        "create" => respond(
            wire,
            201,
            &api::create(shared, &t, parse_object(req, &t)?, &opts)?,
        ),
        "update" => respond(
            wire,
            200,
            &api::update(shared, &t, parse_object(req, &t)?, &opts)?,
        ),
        "patch" => {
            let ct = header_str(&req.headers, header::CONTENT_TYPE).unwrap_or_default();
            let kind =
                PatchType::from_content_type(ct).ok_or_else(|| ApiError::unsupported_media_type(ct))?;
            let (code, obj) = api::patch(shared, &t, kind, &req.body, &opts)?;
            respond(wire, code, &obj)
        }
        "delete" => respond(wire, 200, &api::delete(shared, &t, &delete_opts(req)?)?),
        "deletecollection" => {
            let lq = ListQuery {
                selectors: selectors(q, p)?,
                ..ListQuery::default()
            };
            respond(
                wire,
                200,
                &api::delete_collection(shared, &t, &lq, &delete_opts(req)?)?,
            )
        }
        _ => return Err(ApiError::method_not_allowed()),
    };
    for warning in opts.directive.warnings.texts() {
        if let Ok(value) = HeaderValue::from_str(&format!("299 - {warning:?}")) {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    Ok(response)
}

/// A request to a `scale` subresource (get, update, patch).
fn scale_request(
    shared: &Shared,
    req: &Req,
    t: &Target,
    verb: &str,
    opts: &WriteOpts,
) -> Result<Value, ApiError> {
    match verb {
        "get" => scale::get(shared, t),
        "update" => scale::update(shared, t, parse_object(req, t)?, opts),
        "patch" => {
            let ct = header_str(&req.headers, header::CONTENT_TYPE).unwrap_or_default();
            let kind =
                PatchType::from_content_type(ct).ok_or_else(|| ApiError::unsupported_media_type(ct))?;
            scale::patch(shared, t, kind, &req.body, opts)
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}
