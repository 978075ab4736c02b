//! Signed change hints (issue 38 point 4): `POST /hooks/ferrvault` on its own port
//! (`--hint-bind-address`, off by default), where a CI job says "vault V changed (these names)"
//! right after `ferrvault set`, so the FerrVaultSecrets reading it sync in seconds rather than at
//! their next refresh. `docs/change-hints.md` is the user's guide.
//!
//! # Modules
//! - `signature.rs`: HMAC-SHA256 of `<timestamp>.<body>` under the hint key, and the window.
//! - `replay.rs`: the MACs taken within the window (a replayed hint is refused).
//! - `bucket.rs`: the endpoint's token bucket (a flood gets 429s).
//! - `body.rs`: the bounded JSON body ([`parse_hint`]).
//! - `endpoint.rs`: the order of the checks and the answers, as a warp route served on the
//!   hardened accept loop of `admin/` (with a body, unlike the other servers).
//! - `key.rs`: the key, read from the Secret named by `--hint-secret-name` and re-read.
//! - `metrics.rs`: `ferrvault_hints_total{result}`.
//! - `sink.rs`: [`HintSink`], where accepted hints go.
//!
//! What an accepted hint does is the reconcilers' business ([`HintSink`]): they mark the
//! matching FerrVaultSecrets due and the data still comes from a reveal through the
//! credential's limiter.
//!
//! # Guarantees
//! - A hint never carries data into a Secret: it only makes objects due.
//! - Nothing of a hint's body, headers or the key is logged, counted by value or answered.

pub(crate) mod body;
mod bucket;
mod endpoint;
mod key;
mod metrics;
mod replay;
mod signature;
mod sink;

pub(crate) use self::{
    body::Hint,
    endpoint::{HintEndpoint, routes},
    key::keep_key,
    metrics::HintMetrics,
    signature::HintKey,
    sink::HintSink,
};
