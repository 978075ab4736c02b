//! `POST /hooks/ferrvault`: the order in which a hint is checked, and the answers.
//!
//! 1. Anything but `POST /hooks/ferrvault` → 405 or 404 (not counted).
//! 2. The endpoint's bucket ([`HintBucket`]) → 429 with `Retry-After`, body unread.
//!    A replica that does not lead → 503 with `Retry-After`, body unread (its hint would be
//!    lost; nothing is spent of the replay cache, so the sender's retry can reach the leader).
//! 3. `Content-Length` missing → 411, over [`MAX_BODY_BYTES`] → 413, body unread.
//! 4. The body, read within the header-read timeout (else 400).
//! 5. The signature ([`verify`]) → 401; then the replay cache ([`SeenSignatures`]) → 401.
//! 6. The body ([`parse_hint`]) → 400; else the hint goes to the [`HintSink`] → 202.
//!
//! # Guarantees
//! - Nothing reaches the sink unless the hint is signed, fresh and new.
//! - A signed hint is answered 202 with the same body whatever its vault: the answer tells no
//!   key holder which vaults or objects the cluster has.
//! - No answer, log line or metric quotes the body or a header.

use std::{
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use bytes::{Buf, Bytes, BytesMut};
use futures::{Stream, StreamExt};
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use jiff::Timestamp;
use tokio::{sync::watch, time::Instant};
use warp::{Filter, filters::path::FullPath};

use super::{
    body::{MAX_BODY_BYTES, parse_hint},
    bucket::HintBucket,
    metrics::{HintMetrics, HintResult},
    replay::{SeenSignatures, Unseen},
    signature::{HintKey, SIGNATURE_HEADER, SignatureRefusal, Signed, TIMESTAMP_HEADER, verify},
    sink::HintSink,
};
use crate::admin::routes::{Reply, Routes};

/// The endpoint's path.
pub(crate) const HOOK_PATH: &str = "/hooks/ferrvault";

/// What the endpoint keeps between requests.
pub(crate) struct HintEndpoint {
    /// The key as last read ([`keep_key`](super::key::keep_key)); `None`: every hint refused.
    key: watch::Receiver<Option<HintKey>>,
    /// One bucket for the endpoint: a flood is refused before any work.
    bucket: Mutex<HintBucket>,
    /// MACs taken within the window.
    seen: Mutex<SeenSignatures>,
    /// `ferrvault_hints_total`.
    metrics: HintMetrics,
    /// Where accepted hints go.
    sink: Arc<dyn HintSink>,
    /// How long the body may take to arrive.
    body_timeout: Duration,
}

impl HintEndpoint {
    /// An endpoint checking hints with the key published on `key`, handing accepted ones to
    /// `sink`, giving a body `body_timeout` to arrive.
    pub(crate) fn new(
        key: watch::Receiver<Option<HintKey>>,
        metrics: HintMetrics,
        sink: Arc<dyn HintSink>,
        body_timeout: Duration,
    ) -> HintEndpoint {
        HintEndpoint {
            key,
            bucket: Mutex::new(HintBucket::full(Instant::now())),
            seen: Mutex::default(),
            metrics,
            sink,
            body_timeout,
        }
    }

    /// Answers one request and counts it.
    async fn answer<S, B>(&self, method: &Method, path: &str, headers: &HeaderMap, body: S) -> Reply
    where
        S: Stream<Item = Result<B, warp::Error>> + Unpin,
        B: Buf,
    {
        if path != HOOK_PATH {
            return text(StatusCode::NOT_FOUND, "not found\n");
        }
        if method != Method::POST {
            let mut reply = text(StatusCode::METHOD_NOT_ALLOWED, "only POST\n");
            reply
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("POST"));
            return reply;
        }
        let (result, reply) = self.judge(headers, body).await;
        self.metrics.count(result);
        reply
    }

    /// Steps 2-6 of the module's order.
    async fn judge<S, B>(&self, headers: &HeaderMap, body: S) -> (HintResult, Reply)
    where
        S: Stream<Item = Result<B, warp::Error>> + Unpin,
        B: Buf,
    {
        let taken = self
            .bucket
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take(Instant::now());
        if let Err(wait) = taken {
            return (HintResult::RateLimited, rate_limited(wait));
        }
        if !self.sink.is_accepting() {
            let mut reply = text(
                StatusCode::SERVICE_UNAVAILABLE,
                "this replica does not lead: retry (another replica takes hints)\n",
            );
            reply
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(1));
            return (HintResult::Unavailable, reply);
        }
        let length = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        let Some(length) = length else {
            return (
                HintResult::TooLarge,
                text(StatusCode::LENGTH_REQUIRED, "a hint states its Content-Length\n"),
            );
        };
        if length > MAX_BODY_BYTES {
            return (
                HintResult::TooLarge,
                text(StatusCode::PAYLOAD_TOO_LARGE, "a hint body is at most 64 KiB\n"),
            );
        }
        let Ok(Some(body)) = tokio::time::timeout(self.body_timeout, read_body(body, length)).await else {
            return (
                HintResult::Malformed,
                text(StatusCode::BAD_REQUEST, "the body did not arrive whole in time\n"),
            );
        };
        let key = self.key.borrow().clone();
        let Some(key) = key else {
            return (HintResult::Unauthorized, unauthorized());
        };
        let now = Timestamp::now().as_second();
        let signed = Signed {
            timestamp: headers.get(TIMESTAMP_HEADER).map(HeaderValue::as_bytes),
            signature: headers.get(SIGNATURE_HEADER).map(HeaderValue::as_bytes),
            body: &body,
        };
        let verified = match verify(&key, signed, now) {
            Ok(verified) => verified,
            Err(SignatureRefusal::Unauthorized) => return (HintResult::Unauthorized, unauthorized()),
            Err(SignatureRefusal::Stale) => {
                return (
                    HintResult::Stale,
                    text(
                        StatusCode::UNAUTHORIZED,
                        "the hint's timestamp is outside the 5m window\n",
                    ),
                );
            }
        };
        let taken = self
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take(&verified, now);
        match taken {
            Ok(()) => {}
            Err(Unseen::Replayed) => {
                return (
                    HintResult::Replayed,
                    text(StatusCode::UNAUTHORIZED, "this hint was taken before\n"),
                );
            }
            Err(Unseen::Full) => return (HintResult::RateLimited, rate_limited(Duration::from_secs(1))),
        }
        match parse_hint(&body) {
            Ok(hint) => {
                self.sink.hint(hint);
                (HintResult::Accepted, text(StatusCode::ACCEPTED, "accepted\n"))
            }
            Err(error) => (
                HintResult::Malformed,
                text(StatusCode::BAD_REQUEST, &format!("{error}\n")),
            ),
        }
    }
}

