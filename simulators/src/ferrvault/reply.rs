//! A simulator answer before it becomes an HTTP response, and the pure formatting of `Retry-After`
//! and of faulty bodies.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use super::{accounting::Outcome, config::RetryAfterFormat, faults::Disruption};

/// Marks a response the server must not send: the connection is reset instead (see `server.rs`).
#[derive(Clone, Copy, Debug)]
pub struct ResetConnection;

/// What the simulator answers. Its `Debug` shows the status and body size, never the body (it may
/// hold secret values).
pub enum Reply {
    /// An HTTP response.
    Http {
        /// Status code.
        status: u16,
        /// Body bytes (JSON, possibly deliberately broken).
        body: Vec<u8>,
        /// `Retry-After` header value, on 429s.
        retry_after: Option<String>,
    },
    /// Close the connection without a response.
    Reset,
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Http {
                status,
                body,
                retry_after,
            } => f
                .debug_struct("Http")
                .field("status", status)
                .field("body_bytes", &body.len())
                .field("retry_after", retry_after)
                .finish(),
            Self::Reset => f.write_str("Reset"),
        }
    }
}

impl Reply {
    /// A JSON answer.
    pub fn json(status: u16, body: &impl Serialize) -> Self {
        Self::Http {
            status,
            body: json_body(body),
            retry_after: None,
        }
    }

    /// An answer without a body (204).
    pub fn empty(status: u16) -> Self {
        Self::Http {
            status,
            body: Vec::new(),
            retry_after: None,
        }
    }

    /// An error answer in the `{"error": …}` form most FerrVault errors use.
    pub fn error(status: u16, error: &str) -> Self {
        Self::json(status, &serde_json::json!({ "error": error }))
    }

    /// An error answer in the `{"message": …}` form of FerrVault's 403s.
    pub fn message(status: u16, message: &str) -> Self {
        Self::json(status, &serde_json::json!({ "message": message }))
    }

    /// A 429 telling the client to wait `wait`.
    pub fn too_many_requests(wait: Duration, format: RetryAfterFormat, now: SystemTime) -> Self {
        Self::Http {
            status: 429,
            body: json_body(&serde_json::json!({ "error": "rate limit exceeded" })),
            retry_after: Some(retry_after_value(wait, format, now)),
        }
    }

    /// The answer a fault replaces the real one with.
    pub fn disrupted(disruption: Disruption) -> Self {
        match disruption {
            Disruption::ResetConnection => Self::Reset,
            Disruption::ServerError(status) => Self::error(status, "injected server error"),
            Disruption::MalformedJson => Self::Http {
                status: 200,
                body: MALFORMED_JSON.to_vec(),
                retry_after: None,
            },
            Disruption::OversizedBody(bytes) => Self::Http {
                status: 200,
                body: oversized_body(bytes),
                retry_after: None,
            },
        }
    }

    /// The outcome for accounting.
    pub fn outcome(&self) -> Outcome {
        match self {
            Self::Http { status, .. } => Outcome::Status(*status),
            Self::Reset => Outcome::Reset,
        }
    }

    /// The HTTP response; a reset becomes a response carrying the [`ResetConnection`] marker.
    pub fn into_response(self) -> warp::reply::Response {
        match self {
            Self::Http {
                status,
                body,
                retry_after,
            } => {
                let mut builder = http::Response::builder().status(status);
                if !body.is_empty() {
                    builder = builder.header(http::header::CONTENT_TYPE, "application/json");
                }
                if let Some(value) = retry_after {
                    builder = builder.header(http::header::RETRY_AFTER, value);
                }
                builder
                    .body(body.into())
                    .expect("status and headers are valid by construction")
            }
            Self::Reset => {
                let mut response = warp::reply::Response::new(Vec::<u8>::new().into());
                response.extensions_mut().insert(ResetConnection);
                response
            }
        }
    }
}

/// A JSON prefix cut off mid-value.
pub const MALFORMED_JSON: &[u8] = br#"{"hits":[{"name":"DB_URL","value":"postgres://"#;

/// `Retry-After` for a wait of `wait` at wall time `now`, rounded up so a client that obeys it
/// never comes back early.
pub fn retry_after_value(wait: Duration, format: RetryAfterFormat, now: SystemTime) -> String {
    match format {
        RetryAfterFormat::Seconds => ceil_secs(wait).max(1).to_string(),
        RetryAfterFormat::HttpDate => {
            let since_epoch = (now + wait).duration_since(UNIX_EPOCH).unwrap_or_default();
            httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(ceil_secs(since_epoch)))
        }
    }
}

fn json_body(body: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(body).expect("simulator bodies serialize (plain structs and maps)")
}

fn ceil_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// A valid reveal-shaped JSON body of at least `bytes` bytes.
fn oversized_body(bytes: usize) -> Vec<u8> {
    let mut body = br#"{"hits":[],"missing":[],"padding":""#.to_vec();
    body.resize(body.len() + bytes, b'x');
    body.extend_from_slice(br#""}"#);
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_should_round_up_and_never_say_zero() {
        let now = SystemTime::now();
        let secs = |s: f64| retry_after_value(Duration::from_secs_f64(s), RetryAfterFormat::Seconds, now);
        assert_eq!(secs(0.2), "1");
        assert_eq!(secs(1.0), "1");
        assert_eq!(secs(1.01), "2");
        assert_eq!(secs(0.0), "1");
    }

    #[test]
    fn retry_after_http_date_should_round_up_to_the_next_whole_second() {
        let now = UNIX_EPOCH + Duration::from_millis(784_111_777_300);
        let value = retry_after_value(Duration::from_millis(1_500), RetryAfterFormat::HttpDate, now);
        assert_eq!(value, "Sun, 06 Nov 1994 08:49:39 GMT");
        let parsed = httpdate::parse_http_date(&value).unwrap();
        assert!(parsed >= now + Duration::from_millis(1_500));
    }

    #[test]
    fn disrupted_bodies_should_be_broken_or_big_as_asked() {
        let Reply::Http { body, .. } = Reply::disrupted(Disruption::MalformedJson) else {
            panic!()
        };
        assert!(serde_json::from_slice::<serde_json::Value>(&body).is_err());
        let Reply::Http { body, .. } = Reply::disrupted(Disruption::OversizedBody(1 << 20)) else {
            panic!()
        };
        assert!(body.len() > 1 << 20);
        assert!(serde_json::from_slice::<serde_json::Value>(&body).is_ok());
    }
}
