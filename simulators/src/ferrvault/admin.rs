//! The `/_sim` admin paths: the same controls as the Rust handle, for the CLI simulator and for
//! clients written in other languages. Not authenticated, not rate limited, not counted.
//!
//! | Method | Path | Body | Effect |
//! |---|---|---|---|
//! | GET | `/_sim/stats` | | [`super::SimStats`] as JSON |
//! | DELETE | `/_sim/stats` | | zero the counters |
//! | GET | `/_sim/faults` | | active faults by endpoint |
//! | PUT | `/_sim/faults/{endpoint}` | [`super::FaultSpec`] | replace that endpoint's faults |
//! | DELETE | `/_sim/faults/{endpoint}` | | clear them (releases hangs) |
//! | DELETE | `/_sim/faults` | | clear all faults |
//! | PUT | `/_sim/rate-limits/{token label or fingerprint}` | `{"per_second", "burst"}` | set one token's bucket |
//! | PUT | `/_sim/rate-limits` | `{"per_second", "burst"}` | set the default bucket |
//! | PUT | `/_sim/settings` | `{"rejected_requests_spend_budget"?, "retry_after"?}` | switch debt mode / `Retry-After` format |
//! | POST | `/_sim/expire-cluster-tokens` | | expire every minted `ffclust_` token |
//! | PUT | `/_sim/vaults/{vault}/secrets/{name}` | `{"value": …}` | set a secret (a rotation: its version increases) |
//! | DELETE | `/_sim/vaults/{vault}/secrets/{name}` | | delete it |
//! | PUT | `/_sim/unserved/{endpoint}` | `"not_found"` or `"method_not_allowed"` | stop serving it (404/405) |
//! | DELETE | `/_sim/unserved/{endpoint}` | | serve it again |
//!
//! `{endpoint}` is one of `healthz`, `reveal`, `cloud_reveal`, `oidc_exchange`, `list`, `me`,
//! `create`, `update`, `delete`.

use std::sync::Arc;

use serde::Deserialize;
use tokio::time::Instant;
use warp::{Filter, Reply, filters::BoxedFilter, http::StatusCode};

use super::{
    config::{Redacted, RetryAfterFormat, Unserved},
    faults::{Endpoint, FaultSpec},
    first_match::first_match,
    rate_limit::RateLimit,
    state::SimState,
    wire::decode_segment,
};

/// Runtime switches settable over `PUT /_sim/settings`; absent fields stay as they are.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    rejected_requests_spend_budget: Option<bool>,
    retry_after: Option<RetryAfterFormat>,
}

/// The body of `PUT /_sim/vaults/{vault}/secrets/{name}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewValue {
    value: Redacted,
}

