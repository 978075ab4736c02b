//! Typed FerrVault client errors.
//!
//! # Guarantees
//! - No variant holds a token or a secret value. Server messages come from the JSON body's
//!   `error` or `message` field, are cut to [`MAX_MESSAGE_CHARS`] and stripped of control
//!   characters; decode errors keep only serde's category and position, never the offending
//!   input (serde quotes it, and it could be a secret value).
//! - An error body is never parsed into a generic JSON tree: only its `error` and `message`
//!   strings are decoded (`error/body.rs`), from at most the first
//!   [`MAX_SMALL_BODY_BYTES`](super::MAX_SMALL_BODY_BYTES) bytes the client reads of it.
//! - An answer over one of the client's bounds is [`FerrVaultError::ResponseTooLarge`], naming
//!   the bound ([`ResponseBound`]), never a byte of the answer.
//! - [`FerrVaultError::reason`] is a fixed `&'static str`, safe as a metric label.
//! - The single retry decision is [`FerrVaultError::is_retryable`]: 5xx, transport failures
//!   and per-attempt timeouts. 4xx, including 429, are never retried by the client.
//! - A 3xx is [`FerrVaultError::Redirected`]: the client never follows a redirect, so nothing
//!   (no token, no body) reaches the location it names.

use std::{fmt, sync::Arc, time::Duration};

use reqwest::StatusCode;

use super::{EgressRefusal, IdentityRefusal, TlsRefusal};

mod body;
mod echo;

pub use body::MAX_MESSAGE_CHARS;
#[doc(hidden)]
pub use body::server_message;

/// Which bound of the client a FerrVault answer crossed (issue 34): what
/// [`FerrVaultError::ResponseTooLarge`] says instead of anything the answer held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseBound {
    /// The body is longer than this many bytes.
    Body(usize),
    /// The answer names more than this many keys (found and missing together).
    Keys(usize),
    /// The answer's key names, values and missing names add up to more than this many bytes.
    Bytes(usize),
}

impl fmt::Display for ResponseBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResponseBound::Body(max) => write!(f, "a body over {max} bytes"),
            ResponseBound::Keys(max) => write!(f, "more than {max} keys"),
            ResponseBound::Bytes(max) => write!(f, "more than {max} bytes of key names and values"),
        }
    }
}

/// Which of the two authentication failures the server reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthKind {
    /// 401: the token is unknown, expired or malformed.
    Unauthorized,
    /// 403: the token is valid but not allowed here (e.g. a SAT used on another vault).
    Forbidden,
}

impl fmt::Display for AuthKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AuthKind::Unauthorized => "unauthorized",
            AuthKind::Forbidden => "forbidden",
        })
    }
}

/// Where the caller's deadline ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeadlineStage {
    /// Waiting for this credential's outbound budget; nothing was sent. The reconciler should
    /// treat it like throttling (requeue), not like an unreachable server.
    WaitingForBudget,
    /// A request was sent (or being retried) and had not completed.
    InFlight,
}

impl fmt::Display for DeadlineStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeadlineStage::WaitingForBudget => "while waiting for the credential's request budget",
            DeadlineStage::InFlight => "while the request was in flight",
        })
    }
}

