//! What a credential's limiter looks like from outside: the data behind `/metrics` and the
//! admin dump. Plain values, safe to print (the credential appears as its fingerprint only).

use std::time::Duration;

use super::Fingerprint;

/// How one HTTP attempt on a credential ended. A bounded set, used as a metric label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RequestResult {
    /// 2xx.
    Success,
    /// 429.
    RateLimited,
    /// 401 or 403.
    Auth,
    /// 404.
    NotFound,
    /// Any other 4xx.
    ClientError,
    /// 5xx.
    ServerError,
    /// No response: connection refused or reset, body cut short.
    Transport,
    /// The per-attempt timeout or the caller's deadline ended the attempt.
    Timeout,
    /// A 2xx whose body did not decode.
    Decode,
}

impl RequestResult {
    /// Every result, in label order.
    pub const ALL: [RequestResult; 9] = [
        RequestResult::Success,
        RequestResult::RateLimited,
        RequestResult::Auth,
        RequestResult::NotFound,
        RequestResult::ClientError,
        RequestResult::ServerError,
        RequestResult::Transport,
        RequestResult::Timeout,
        RequestResult::Decode,
    ];

    /// The metric label value.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestResult::Success => "success",
            RequestResult::RateLimited => "rate_limited",
            RequestResult::Auth => "auth",
            RequestResult::NotFound => "not_found",
            RequestResult::ClientError => "client_error",
            RequestResult::ServerError => "server_error",
            RequestResult::Transport => "transport",
            RequestResult::Timeout => "timeout",
            RequestResult::Decode => "decode",
        }
    }
}

/// Attempts made on one credential, by result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestCounts([u64; RequestResult::ALL.len()]);

impl RequestCounts {
    pub(crate) fn from_fn(mut count: impl FnMut(RequestResult) -> u64) -> Self {
        Self(RequestResult::ALL.map(&mut count))
    }

    /// Attempts that ended with `result`.
    pub fn get(&self, result: RequestResult) -> u64 {
        self.0[result as usize]
    }

    /// All attempts.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// `(result, count)` pairs in label order.
    pub fn iter(&self) -> impl Iterator<Item = (RequestResult, u64)> + '_ {
        RequestResult::ALL.into_iter().zip(self.0.iter().copied())
    }
}

/// One credential's limiter state.
#[derive(Clone, Debug, PartialEq)]
pub struct LimiterSnapshot {
    /// The credential's fingerprint (never the token).
    pub credential: Fingerprint,
    /// The FerrVault base URL.
    pub base_url: String,
    /// Tokens available now.
    pub tokens: f64,
    /// Current adapted rate, requests per second.
    pub rate: f64,
    /// Configured rate, requests per second.
    pub configured_rate: f64,
    /// Configured burst (the server's).
    pub burst: u32,
    /// Time left in a `Retry-After` pause, if paused.
    pub paused_for: Option<Duration>,
    /// Callers waiting for a token.
    pub waiters: usize,
    /// 429s seen.
    pub rate_limited_total: u64,
    /// Attempts by result.
    pub requests: RequestCounts,
}
