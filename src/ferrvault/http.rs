//! The attempt loop every FerrVault call goes through (pacing, per-attempt timeout, bounded
//! body, retries, accounting), on a client of the pool (`pool.rs`).
//!
//! # Guarantees
//! - Each attempt of a paced call first takes a token from the credential's pacer.
//! - Each attempt is bounded by the per-attempt timeout and by the caller's deadline; the
//!   sleep between attempts is cut short by the deadline too.
//! - Only [`FerrVaultError::is_retryable`] failures are retried, at most `max_attempts` in all.
//! - A 429 pauses the credential (`Retry-After`); any other answer tells the pacer the server
//!   is not throttling us.
//! - An address the egress policy refuses ends the attempt as [`FerrVaultError::EgressDenied`],
//!   not retried: the pooled client's resolver refused it, so nothing was connected to.
//! - A connection closed before any answer, right after a handshake in which the server asked
//!   for a client certificate, is the server's refusal of it
//!   ([`TlsRefusal::ClientCertificateRefused`]), whose alert hyper's connection task read first
//!   ([`certificate_requests`](super::certificate_requests)).
//! - No redirect is ever followed: a 3xx ends the attempt as [`FerrVaultError::Redirected`], so a
//!   server (or a tenant's URL) cannot send a token or a request body on to another host.
//! - No body is read past its bound, and the buffer grows only as bytes arrive: a non-2xx body
//!   is cut at [`MAX_SMALL_BODY_BYTES`] (only its message is used); a 2xx body announced
//!   (`content-length`) or found longer than the call's `max_body` fails as
//!   [`FerrVaultError::ResponseTooLarge`] before more is read.

use std::{
    sync::Arc,
    time::{Duration, SystemTime},
};

use bytes::{Bytes, BytesMut};
use reqwest::{RequestBuilder, header::RETRY_AFTER};
use tokio::time::Instant;

use super::{
    DeadlineStage, FerrVaultError, RequestResult, ResponseBound, RetryPolicy, TlsRefusal,
    certificate_requests::CertificateRequests, deadline::Deadline, egress_gate, pacer::Pacer, pinning,
    pool::EndpointClient, retry_after::parse_retry_after,
};

/// The most the client reads of a non-2xx body (the rest is dropped with the connection), and
/// the longest probe or token-exchange answer it accepts (issue 34). An error body is only read
/// for a message of at most [`MAX_MESSAGE_CHARS`](super::error::MAX_MESSAGE_CHARS) characters and
/// the other two answers take a few hundred bytes: 64 KiB is ample for all of them and small
/// next to the 4 MiB a reveal may need, whatever a tenant's server sends on as many connections
/// as it likes.
pub const MAX_SMALL_BODY_BYTES: usize = 64 << 10;

/// How calls are made; part of the client configuration.
#[derive(Clone, Debug)]
pub(crate) struct CallSettings {
    pub(crate) attempt_timeout: Duration,
    pub(crate) retry: RetryPolicy,
    pub(crate) max_body_bytes: usize,
}

/// Runs one logical call: up to `max_attempts` attempts of `build`'s request, decoding the
/// 2xx body (of at most `max_body` bytes) with `decode`. `build` runs after the attempt's token is
/// taken, so a single-flight caller can freeze its key selector at the last possible moment.
pub(crate) async fn call<T>(
    client: &EndpointClient,
    settings: &CallSettings,
    pacer: Option<&Pacer>,
    deadline: &Deadline,
    max_body: usize,
    mut build: impl FnMut(&reqwest::Client) -> Result<RequestBuilder, FerrVaultError>,
    decode: impl Fn(&[u8]) -> Result<T, FerrVaultError>,
) -> Result<T, FerrVaultError> {
    let max_attempts = settings.retry.max_attempts.max(1);
    let mut attempt = 0;
    loop {
        attempt += 1;
        if Instant::now() >= deadline.get() {
            return Err(FerrVaultError::Deadline {
                stage: DeadlineStage::InFlight,
            });
        }
        let permit = match pacer {
            Some(pacer) => Some(pacer.acquire(deadline).await?),
            None => None,
        };
        let request = build(&client.http)?;
        let outcome = attempt_once(
            request,
            &client.certificate_requests,
            settings,
            max_body,
            deadline,
        )
        .await;
        let (result, error) = match outcome {
            Ok(body) => match decode(&body) {
                Ok(value) => {
                    if let Some(pacer) = pacer {
                        pacer.on_success();
                        pacer.record(RequestResult::Success);
                    }
                    return Ok(value);
                }
                Err(error) => (RequestResult::Decode, error),
            },
            Err(error) => (result_of(&error), error),
        };
        if let Some(pacer) = pacer {
            pacer.record(result);
            match (&error, permit) {
                (FerrVaultError::RateLimited { retry_after, .. }, Some(permit)) => {
                    pacer.on_rate_limited(permit, *retry_after);
                }
                // No answer: says nothing about the server's budget.
                (
                    FerrVaultError::Transport { .. }
                    | FerrVaultError::Timeout { .. }
                    | FerrVaultError::Deadline { .. }
                    | FerrVaultError::EgressDenied(_)
                    | FerrVaultError::TlsRefused(_),
                    _,
                ) => {}
                // Any other answer means the server is not throttling this credential.
                _ => pacer.on_success(),
            }
        }
        let error = error.with_attempts(attempt);
        if !error.is_retryable() || attempt >= max_attempts {
            return Err(error);
        }
        let delay = settings
            .retry
            .delay_after(attempt, rand::random_range(-1.0..=1.0));
        if Instant::now() + delay >= deadline.get() {
            return Err(error);
        }
        tracing::debug!(
            attempt,
            reason = error.reason(),
            ?delay,
            "ferrvault call failed, retrying"
        );
        tokio::time::sleep(delay).await;
    }
}