/// Everything a FerrVault call can fail with. Cheap to clone: single-flight hands one outcome
/// to every caller that shared a request.
#[derive(Clone, Debug, thiserror::Error)]
pub enum FerrVaultError {
    /// The connection's URL is unusable.
    #[error("invalid FerrVault URL: {0}")]
    InvalidEndpoint(String),
    /// The token is unusable (empty, or not printable ASCII).
    #[error("invalid FerrVault token: {0}")]
    InvalidCredential(&'static str),
    /// The extra CA bundle is unusable, or the TLS client could not be built.
    #[error("invalid FerrVault TLS settings: {0}")]
    InvalidTls(String),
    /// The connection's client certificate (`clientCertSecretRef`) is unusable: the words name
    /// the part (`tls.crt`, `tls.key`), never its bytes.
    #[error("invalid client certificate: {0}")]
    InvalidClientCertificate(String),
    /// The TLS handshake was refused over a pin or a client certificate. Not retried: the same
    /// server would answer the same.
    #[error("{0}")]
    TlsRefused(TlsRefusal),
    /// A request the client refuses to send (e.g. a vault named `..`).
    #[error("invalid FerrVault request: {0}")]
    InvalidRequest(String),
    /// A plain `http://` URL while the operator was not started with `--allow-insecure-http`.
    /// Refused before anything is sent.
    #[error(
        "plain http:// FerrVault URLs are refused (tokens and values would travel in clear); nothing was \
         sent. Use https://, or start the operator with --allow-insecure-http for a local simulator"
    )]
    InsecureUrl,
    /// The server answered with a redirect (3xx), which is never followed.
    #[error(
        "ferrvault answered {status}, a redirect: redirects are never followed, so nothing was sent to \
         the location it named"
    )]
    Redirected {
        /// The 3xx status code.
        status: u16,
    },
    /// The egress policy refuses every address the URL leads to; no connection was made.
    #[error("{0}")]
    EgressDenied(EgressRefusal),
    /// The operator's cluster identity may not be used for this request; nothing was sent.
    #[error("cluster identity refused: {0}")]
    ClusterIdentity(IdentityRefusal),
    /// 401 or 403.
    #[error("ferrvault {kind}: {message}")]
    Auth {
        /// 401 or 403.
        kind: AuthKind,
        /// Server message or a fallback.
        message: String,
    },
    /// 404: the vault (or org/project) does not exist for this token.
    #[error("ferrvault not found: {message}")]
    NotFound {
        /// Server message or a fallback.
        message: String,
    },
    /// 429: the server throttled this credential.
    #[error("ferrvault rate limited (429){}: {message}", retry_hint(retry_after))]
    RateLimited {
        /// The parsed `Retry-After`, if the server sent a valid one.
        retry_after: Option<Duration>,
        /// Server message or a fallback.
        message: String,
    },
    /// 5xx, after the client's retries.
    #[error("ferrvault server error {status} after {attempts} attempt(s): {message}")]
    Server {
        /// The last status code.
        status: u16,
        /// Attempts made.
        attempts: u32,
        /// Server message or a fallback.
        message: String,
    },
    /// Any other 4xx (and unexpected non-2xx statuses).
    #[error("ferrvault api error {status}: {message}")]
    Client {
        /// The status code.
        status: u16,
        /// Server message or a fallback.
        message: String,
    },
    /// The server does not serve this endpoint: `list` or `me` answered 404 or 405, as an
    /// older FerrVault does. Not retried; a caller should remember it rather than ask again.
    #[error("ferrvault does not serve {call} (it answered {status}): an older server")]
    Unsupported {
        /// `list` or `me`.
        call: &'static str,
        /// 404 or 405.
        status: u16,
    },
    /// The request could not be sent or its response not read, after the client's retries.
    #[error("ferrvault transport error after {attempts} attempt(s): {source}")]
    Transport {
        /// Attempts made.
        attempts: u32,
        /// The last failure. It names the URL (never a token: tokens only travel in headers).
        #[source]
        source: Arc<reqwest::Error>,
    },
    /// A 2xx response whose body is not what the endpoint returns.
    #[error("ferrvault response could not be decoded: {0}")]
    Decode(String),
    /// A 2xx response over one of the client's bounds: refused as soon as the bound was
    /// crossed, before the rest was read or decoded. Not retried: the server would answer the
    /// same.
    #[error("ferrvault answer refused, {0}: over the operator's bound, nothing of it was used")]
    ResponseTooLarge(ResponseBound),
    /// Every attempt hit the per-attempt timeout.
    #[error("ferrvault request timed out after {attempts} attempt(s) of at most {per_attempt:?}")]
    Timeout {
        /// Attempts made.
        attempts: u32,
        /// The per-attempt timeout.
        per_attempt: Duration,
    },
    /// The caller's deadline ran out.
    #[error("deadline reached {stage}")]
    Deadline {
        /// Where it ran out.
        stage: DeadlineStage,
    },
    /// The projected ServiceAccount token file for OIDC could not be read or is empty.
    #[error("cannot read the projected ServiceAccount token at {path}: {why}")]
    TokenFile {
        /// The file path.
        path: String,
        /// What went wrong.
        why: String,
    },
}

/// What a non-2xx answer of `status` with `body` becomes after a request that carried `sent` (a
/// token the server may echo): the mapped error, redacted as the client redacts it; `None` for a
/// status code outside 100..=999. A pure function of the answer (a fuzzing entry point).
#[doc(hidden)]
pub fn status_error(status: u16, body: &[u8], sent: &str) -> Option<FerrVaultError> {
    let status = StatusCode::from_u16(status).ok()?;
    Some(FerrVaultError::from_status(status, body, None, 1).redact(sent))
}

fn retry_hint(retry_after: &Option<Duration>) -> String {
    retry_after
        .map(|d| format!(", retry after {:.3}s", d.as_secs_f64()))
        .unwrap_or_default()
}

