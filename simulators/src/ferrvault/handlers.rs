//! The request pipeline shared by every FerrVault endpoint:
//! count → fault delay → unserved? → authenticate → rate limit → fault disruption → endpoint logic.
//!
//! # Order, and why
//! - Latency and hang come first: a slow server is slow for everyone, including 401s and 429s.
//! - An endpoint configured as unserved answers 404/405 before authentication, as a router
//!   without the route would: it spends no budget, but it is counted.
//! - Authentication precedes the limiter: buckets are per token, so an unknown token has no bucket
//!   (it gets 401 and spends nothing).
//! - Vault authorisation (403 wrong vault, 404) comes after the limiter, like a real server whose
//!   limiter middleware runs before its handlers: a 403 spends budget.
//! - `/healthz` and the OIDC exchange are not rate limited (reference §2.5: the probe was taken out of
//!   the limiter; the exchange carries no bearer).

use std::{borrow::Cow, sync::Arc, time::SystemTime};

use tokio::time::Instant;

use super::{
    accounting::InFlight,
    config::Redacted,
    endpoints,
    faults::{Disruption, Endpoint},
    identity::Caller,
    operator_reads, operator_writes,
    rate_limit::Admission,
    reply::Reply,
    state::SimState,
    wire::{CreateRequest, ExchangeRequest, RevealRequest, UpdateRequest},
};

/// One request, as the routes extracted it. Path segments and query values are already decoded.
#[derive(Debug)]
pub enum Call {
    /// `GET /healthz`.
    Healthz,
    /// `POST /operator/secrets/reveal`.
    Reveal {
        /// Bearer token, if any.
        bearer: Option<Redacted>,
        /// The parsed body; `None` when it was not `{vault, names?}` (answered 400 after counting).
        request: Option<RevealRequest>,
    },
    /// `GET /api/v1/orgs/{org}/projects/{project}/vaults/by-name/{vault}/secrets/reveal`.
    CloudReveal {
        /// Bearer token, if any.
        bearer: Option<Redacted>,
        /// `X-FerrVault-Namespace`, if any.
        namespace: Option<String>,
        /// Decoded `{org}`.
        org: String,
        /// Decoded `{project}`.
        project: String,
        /// Decoded `{vault}`.
        vault: String,
        /// Decoded, comma-split `names`; `None` when absent.
        names: Option<Vec<String>>,
    },
    /// `POST /api/v1/clusters/oidc-exchange`.
    OidcExchange {
        /// The parsed body; `None` when it was not `{cluster_id, token}`.
        request: Option<ExchangeRequest>,
    },
    /// `GET /operator/secrets/list`.
    List {
        /// Bearer token, if any.
        bearer: Option<Redacted>,
    },
    /// `GET /operator/me`.
    Me {
        /// Bearer token, if any.
        bearer: Option<Redacted>,
    },
    /// `POST /operator/secrets`.
    Create {
        /// Bearer token, if any.
        bearer: Option<Redacted>,
        /// The parsed body; `None` when it was not `{vault, name, value}`.
        request: Option<CreateRequest>,
    },
    /// `PUT /operator/secrets/{name}`.
    Update {
        /// Bearer token, if any.
        bearer: Option<Redacted>,
        /// Decoded `{name}`.
        name: String,
        /// The parsed body; `None` when it was not `{vault, value}`.
        request: Option<UpdateRequest>,
    },
    /// `DELETE /operator/secrets/{name}?vault=`.
    Delete {
        /// Bearer token, if any.
        bearer: Option<Redacted>,
        /// Decoded `{name}`.
        name: String,
        /// The `vault` query parameter, if any.
        vault: Option<String>,
    },
}

impl Call {
    fn endpoint(&self) -> Endpoint {
        match self {
            Self::Healthz => Endpoint::Healthz,
            Self::Reveal { .. } => Endpoint::Reveal,
            Self::CloudReveal { .. } => Endpoint::CloudReveal,
            Self::OidcExchange { .. } => Endpoint::OidcExchange,
            Self::List { .. } => Endpoint::List,
            Self::Me { .. } => Endpoint::Me,
            Self::Create { .. } => Endpoint::Create,
            Self::Update { .. } => Endpoint::Update,
            Self::Delete { .. } => Endpoint::Delete,
        }
    }

    fn bearer(&self) -> Option<&str> {
        match self {
            Self::Reveal { bearer, .. }
            | Self::CloudReveal { bearer, .. }
            | Self::List { bearer }
            | Self::Me { bearer }
            | Self::Create { bearer, .. }
            | Self::Update { bearer, .. }
            | Self::Delete { bearer, .. } => bearer.as_ref().map(Redacted::expose),
            Self::Healthz | Self::OidcExchange { .. } => None,
        }
    }

