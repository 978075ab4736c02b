//! Serves one bound listener's warp routes with hyper (HTTP/1.1) through `warp::service`, under
//! its [`HttpLimits`]: the accept loop, the connection budget ([`Slots`]), the optional TLS
//! handshake, and each connection's timeouts and size limits. warp's own server is not used: it
//! has none of these limits.
//!
//! # Guarantees
//! - A connection is admitted only with a slot; without one it is closed at once, unread.
//! - On plain HTTP, a connection whose whole request head has arrived by the time it is accepted
//!   (looked at, not read) is admitted as [`Arrival::HeadWaiting`], so a burst accepted after it
//!   cannot take its place before it is answered.
//! - A request head must arrive within `header_read_timeout` (the TLS handshake counts), and be
//!   at most [`HttpLimits::MAX_HEAD_BYTES`] with at most [`HttpLimits::MAX_HEADERS`] fields
//!   (hyper answers 431 beyond that and closes).
//! - No server here takes a request body, but the hint endpoint's (`takes_body`, whose route
//!   bounds the body before reading it): a request announcing one gets 413 and the connection
//!   closes before any route sees it, so nothing a client sends is buffered beyond the head.
//! - A connection on which no byte moves for `idle_timeout` is closed (a client that stops
//!   reading its response).
//! - A response must be taken by the client within [`HttpLimits::WRITE_TIMEOUT`] of its first
//!   byte going out (`write_deadline.rs`), however it trickles: a slow reader holds its
//!   connection that long at most, and meanwhile only a handle on the response's body (hyper
//!   queues body bytes, it does not copy them).
//! - Every request carries its client's address ([`Peer`]) in its extensions.
//! - An error accepting (no file descriptor left, …) pauses the loop briefly instead of spinning.
//! - On stop, new connections are no longer accepted and open ones finish their request.

use std::{convert::Infallible, sync::Arc, time::Duration};

use http::{StatusCode, header};
use hyper::{
    body::{Body as _, Incoming},
    server::conn::http1,
    service::service_fn,
};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::{
    io::{AsyncRead, AsyncWrite},
    net::{TcpListener, TcpStream},
    task::JoinSet,
};
use tokio_io_timeout::TimeoutStream;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tower_service::Service as _;

use self::write_deadline::WriteDeadline;
use super::{
    limits::HttpLimits,
    routes::{self, Peer, Reply, Routes},
    secure::ServingCert,
    slots::{Arrival, Slot, Slots},
};

mod write_deadline;

/// How long the accept loop pauses after an accept error.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(50);

/// One server: what it answers, under which limits, over TLS or not.
pub(super) struct Served {
    /// `metrics`, `health probes` or `admin` (for logs).
    pub(super) name: &'static str,
    pub(super) listener: std::net::TcpListener,
    pub(super) routes: Routes,
    pub(super) limits: HttpLimits,
    /// HTTPS with this certificate (re-read while serving); plain HTTP without.
    pub(super) tls: Option<Arc<ServingCert>>,
    /// Requests with a body reach the routes, which bound and read it themselves (the hint
    /// endpoint); without, they get 413 here.
    pub(super) takes_body: bool,
}

/// Accepts and serves until `stop`, then waits for open connections to finish; meanwhile
/// watches the certificate's files for a change.
pub(super) async fn serve(served: Served, stop: CancellationToken) {
    let watch = served.tls.clone().map(|cert| cert.watch(stop.clone()));
    let certificate_changes = async {
        if let Some(watch) = watch {
            watch.await;
        }
    };
    tokio::join!(accept(served, stop.clone()), certificate_changes);
}

async fn accept(served: Served, stop: CancellationToken) {
    let Served {
        name,
        listener,
        routes,
        limits,
        tls,
        takes_body,
    } = served;
    let listener = match TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(error) => {
            tracing::error!(server = name, %error, "cannot serve a bound listener");
            return;
        }
    };
    let tls = tls.as_ref().map(ServingCert::acceptor);
    let slots = Slots::new(limits.max_connections);
    let mut peeked = vec![0; HttpLimits::MAX_HEAD_BYTES];
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
            // Reap finished connections so the set does not grow with every one ever served.
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::debug!(server = name, %error, "accept failed");
                tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                continue;
            }
        };
        // A TLS client's head comes after its handshake: nothing to look at yet.
        let (stream, arrival) = if tls.is_some() {
            (stream, Arrival::Other)
        } else {
            match arrival(stream, &mut peeked) {
                Ok(looked_at) => looked_at,
                Err(error) => {
                    tracing::debug!(server = name, %error, "cannot look at a new connection");
                    continue;
                }
            }
        };
        // Without a slot the stream is dropped: the client sees the connection closed.
        let Some(slot) = slots.admit(arrival) else {
            continue;
        };
        connections.spawn(connection(
            stream,
            Peer(peer),
            slot,
            routes.clone(),
            (limits, takes_body),
            tls.clone(),
            stop.clone(),
        ));
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}

