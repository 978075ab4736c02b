//! The FerrVault HTTP client: reveals paced per credential, shared between concurrent
//! callers, retried when the server fails, and never printing a token or a value; and the
//! `list` and `me` calls, paced and bounded the same way.
//!
//! # Layout
//! - [`FerrVault`] (`client.rs`): the shared client object the reconcilers call.
//! - `config.rs`: [`ClientConfig`]. `credential.rs`, `endpoint.rs`: who and where.
//! - `error.rs`: [`FerrVaultError`], its `reason()` and the status-code mapping; `error/body.rs`:
//!   the message of an error body, decoded without a JSON tree.
//! - `http.rs`: the attempt loop (pacing, timeouts, retries); `pool.rs`: the pooled `reqwest`
//!   clients, one per endpoint in use; `trust.rs`: the CA roots they trust (system roots
//!   parsed once and shared, plus a connection's bundle); `pinning.rs`: `pinSha256` and how a
//!   refused handshake is recognised, `tls_refusal.rs` ([`TlsRefusal`]) what it says; `client_identity.rs`: the client certificate (`clientCertSecretRef`).
//! - `retry.rs`, `retry_after.rs`: retry arithmetic and `Retry-After` parsing (pure).
//! - [`limiter`]: the token bucket with AIMD adaptation (pure); `pacer.rs`: the shared,
//!   async, FIFO wrapper around it; `snapshot.rs`: what the limiter shows outside.
//! - `single_flight.rs`: one request for concurrent reveals of one vault.
//! - `share.rs`: [`BudgetShare`], a shared credential's part of its budget under shards (pure).
//! - `reveal.rs`: request/answer types and both wire formats; `reveal/decode.rs`: the answer
//!   decoder, bounded while it decodes; `reveal/missing.rs`: [`MissingKeys`];
//!   `answer_budget.rs`: the bounds both it and the `list` decoder charge.
//! - `client/account.rs`: the `list` and `me` calls; `inventory.rs`: the `list` answer
//!   ([`Inventory`]) and its bounded decoder; `token_info.rs`: the `me` answer ([`TokenInfo`]).
//! - `egress.rs`: [`EgressPolicy`], which addresses a FerrVault URL may lead to (pure);
//!   `egress_gate.rs`: where it is enforced (the resolver of every pooled client, IP-literal
//!   hosts); `host_facts.rs`: the operator's own addresses and its API server's, read at start.
//! - `identity.rs`: the operator's cluster identity and where it may be sent; `oidc.rs`: the
//!   token broker exchanging it; `token_file.rs`: the bounded read of the projected token.
//! - [`metrics`]: a prometheus-client collector over the limiter snapshots.
//!
//! # Flow of a reveal
//! `FerrVault::reveal` → single-flight (join or start a flight) → the flight's task waits
//! the coalescing window → `http::call` takes a token from the credential's pacer → freezes
//! the key selector → sends → on 429 pauses the pacer, on 5xx/transport retries → each
//! caller receives its own slice of the answer.
//!
//! # What never leaves for an unchecked host
//! A plain `http://` URL is refused before any request unless `allow_insecure_http` is set; an
//! address the egress policy refuses is never connected to (it is judged after resolution, on
//! the address used); no redirect is followed; the cluster identity (projected token, minted bearer) only goes to a
//! trusted base URL and, in a reveal, only with `X-FerrVault-Namespace`.

mod answer_budget;
mod certificate_requests;
mod client;
mod client_identity;
mod config;
mod credential;
mod deadline;
mod egress;
mod egress_gate;
mod endpoint;
mod error;
pub mod host_facts;
mod http;
mod identity;
mod identity_refusal;
mod inventory;
pub mod limiter;
pub mod metrics;
mod oidc;
mod pacer;
mod pinning;
mod pool;
mod retry;
mod retry_after;
mod reveal;
mod share;
mod single_flight;
mod snapshot;
mod tls_refusal;
mod token_file;
mod token_info;
mod trust;

pub use client::{FerrVault, PACER_IDLE_EVICTION};
pub use client_identity::ClientIdentity;
pub use config::ClientConfig;
pub use credential::{Credential, Fingerprint, use_fingerprint_key};
pub use egress::{CLOUD_METADATA, EgressPolicy, EgressRefusal, EgressRule};
pub use endpoint::Endpoint;
pub use error::{AuthKind, DeadlineStage, FerrVaultError, MAX_MESSAGE_CHARS, ResponseBound};
pub use http::MAX_SMALL_BODY_BYTES;
pub use identity::{ClusterIdentity, DEFAULT_TOKEN_PATH};
pub use identity_refusal::IdentityRefusal;
pub use inventory::{Inventory, ListedSecret, MAX_LIST_BYTES, MAX_LIST_ENTRIES};
pub use oidc::{OidcSource, REFRESH_LEEWAY};
pub use pinning::Pins;
pub use pool::{MAX_POOLED_CLIENTS, UNCLAIMED_EVICTION};
pub use retry::RetryPolicy;
pub use retry_after::{MAX_RETRY_AFTER, parse_retry_after};
pub use reveal::{
    KeySelector, MissingKeys, RevealRequest, RevealScope, Revealed, SecretValue,
    decode::{MAX_REVEAL_BYTES, MAX_REVEAL_KEYS},
};
pub use share::{BudgetShare, describe_split};
pub use snapshot::{LimiterSnapshot, RequestCounts, RequestResult};
pub use tls_refusal::TlsRefusal;
pub use token_info::{TokenInfo, TokenRole};

/// The pure decoders of what a FerrVault answers, each a function of the body alone: entry
/// points for the fuzz targets (issue 34), not an API.
#[doc(hidden)]
pub mod decoders {
    pub use super::{
        error::{server_message, status_error},
        inventory::decode as decode_list,
        oidc::decode_exchange,
        reveal::decode::decode as decode_reveal,
        token_info::decode as decode_me,
    };
}