    /// Who the counters attribute the request to: the caller's label or fingerprint, or
    /// `oidc:<cluster_id>` for an exchange (it carries no bearer; the cluster id is not a secret).
    fn accounting_key<'a>(&self, caller: &'a Caller) -> Cow<'a, str> {
        match self {
            Self::OidcExchange {
                request: Some(request),
            } => Cow::Owned(format!("oidc:{}", request.cluster_id)),
            Self::Healthz
            | Self::Reveal { .. }
            | Self::CloudReveal { .. }
            | Self::OidcExchange { request: None }
            | Self::List { .. }
            | Self::Me { .. }
            | Self::Create { .. }
            | Self::Update { .. }
            | Self::Delete { .. } => Cow::Borrowed(caller.key()),
        }
    }

    /// The vault the request names, for per-vault counts (`list` and `me` name none: they
    /// are not counted per vault, so per-vault counts stay the reads and writes of secrets).
    fn vault(&self) -> Option<&str> {
        match self {
            Self::Reveal { request, .. } => request.as_ref().map(|r| r.vault.as_str()),
            Self::Create { request, .. } => request.as_ref().map(|r| r.vault.as_str()),
            Self::Update { request, .. } => request.as_ref().map(|r| r.vault.as_str()),
            Self::Delete { vault, .. } => vault.as_deref(),
            Self::CloudReveal { vault, .. } => Some(vault),
            Self::List { .. } | Self::Me { .. } | Self::Healthz | Self::OidcExchange { .. } => None,
        }
    }
}

/// Runs the whole pipeline for one request.
pub async fn handle(state: Arc<SimState>, call: Call) -> warp::reply::Response {
    let endpoint = call.endpoint();
    let caller = state.tokens.identify(call.bearer(), Instant::now());
    let mut request = state
        .accounting
        .begin(&call.accounting_key(&caller), endpoint, call.vault());
    let plan = state.faults.plan(endpoint, caller.key());
    state.faults.delay(endpoint, &plan).await;
    let reply = answer(&state, &call, &caller, &request, plan.disruption);
    request.finished(reply.outcome());
    reply.into_response()
}

fn answer(
    state: &SimState,
    call: &Call,
    caller: &Caller,
    request: &InFlight,
    disruption: Option<Disruption>,
) -> Reply {
    if let Some(unserved) = state.unserved(call.endpoint()) {
        let status = http::StatusCode::from_u16(unserved.status()).expect("404 and 405 are statuses");
        return Reply::error(unserved.status(), status.canonical_reason().unwrap_or("error"));
    }
    if let Some(denied) = authenticate(call, caller) {
        return denied;
    }
    if is_rate_limited(call) {
        let admission = state.limiter.admit(caller.key(), Instant::now());
        if let Admission::Rejected { retry_after } = admission {
            return Reply::too_many_requests(retry_after, state.retry_after_format(), SystemTime::now());
        }
    }
    request.accepted();
    if let Some(disruption) = disruption {
        return Reply::disrupted(disruption);
    }
    match call {
        Call::Healthz => Reply::json(200, &serde_json::json!({ "status": "ok" })),
        Call::Reveal { request, .. } => endpoints::reveal(state, caller, request.as_ref()),
        Call::CloudReveal {
            namespace,
            org,
            project,
            vault,
            names,
            ..
        } => {
            let target = endpoints::CloudTarget {
                org,
                project,
                vault,
                names: names.as_deref(),
            };
            endpoints::cloud_reveal(state, caller, namespace.as_deref(), &target)
        }
        Call::OidcExchange { request } => endpoints::oidc_exchange(state, request.as_ref()),
        Call::List { .. } => operator_reads::list(state, caller),
        Call::Me { .. } => operator_reads::me(state, caller),
        Call::Create { request, .. } => operator_writes::create(state, caller, request.as_ref()),
        Call::Update { name, request, .. } => operator_writes::update(state, caller, name, request.as_ref()),
        Call::Delete { name, vault, .. } => operator_writes::delete(state, caller, name, vault.as_deref()),
    }
}

/// 401 unless the caller holds the kind of token the endpoint takes.
fn authenticate(call: &Call, caller: &Caller) -> Option<Reply> {
    let is_allowed = match call {
        Call::Healthz | Call::OidcExchange { .. } => true,
        Call::Reveal { .. }
        | Call::List { .. }
        | Call::Me { .. }
        | Call::Create { .. }
        | Call::Update { .. }
        | Call::Delete { .. } => matches!(caller, Caller::ServiceAccount { .. }),
        Call::CloudReveal { .. } => matches!(caller, Caller::Org { .. } | Caller::Cluster { .. }),
    };
    (!is_allowed).then(|| Reply::error(401, "unauthorized"))
}

/// Every authenticated endpoint spends the token's one budget (the README's metering caveat).
fn is_rate_limited(call: &Call) -> bool {
    match call {
        Call::Reveal { .. }
        | Call::CloudReveal { .. }
        | Call::List { .. }
        | Call::Me { .. }
        | Call::Create { .. }
        | Call::Update { .. }
        | Call::Delete { .. } => true,
        Call::Healthz | Call::OidcExchange { .. } => false,
    }
}
