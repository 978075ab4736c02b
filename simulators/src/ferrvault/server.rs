//! The accept loop. warp's own server cannot drop a connection without answering, so the simulator
//! drives hyper itself: a response carrying the [`ResetConnection`] marker makes the service fail,
//! hyper closes the connection without writing anything, and the socket is closed with `SO_LINGER`
//! 0 so the client sees a TCP reset rather than an orderly end of stream.
//!
//! With TLS configured, each connection is a TLS session over that same socket; a failed
//! handshake (no client certificate where one is required, a client that distrusts the server)
//! is counted and ends the connection.
//!
//! # Guarantees
//! - Binds before spawning, so a bad port fails at startup.
//! - Shutdown stops accepting and aborts every connection task, which also ends hanging requests.

use std::{
    future::Future,
    io,
    net::SocketAddr,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll},
};

use hyper::{body::Incoming, service::Service};
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto,
    service::TowerToHyperService,
};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::{TcpListener, TcpStream},
    task::JoinSet,
};
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use warp::filters::BoxedFilter;

use super::{SimError, accounting::Accounting, reply::ResetConnection};

type Routes = BoxedFilter<(warp::reply::Response,)>;

/// Binds `addr`.
///
/// # Errors
/// [`SimError::Bind`] when the address is taken or not allowed.
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, SimError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| SimError::Bind { addr, source })
}

/// How connections are served: plain HTTP, or TLS with this acceptor (whose failed handshakes
/// `accounting` counts).
#[derive(Clone)]
pub enum Transport {
    /// Plain HTTP.
    Plain,
    /// HTTPS.
    Tls {
        /// The server's TLS settings.
        acceptor: TlsAcceptor,
        /// Where failed handshakes are counted.
        accounting: Arc<Accounting>,
    },
}

/// Serves `routes` on `listener` over `transport` until `shutdown` is cancelled.
pub async fn serve(listener: TcpListener, routes: Routes, transport: Transport, shutdown: CancellationToken) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    connections.spawn(serve_connection(stream, routes.clone(), transport.clone()));
                }
                Err(error) => {
                    // Out of file descriptors and the like: back off briefly instead of spinning.
                    tracing::warn!(%error, "ferrvault simulator: accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    connections.shutdown().await;
}

async fn serve_connection(stream: TcpStream, routes: Routes, transport: Transport) {
    // Small request/response pairs: do not let Nagle delay them.
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%error, "ferrvault simulator: set_nodelay failed");
    }
    let reset = Arc::new(AtomicBool::new(false));
    let stream = ResetOnDrop {
        stream,
        reset: Arc::clone(&reset),
    };
    match transport {
        Transport::Plain => serve_http(stream, routes, reset).await,
        Transport::Tls { acceptor, accounting } => match acceptor.accept(stream).await {
            Ok(tls) => serve_http(tls, routes, reset).await,
            Err(error) => {
                accounting.handshake_failed();
                tracing::debug!(%error, "ferrvault simulator: TLS handshake failed");
            }
        },
    }
}

async fn serve_http<I>(stream: I, routes: Routes, reset: Arc<AtomicBool>)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let io = TokioIo::new(stream);
    let service = ResettingService {
        inner: TowerToHyperService::new(warp::service(routes)),
        reset,
    };
    if let Err(error) = auto::Builder::new(TokioExecutor::new())
        .serve_connection(io, service)
        .await
    {
        tracing::debug!(error = %error, "ferrvault simulator: connection ended with an error");
    }
}

/// The service failed on purpose to drop the connection (fault injection).
#[derive(Debug, thiserror::Error)]
#[error("connection reset by fault injection")]
struct ResetRequested;

/// Wraps warp's service; turns a [`ResetConnection`] response into a service error.
struct ResettingService<S> {
    inner: S,
    reset: Arc<AtomicBool>,
}

type Response = warp::reply::Response;

impl<S> Service<http::Request<Incoming>> for ResettingService<S>
where
    S: Service<http::Request<Incoming>, Response = Response, Error = std::convert::Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = ResetRequested;
    type Future = Pin<Box<dyn Future<Output = Result<Response, ResetRequested>> + Send>>;

    fn call(&self, request: http::Request<Incoming>) -> Self::Future {
        let response = self.inner.call(request);
        let reset = Arc::clone(&self.reset);
        Box::pin(async move {
            let response = match response.await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            if response.extensions().get::<ResetConnection>().is_some() {
                reset.store(true, Ordering::SeqCst);
                return Err(ResetRequested);
            }
            Ok(response)
        })
    }
}

/// A TCP stream that, when its connection was marked for reset, closes with a RST.
struct ResetOnDrop {
    stream: TcpStream,
    reset: Arc<AtomicBool>,
}

impl Drop for ResetOnDrop {
    fn drop(&mut self) {
        if self.reset.load(Ordering::SeqCst) {
            // Zero linger never blocks: the kernel discards the buffers and sends RST on close.
            if let Err(error) = self.stream.set_zero_linger() {
                tracing::debug!(%error, "ferrvault simulator: could not arm the reset");
            }
        }
    }
}

impl AsyncRead for ResetOnDrop {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for ResetOnDrop {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}