/// The route of `endpoint`: every request is answered by it (the method rule of the other
/// servers does not apply: this one takes POST only).
pub(crate) fn routes(endpoint: Arc<HintEndpoint>) -> Routes {
    warp::method()
        .and(warp::path::full())
        .and(warp::header::headers_cloned())
        .and(warp::body::stream())
        .then(move |method: Method, path: FullPath, headers: HeaderMap, body| {
            let endpoint = endpoint.clone();
            async move {
                let body = Box::pin(body);
                endpoint.answer(&method, path.as_str(), &headers, body).await
            }
        })
        .boxed()
}

/// The body, `length` bytes as announced (hyper frames it by `Content-Length`: never more);
/// `None` when it breaks off.
async fn read_body<S, B>(mut body: S, length: u64) -> Option<Bytes>
where
    S: Stream<Item = Result<B, warp::Error>> + Unpin,
    B: Buf,
{
    let mut read = BytesMut::with_capacity(usize::try_from(length).ok()?);
    while let Some(chunk) = body.next().await {
        let mut chunk = chunk.ok()?;
        if (read.len() + chunk.remaining()) as u64 > length {
            return None;
        }
        while chunk.has_remaining() {
            let part = chunk.chunk();
            read.extend_from_slice(part);
            let taken = part.len();
            chunk.advance(taken);
        }
    }
    Some(read.freeze())
}

/// 401, the same for every signature refused.
fn unauthorized() -> Reply {
    text(
        StatusCode::UNAUTHORIZED,
        "the hint is not signed with the hint key\n",
    )
}

/// 429 with `Retry-After` in whole seconds, rounded up.
fn rate_limited(wait: Duration) -> Reply {
    let mut reply = text(StatusCode::TOO_MANY_REQUESTS, "too many hints: retry later\n");
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    reply
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(seconds.max(1)));
    reply
}

fn text(status: StatusCode, body: &str) -> Reply {
    crate::admin::routes::text(status, body)
}
