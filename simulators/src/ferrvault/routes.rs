//! The warp filters of the FerrVault API: they only extract and decode a [`Call`]; the pipeline in
//! `handlers.rs` decides the answer.

use std::{collections::HashMap, convert::Infallible, sync::Arc};

use bytes::Bytes;
use warp::{Filter, Rejection, Reply, filters::BoxedFilter, http::StatusCode};

use super::{
    admin,
    extract::{BodyTooLarge, bearer, small_body},
    first_match::first_match,
    handlers::{Call, handle},
    operator_routes,
    state::SimState,
    wire::decode_segment,
};

/// Every route the simulator serves. Each route matches its path before its method, so a wrong path
/// answers 404 and a wrong method on a known path 405 (warp ranks 405 above 404 when combining):
/// the FerrVault API plus the `/_sim` admin paths.
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
    first_match(
        healthz.boxed(),
        [
            operator_routes::all(),
            cloud_reveal.boxed(),
            oidc_exchange.boxed(),
        ],
    )
    .then(move |call| handle(Arc::clone(&state), call))
    .boxed()
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
    // Most specific first: a body refused by the route that matched path and method outranks
    // the 405s of the routes sharing its path (`PUT|DELETE /operator/secrets/{name}`).
    let status = if rejection.find::<BodyTooLarge>().is_some() {
        StatusCode::PAYLOAD_TOO_LARGE
    } else if rejection.is_not_found() {
        StatusCode::NOT_FOUND
    } else if rejection.find::<warp::reject::MethodNotAllowed>().is_some() {
        StatusCode::METHOD_NOT_ALLOWED
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
    fn names_should_split_on_commas_and_drop_empty_ones() {
        assert_eq!(split_names("A,B%2C,,C"), ["A", "B%2C", "C"]);
    }
}
