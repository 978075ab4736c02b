//! The warp filters of the `/operator/…` endpoints (ferrvault mode), as the FerrVault CLI calls
//! them: reveal, list, me, create, update, delete. [`all`] mounts them both at `/operator/…` and
//! at `/v1/operator/…` (the README says why).

use std::collections::HashMap;

use bytes::Bytes;
use warp::{Filter, filters::BoxedFilter};

use super::{
    extract::{bearer, small_body},
    first_match::first_match,
    handlers::Call,
    wire::decode_segment,
};

/// The operator endpoints under both prefixes.
pub fn all() -> BoxedFilter<(Call,)> {
    let operator = warp::path("operator").and(endpoints()).boxed();
    operator
        .clone()
        .or(warp::path("v1").and(operator))
        .unify()
        .boxed()
}

/// The endpoints below `operator/`. A `{name}` path matched with a method it does not take
/// answers 405, as a router does (`GET /operator/secrets/x`).
fn endpoints() -> BoxedFilter<(Call,)> {
    let reveal = warp::path!("secrets" / "reveal")
        .and(warp::post())
        .and(bearer())
        .and(small_body())
        .map(|bearer, body: Bytes| Call::Reveal {
            bearer,
            request: serde_json::from_slice(&body).ok(),
        });
    let list = warp::path!("secrets" / "list")
        .and(warp::get())
        .and(bearer())
        .map(|bearer| Call::List { bearer });
    let me = warp::path!("me")
        .and(warp::get())
        .and(bearer())
        .map(|bearer| Call::Me { bearer });
    let create = warp::path!("secrets")
        .and(warp::post())
        .and(bearer())
        .and(small_body())
        .map(|bearer, body: Bytes| Call::Create {
            bearer,
            request: serde_json::from_slice(&body).ok(),
        });
    let update = warp::path!("secrets" / String)
        .and(warp::put())
        .and(bearer())
        .and(small_body())
        .map(|name: String, bearer, body: Bytes| Call::Update {
            bearer,
            name: decode_segment(&name),
            request: serde_json::from_slice(&body).ok(),
        });
    let delete = warp::path!("secrets" / String)
        .and(warp::delete())
        .and(bearer())
        .and(warp::query::<HashMap<String, String>>())
        .map(
            |name: String, bearer, mut query: HashMap<String, String>| Call::Delete {
                bearer,
                name: decode_segment(&name),
                vault: query.remove("vault"),
            },
        );
    first_match(
        reveal.boxed(),
        [
            list.boxed(),
            me.boxed(),
            create.boxed(),
            update.boxed(),
            delete.boxed(),
        ],
    )
}