/// One HTTP exchange under `min(per-attempt timeout, caller deadline)`; non-2xx → error.
async fn attempt_once(
    request: RequestBuilder,
    certificate_requests: &CertificateRequests,
    settings: &CallSettings,
    max_body: usize,
    deadline: &Deadline,
) -> Result<Bytes, FerrVaultError> {
    let attempt_end = (Instant::now() + settings.attempt_timeout).min(deadline.get());
    let requests_before = certificate_requests.count();
    let exchange = async {
        let response = request.send().await.map_err(|error| {
            if certificate_requests.asked_since(requests_before) && closed_before_answer(&error) {
                return FerrVaultError::TlsRefused(TlsRefusal::ClientCertificateRefused);
            }
            transport(error)
        })?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, SystemTime::now()));
        if !status.is_success() {
            let (body, _) = read_at_most(response, MAX_SMALL_BODY_BYTES).await?;
            return Err(FerrVaultError::from_status(status, &body, retry_after, 1));
        }
        let too_large = || FerrVaultError::ResponseTooLarge(ResponseBound::Body(max_body));
        if response.content_length().is_some_and(|len| len > max_body as u64) {
            return Err(too_large());
        }
        match read_at_most(response, max_body).await? {
            (body, Read::Whole) => Ok(body),
            (_, Read::Cut) => Err(too_large()),
        }
    };
    match tokio::time::timeout_at(attempt_end, exchange).await {
        Ok(outcome) => outcome,
        Err(_) if attempt_end >= deadline.get() => Err(FerrVaultError::Deadline {
            stage: DeadlineStage::InFlight,
        }),
        Err(_) => Err(FerrVaultError::Timeout {
            attempts: 1,
            per_attempt: settings.attempt_timeout,
        }),
    }
}

/// Whether [`read_at_most`] read the whole body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Read {
    /// The body ended within the bound.
    Whole,
    /// The body went on past the bound; reading stopped there (the rest is never read).
    Cut,
}

/// Reads the body up to `max` bytes into one buffer of `max` bytes, so it never grows: growing
/// by doubling would hold the old and the new buffer at once, half as much again as the body.
/// Only the pages the body is written to become resident, so a short body costs what it holds.
async fn read_at_most(mut response: reqwest::Response, max: usize) -> Result<(Bytes, Read), FerrVaultError> {
    let mut body = BytesMut::with_capacity(max);
    while let Some(chunk) = response.chunk().await.map_err(transport)? {
        let room = max - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body.freeze(), Read::Cut));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body.freeze(), Read::Whole))
}

/// A failed exchange: the egress policy's refusal when the resolver refused every address
/// (nothing was connected to), a transport failure otherwise.
fn transport(error: reqwest::Error) -> FerrVaultError {
    if let Some(refusal) = egress_gate::refusal_in(&error) {
        return FerrVaultError::EgressDenied(refusal);
    }
    if let Some(refusal) = pinning::refusal_in(&error) {
        return FerrVaultError::TlsRefused(refusal);
    }
    FerrVaultError::Transport {
        attempts: 1,
        source: Arc::new(error),
    }
}

/// Whether the connection closed before the request got any answer: hyper's connection task
/// ended first (the request canceled, or its channel closed), the answer stopped short, or the
/// peer reset the connection.
fn closed_before_answer(error: &reqwest::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    // Bounded: an error chain is a handful of links; the bound only guards against a cycle.
    for _ in 0..32 {
        let Some(current) = cause else { return false };
        if let Some(hyper) = current.downcast_ref::<hyper::Error>()
            && (hyper.is_canceled() || hyper.is_closed() || hyper.is_incomplete_message())
        {
            return true;
        }
        if let Some(io) = current.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
            )
        {
            return true;
        }
        cause = current.source();
    }
    false
}

/// The accounting label of a failed attempt.
fn result_of(error: &FerrVaultError) -> RequestResult {
    match error {
        FerrVaultError::RateLimited { .. } => RequestResult::RateLimited,
        FerrVaultError::Auth { .. } => RequestResult::Auth,
        FerrVaultError::NotFound { .. } => RequestResult::NotFound,
        FerrVaultError::Server { .. } => RequestResult::ServerError,
        FerrVaultError::Transport { .. } => RequestResult::Transport,
        FerrVaultError::Timeout { .. } | FerrVaultError::Deadline { .. } => RequestResult::Timeout,
        FerrVaultError::Decode(_) | FerrVaultError::ResponseTooLarge(_) => RequestResult::Decode,
        FerrVaultError::Client { .. }
        | FerrVaultError::Unsupported { .. }
        | FerrVaultError::Redirected { .. }
        | FerrVaultError::InsecureUrl
        | FerrVaultError::EgressDenied(_)
        | FerrVaultError::ClusterIdentity(_)
        | FerrVaultError::InvalidEndpoint(_)
        | FerrVaultError::InvalidCredential(_)
        | FerrVaultError::InvalidTls(_)
        | FerrVaultError::InvalidClientCertificate(_)
        | FerrVaultError::TlsRefused(_)
        | FerrVaultError::InvalidRequest(_)
        | FerrVaultError::TokenFile { .. } => RequestResult::ClientError,
    }
}