/// What a plain-HTTP connection has sent so far, looked at without reading it (`peek`, never
/// blocking): a whole request head ends at its first empty line (`\r\n\r\n`, or a bare `\n\n`,
/// which hyper accepts too). `buffer` bounds the look to the largest head served.
fn arrival(stream: TcpStream, buffer: &mut [u8]) -> std::io::Result<(TcpStream, Arrival)> {
    let stream = stream.into_std()?;
    let received = match stream.peek(buffer) {
        Ok(received) => received,
        Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => 0,
        Err(error) => return Err(error),
    };
    let head = &buffer[..received];
    let ends = head
        .iter()
        .enumerate()
        .any(|(at, &byte)| byte == b'\n' && matches!(&head[at + 1..], [b'\n', ..] | [b'\r', b'\n', ..]));
    let arrival = if ends {
        Arrival::HeadWaiting
    } else {
        Arrival::Other
    };
    Ok((TcpStream::from_std(stream)?, arrival))
}

async fn connection(
    stream: TcpStream,
    peer: Peer,
    slot: Slot,
    routes: Routes,
    limits: (HttpLimits, bool),
    tls: Option<TlsAcceptor>,
    stop: CancellationToken,
) {
    let _ = stream.set_nodelay(true);
    let (limits, takes_body) = limits;
    let mut timed = TimeoutStream::new(stream);
    timed.set_read_timeout(Some(limits.idle_timeout));
    timed.set_write_timeout(Some(limits.idle_timeout));
    let timed = WriteDeadline::new(Box::pin(timed), HttpLimits::WRITE_TIMEOUT);
    let slot = Arc::new(slot);
    match tls {
        None => http(timed, peer, slot, routes, (limits, takes_body), stop).await,
        Some(acceptor) => {
            let handshake = tokio::time::timeout(limits.header_read_timeout, acceptor.accept(timed));
            let stream = tokio::select! {
                () = slot.evicted() => return,
                handshake = handshake => match handshake {
                    Ok(Ok(stream)) => stream,
                    Ok(Err(error)) => {
                        tracing::debug!(%error, "TLS handshake failed");
                        return;
                    }
                    Err(_) => return,
                },
            };
            http(stream, peer, slot, routes, (limits, takes_body), stop).await;
        }
    }
}

/// Serves HTTP/1.1 on `io` until the client is done, the connection is evicted or times out,
/// or the server stops (then the request in progress finishes first).
async fn http<I>(
    io: I,
    peer: Peer,
    slot: Arc<Slot>,
    routes: Routes,
    (limits, takes_body): (HttpLimits, bool),
    stop: CancellationToken,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service_slot = slot.clone();
    let routes = warp::service(routes);
    let service = service_fn(move |mut request: http::Request<Incoming>| {
        let busy = service_slot.busy();
        request.extensions_mut().insert(peer);
        // A request with a body never reaches the routes, unless they read bodies themselves.
        let routed = (takes_body || request.body().is_end_stream()).then(|| routes.clone().call(request));
        async move {
            let _busy = busy;
            match routed {
                Some(routed) => routed.await,
                None => Ok::<_, Infallible>(body_refused()),
            }
        }
    });
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(HttpLimits::MAX_HEAD_BYTES)
        .max_headers(HttpLimits::MAX_HEADERS)
        // Queue body bytes rather than copy them (the default for vectored sockets, stated so it
        // cannot change under us): a slow reader holds a handle on a shared body, not a copy.
        .writev(true)
        .serve_connection(TokioIo::new(io), service);
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        // Errors (timeouts, a client gone, a malformed request) end this connection only.
        _ = connection.as_mut() => {}
        () = slot.evicted() => {}
        () = stop.cancelled() => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}

fn body_refused() -> Reply {
    let mut response = routes::text(
        StatusCode::PAYLOAD_TOO_LARGE,
        "this server takes no request body\n",
    );
    response
        .headers_mut()
        .insert(header::CONNECTION, header::HeaderValue::from_static("close"));
    response
}

#[cfg(test)]
mod tests;
