//! The warp filters of the FerrVault API: they only extract and decode a [`Call`]; the pipeline in
//! `handlers.rs` decides the answer.

use std::{collections::HashMap, convert::Infallible, sync::Arc};

use bytes::Bytes;
use warp::{Filter, Rejection, Reply, filters::BoxedFilter, http::StatusCode};

use super::{
    admin,
    config::Redacted,
    handlers::{Call, handle},
    state::SimState,
    wire::decode_segment,
};

/// Largest request body accepted (requests are tiny JSON objects).
const MAX_REQUEST_BODY: u64 = 64 * 1024;

/// Every route the simulator serves. Each route matches its path before its method, so a wrong path
/// answers 404 and a wrong method on a known path 405 (warp ranks 405 above 404 when combining).
///: the FerrVault API plus the `/_sim` admin paths.
pub fn all(state: Arc<SimState>) -> BoxedFilter<(warp::reply::Response,)> {
    api(Arc::clone(&state))
        .or(admin::routes(state))
        .unify()
        .recover(answer_rejection)
        .unify()
        .boxed()
}

fn api(state: Arc<SimState>) -> BoxedFilter<(warp::reply::Response,)> {
    let healthz = warp::path!("healthz").and(warp::get()).map(|| Call::Healthz);
    let reveal = warp::path!("operator" / "secrets" / "reveal")
        .and(warp::post())
        .and(bearer())
        .and(small_body())
        .map(|bearer, body: Bytes| Call::Reveal {
            bearer,
            request: serde_json::from_slice(&body).ok(),
        });
    let cloud_path = warp::path!(
        "api"
            / "v1"
            / "orgs"
            / String
            / "projects"
            / String
            / "vaults"
            / "by-name"
            / String
            / "secrets"
            / "reveal"
    );
    let cloud_reveal = cloud_path
        .and(warp::get())
        .and(bearer())
        .and(warp::header::optional::<String>("x-ferrvault-namespace"))
        .and(warp::query::<HashMap<String, String>>())
        .map(
            |org: String,
             project: String,
             vault: String,
             bearer,
             namespace,
             query: HashMap<String, String>| {
                Call::CloudReveal {
                    bearer,
                    namespace,
                    org: decode_segment(&org),
                    project: decode_segment(&project),
                    vault: decode_segment(&vault),
                    names: query.get("names").map(|names| split_names(names)),
                }
            },
        );
    let oidc_exchange = warp::path!("api" / "v1" / "clusters" / "oidc-exchange")
        .and(warp::post())
        .and(small_body())
        .map(|body: Bytes| Call::OidcExchange {
            request: serde_json::from_slice(&body).ok(),
        });
    healthz
        .or(reveal)
        .unify()
        .or(cloud_reveal)
        .unify()
        .or(oidc_exchange)
        .unify()
        .then(move |call| handle(Arc::clone(&state), call))
        .boxed()
}

/// A request declared a body larger than [`MAX_REQUEST_BODY`].
#[derive(Debug)]
struct BodyTooLarge;

impl warp::reject::Reject for BodyTooLarge {}

/// The request body, refused with 413 when its declared length exceeds [`MAX_REQUEST_BODY`].
/// Unlike `warp::body::content_length_limit`, a chunked body (no `Content-Length`) is accepted, as a
/// real server would.
fn small_body() -> impl Filter<Extract = (Bytes,), Error = Rejection> + Clone {
    warp::header::optional::<u64>("content-length")
        .and_then(|length: Option<u64>| async move {
            match length {
                Some(length) if length > MAX_REQUEST_BODY => Err(warp::reject::custom(BodyTooLarge)),
                Some(_) | None => Ok(()),
            }
        })
        .untuple_one()
        .and(warp::body::bytes())
}

/// The bearer of `Authorization: Bearer <token>` (scheme case-insensitive), if any.
fn bearer() -> impl Filter<Extract = (Option<Redacted>,), Error = Infallible> + Clone {
    warp::header::optional::<String>("authorization")
        .or(warp::any().map(|| None))
        .unify()
        .map(|header: Option<String>| header.as_deref().and_then(parse_bearer))
}

fn parse_bearer(header: &str) -> Option<Redacted> {
    let (scheme, token) = header.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then(|| Redacted::new(token))
}

/// Splits the (already query-decoded) comma-joined `names` value.
fn split_names(names: &str) -> Vec<String> {
    names
        .split(',')
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Unmatched routes answer JSON like the rest of the API.
async fn answer_rejection(rejection: Rejection) -> Result<warp::reply::Response, Infallible> {
    let status = if rejection.is_not_found() {
        StatusCode::NOT_FOUND
    } else if rejection.find::<warp::reject::MethodNotAllowed>().is_some() {
        StatusCode::METHOD_NOT_ALLOWED
    } else if rejection.find::<BodyTooLarge>().is_some() {
        StatusCode::PAYLOAD_TOO_LARGE
    } else {
        StatusCode::BAD_REQUEST
    };
    let body =
        warp::reply::json(&serde_json::json!({ "error": status.canonical_reason().unwrap_or("error") }));
    Ok(warp::reply::with_status(body, status).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_bearer_should_accept_any_scheme_case_and_refuse_other_schemes() {
        assert_eq!(parse_bearer("Bearer fvsat_x"), Some(Redacted::new("fvsat_x")));
        assert_eq!(parse_bearer("bearer  fvsat_x "), Some(Redacted::new("fvsat_x")));
        assert_eq!(parse_bearer("Basic abc"), None);
        assert_eq!(parse_bearer("Bearer "), None);
    }

    #[test]
    fn names_should_split_on_commas_and_drop_empty_ones() {
        assert_eq!(split_names("A,B%2C,,C"), ["A", "B%2C", "C"]);
    }
}