/// The admin filters.
pub fn routes(state: Arc<SimState>) -> BoxedFilter<(warp::reply::Response,)> {
    let with_state = warp::any().map(move || Arc::clone(&state));
    let base = warp::path("_sim");

    let stats = base
        .and(warp::path!("stats"))
        .and(warp::get())
        .and(with_state.clone())
        .map(|s: Arc<SimState>| warp::reply::json(&s.accounting.snapshot()).into_response());
    let reset_stats = base
        .and(warp::path!("stats"))
        .and(warp::delete())
        .and(with_state.clone())
        .map(|s: Arc<SimState>| {
            s.accounting.reset();
            no_content()
        });
    let list_faults = base
        .and(warp::path!("faults"))
        .and(warp::get())
        .and(with_state.clone())
        .map(|s: Arc<SimState>| warp::reply::json(&s.faults.active()).into_response());
    let set_fault = base
        .and(warp::path!("faults" / String))
        .and(warp::put())
        .and(warp::body::json())
        .and(with_state.clone())
        .map(|name: String, spec: FaultSpec, s: Arc<SimState>| {
            with_endpoint(&name, |endpoint| s.faults.set(endpoint, spec))
        });
    let clear_fault = base
        .and(warp::path!("faults" / String))
        .and(warp::delete())
        .and(with_state.clone())
        .map(|name: String, s: Arc<SimState>| with_endpoint(&name, |endpoint| s.faults.clear(endpoint)));
    let clear_faults = base
        .and(warp::path!("faults"))
        .and(warp::delete())
        .and(with_state.clone())
        .map(|s: Arc<SimState>| {
            s.faults.clear_all();
            no_content()
        });
    let set_token_limit = base
        .and(warp::path!("rate-limits" / String))
        .and(warp::put())
        .and(warp::body::json())
        .and(with_state.clone())
        .map(|key: String, limit: RateLimit, s: Arc<SimState>| {
            with_valid(limit, |limit| s.set_token_limit(&decode_segment(&key), limit))
        });
    let set_default_limit = base
        .and(warp::path!("rate-limits"))
        .and(warp::put())
        .and(warp::body::json())
        .and(with_state.clone())
        .map(|limit: RateLimit, s: Arc<SimState>| {
            with_valid(limit, |limit| s.limiter.set_default_limit(limit, Instant::now()))
        });
    let settings = base
        .and(warp::path!("settings"))
        .and(warp::put())
        .and(warp::body::json())
        .and(with_state.clone())
        .map(|settings: Settings, s: Arc<SimState>| {
            if let Some(debt) = settings.rejected_requests_spend_budget {
                s.limiter.set_debt_mode(debt);
            }
            if let Some(format) = settings.retry_after {
                *s.retry_after
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = format;
            }
            no_content()
        });
    let expire = base
        .and(warp::path!("expire-cluster-tokens"))
        .and(warp::post())
        .and(with_state.clone())
        .map(|s: Arc<SimState>| {
            s.tokens.expire_minted();
            no_content()
        });
    let put_secret = base
        .and(warp::path!("vaults" / String / "secrets" / String))
        .and(warp::put())
        .and(warp::body::json())
        .and(with_state.clone())
        .map(|vault: String, name: String, body: NewValue, s: Arc<SimState>| {
            let done = s.vaults.put_secret(
                &decode_segment(&vault),
                &decode_segment(&name),
                body.value.expose(),
            );
            done_or_no_vault(done)
        });
    let delete_secret = base
        .and(warp::path!("vaults" / String / "secrets" / String))
        .and(warp::delete())
        .and(with_state.clone())
        .map(|vault: String, name: String, s: Arc<SimState>| {
            let done = s
                .vaults
                .remove_secret(&decode_segment(&vault), &decode_segment(&name));
            done_or_no_vault(done)
        });
    let unserve = base
        .and(warp::path!("unserved" / String))
        .and(warp::put())
        .and(warp::body::json())
        .and(with_state.clone())
        .map(|name: String, how: Unserved, s: Arc<SimState>| {
            with_endpoint(&name, |endpoint| s.set_unserved(endpoint, Some(how)))
        });
    let serve = base
        .and(warp::path!("unserved" / String))
        .and(warp::delete())
        .and(with_state)
        .map(|name: String, s: Arc<SimState>| {
            with_endpoint(&name, |endpoint| s.set_unserved(endpoint, None))
        });

    first_match(
        stats.boxed(),
        [
            reset_stats.boxed(),
            list_faults.boxed(),
            set_fault.boxed(),
            clear_fault.boxed(),
            clear_faults.boxed(),
            set_token_limit.boxed(),
            set_default_limit.boxed(),
            settings.boxed(),
            expire.boxed(),
            put_secret.boxed(),
            delete_secret.boxed(),
            unserve.boxed(),
            serve.boxed(),
        ],
    )
}

fn no_content() -> warp::reply::Response {
    StatusCode::NO_CONTENT.into_response()
}

fn bad_request(error: &str) -> warp::reply::Response {
    let body = warp::reply::json(&serde_json::json!({ "error": error }));
    warp::reply::with_status(body, StatusCode::BAD_REQUEST).into_response()
}

fn with_endpoint(name: &str, apply: impl FnOnce(Endpoint)) -> warp::reply::Response {
    match Endpoint::from_name(name) {
        Some(endpoint) => {
            apply(endpoint);
            no_content()
        }
        None => bad_request(
            "unknown endpoint: use healthz, reveal, cloud_reveal, oidc_exchange, list, me, create, update or \
             delete",
        ),
    }
}

fn done_or_no_vault(done: bool) -> warp::reply::Response {
    if done {
        return no_content();
    }
    let body = warp::reply::json(&serde_json::json!({ "error": "vault not found" }));
    warp::reply::with_status(body, StatusCode::NOT_FOUND).into_response()
}

fn with_valid(limit: RateLimit, apply: impl FnOnce(RateLimit)) -> warp::reply::Response {
    match limit.validate() {
        Ok(()) => {
            apply(limit);
            no_content()
        }
        Err(error) => bad_request(&error),
    }
}