impl FerrVaultError {
    /// A fixed, low-cardinality name for metric labels and condition reasons.
    pub fn reason(&self) -> &'static str {
        match self {
            FerrVaultError::InvalidEndpoint(_)
            | FerrVaultError::InvalidCredential(_)
            | FerrVaultError::InvalidTls(_) => "InvalidConnection",
            FerrVaultError::InvalidClientCertificate(_) => "ClientCertificateInvalid",
            FerrVaultError::TlsRefused(TlsRefusal::PinMismatch) => "CertificatePinMismatch",
            FerrVaultError::TlsRefused(TlsRefusal::ClientCertificateRefused) => "ClientCertificateRefused",
            FerrVaultError::InvalidRequest(_) => "InvalidRequest",
            FerrVaultError::InsecureUrl => "InsecureUrl",
            FerrVaultError::Redirected { .. } => "Redirected",
            FerrVaultError::EgressDenied(_) => "EgressDenied",
            FerrVaultError::ClusterIdentity(refusal) => refusal.reason(),
            FerrVaultError::Auth { .. } => "AuthFailed",
            FerrVaultError::NotFound { .. } => "VaultNotFound",
            FerrVaultError::RateLimited { .. } => "RateLimited",
            FerrVaultError::Server { .. } => "ServerError",
            FerrVaultError::Client { .. } => "ClientError",
            FerrVaultError::Unsupported { .. } => "Unsupported",
            FerrVaultError::Transport { .. } => "TransportError",
            FerrVaultError::Decode(_) => "DecodeError",
            FerrVaultError::ResponseTooLarge(_) => "ResponseTooLarge",
            FerrVaultError::Timeout { .. } => "Timeout",
            FerrVaultError::Deadline {
                stage: DeadlineStage::WaitingForBudget,
            } => "BudgetDeadline",
            FerrVaultError::Deadline {
                stage: DeadlineStage::InFlight,
            } => "Deadline",
            FerrVaultError::TokenFile { .. } => "TokenUnreadable",
        }
    }

    /// 401 or 403.
    pub fn is_auth(&self) -> bool {
        matches!(self, FerrVaultError::Auth { .. })
    }

    /// 404.
    pub fn is_not_found(&self) -> bool {
        matches!(self, FerrVaultError::NotFound { .. })
    }

    /// The server does not serve the endpoint ([`FerrVaultError::Unsupported`]).
    pub fn is_unsupported(&self) -> bool {
        matches!(self, FerrVaultError::Unsupported { .. })
    }

    /// An answer over one of the client's bounds ([`FerrVaultError::ResponseTooLarge`]).
    pub fn is_response_too_large(&self) -> bool {
        matches!(self, FerrVaultError::ResponseTooLarge(_))
    }

    /// Throttled: a 429 from the server, or the caller's deadline ran out while waiting for the
    /// credential's budget. Either way the right reaction is to requeue, not to report failure.
    pub fn is_rate_limited(&self) -> bool {
        matches!(
            self,
            FerrVaultError::RateLimited { .. }
                | FerrVaultError::Deadline {
                    stage: DeadlineStage::WaitingForBudget
                }
        )
    }

    /// The server's `Retry-After`, when it sent one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            FerrVaultError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether the client retries this failure itself: 5xx, transport, per-attempt timeout.
    pub(crate) fn is_retryable(&self) -> bool {
        matches!(
            self,
            FerrVaultError::Server { .. } | FerrVaultError::Transport { .. } | FerrVaultError::Timeout { .. }
        )
    }

    /// Maps a non-2xx response to its error. `attempts` is recorded on the retryable kinds.
    pub(crate) fn from_status(
        status: StatusCode,
        body: &[u8],
        retry_after: Option<Duration>,
        attempts: u32,
    ) -> Self {
        let message = server_message(body).unwrap_or_else(|| body::fallback_message(status));
        match status.as_u16() {
            401 => FerrVaultError::Auth {
                kind: AuthKind::Unauthorized,
                message,
            },
            403 => FerrVaultError::Auth {
                kind: AuthKind::Forbidden,
                message,
            },
            code @ 300..=399 => FerrVaultError::Redirected { status: code },
            404 => FerrVaultError::NotFound { message },
            429 => FerrVaultError::RateLimited { retry_after, message },
            code @ 500..=599 => FerrVaultError::Server {
                status: code,
                attempts,
                message,
            },
            code => FerrVaultError::Client {
                status: code,
                message,
            },
        }
    }

    /// For an endpoint older servers lack (`call`): their 404 and 405 become
    /// [`FerrVaultError::Unsupported`]; any other error stays.
    pub(crate) fn unless_served(self, call: &'static str) -> Self {
        match self {
            FerrVaultError::NotFound { .. } => FerrVaultError::Unsupported { call, status: 404 },
            FerrVaultError::Client { status: 405, .. } => FerrVaultError::Unsupported { call, status: 405 },
            other => other,
        }
    }

    /// A decode failure, keeping serde's category and position but never the input it quotes.
    pub(crate) fn decode(what: &str, error: &serde_json::Error) -> Self {
        FerrVaultError::Decode(format!(
            "{what}: {:?} error at line {} column {}",
            error.classify(),
            error.line(),
            error.column()
        ))
    }

    /// Replaces any occurrence of `secret` in server-supplied text with `<redacted>`, and its
    /// beginning where the message was cut inside an echo: a server that echoes the token it
    /// rejected must not push it, or a piece of it, into our logs and statuses.
    pub(crate) fn redact(mut self, secret: &str) -> Self {
        match &mut self {
            FerrVaultError::Auth { message, .. }
            | FerrVaultError::NotFound { message }
            | FerrVaultError::RateLimited { message, .. }
            | FerrVaultError::Server { message, .. }
            | FerrVaultError::Client { message, .. } => {
                *message = echo::redact_echoes(message, secret);
            }
            _ => {}
        }
        self
    }

    /// Sets the attempt count on the kinds that carry one.
    pub(crate) fn with_attempts(mut self, n: u32) -> Self {
        match &mut self {
            FerrVaultError::Server { attempts, .. }
            | FerrVaultError::Transport { attempts, .. }
            | FerrVaultError::Timeout { attempts, .. } => *attempts = n,
            _ => {}
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(code: u16, body: &str) -> FerrVaultError {
        FerrVaultError::from_status(StatusCode::from_u16(code).unwrap(), body.as_bytes(), None, 1)
    }

    #[test]
    fn status_mapping_should_follow_the_reference_table() {
        assert!(map(401, "").is_auth());
        assert!(map(403, "").is_auth());
        assert!(map(404, "").is_not_found());
        assert!(map(429, "").is_rate_limited());
        assert!(matches!(map(503, ""), FerrVaultError::Server { status: 503, .. }));
        assert!(matches!(map(400, ""), FerrVaultError::Client { status: 400, .. }));
        for code in [301, 302, 303, 307, 308] {
            assert!(matches!(map(code, ""), FerrVaultError::Redirected { status } if status == code));
            assert_eq!(map(code, "").reason(), "Redirected");
        }
        assert!(map(503, "").is_retryable());
        for code in [307, 400, 401, 403, 404, 409, 429] {
            assert!(!map(code, "").is_retryable(), "{code} must not be retried");
        }
    }

    #[test]
    fn message_should_come_from_error_or_message_fields() {
        assert_eq!(
            map(403, r#"{"error":"nope"}"#).to_string(),
            "ferrvault forbidden: nope"
        );
        assert_eq!(
            map(403, r#"{"message":"wrong vault"}"#).to_string(),
            "ferrvault forbidden: wrong vault"
        );
        assert_eq!(map(404, "<html>").to_string(), "ferrvault not found: not found");
        assert_eq!(
            map(418, "{}").to_string(),
            "ferrvault api error 418: i'm a teapot"
        );
    }

    #[test]
    fn message_should_be_bounded_and_free_of_control_characters() {
        let long = format!(r#"{{"error":"a\nb{}"}}"#, "x".repeat(1000));
        let text = map(500, &long).to_string();
        assert!(!text.contains('\n'));
        assert!(text.len() < MAX_MESSAGE_CHARS + 80, "{text}");
    }

    #[test]
    fn decode_error_should_not_quote_the_body() {
        let err = serde_json::from_str::<u32>(r#""s3cr3t-value""#).unwrap_err();
        assert!(
            err.to_string().contains("s3cr3t"),
            "serde quotes its input; this test guards that"
        );
        let ours = FerrVaultError::decode("reveal", &err);
        assert!(!ours.to_string().contains("s3cr3t"));
        assert!(!format!("{ours:?}").contains("s3cr3t"));
    }

    #[test]
    fn rate_limited_should_show_its_retry_after_and_reason() {
        let err = FerrVaultError::from_status(
            StatusCode::TOO_MANY_REQUESTS,
            b"",
            Some(Duration::from_millis(1500)),
            1,
        );
        assert_eq!(err.retry_after(), Some(Duration::from_millis(1500)));
        assert_eq!(err.reason(), "RateLimited");
        assert!(err.to_string().contains("retry after 1.500s"), "{err}");
    }
}
