//! Binds the listeners, then serves them on a dedicated thread with its own single-threaded
//! tokio runtime.
//!
//! # Guarantees
//! - Every listener is bound (and the runtime built) before [`Servers::start`] returns, on the
//!   calling thread: a port in use or a bad address fails startup, never a background task.
//! - Work on the operator's runtime, however heavy, cannot delay a probe: the servers share
//!   nothing with it but the snapshots they read.
//! - [`Servers::stop`] (or drop) ends serving; `stop` waits at most [`Servers::STOP_WAIT`] for
//!   the thread, so a client holding a connection open cannot keep the process from exiting.

use std::{
    net::{SocketAddr, TcpListener},
    thread::JoinHandle,
    time::Duration,
};

use tokio_util::sync::CancellationToken;
use warp::{filters::BoxedFilter, reply::Response};

use super::{Sources, routes};
use crate::cli::BindAddress;

/// Where each server is asked to listen (`None` = disabled).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requested {
    /// `/metrics`.
    pub metrics: Option<BindAddress>,
    /// `/healthz`, `/readyz`.
    pub probes: BindAddress,
    /// `/debug/*`.
    pub admin: Option<BindAddress>,
}

/// Where each server listens (`None` = disabled).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addresses {
    /// `/metrics`.
    pub metrics: Option<SocketAddr>,
    /// `/healthz`, `/readyz`.
    pub probes: SocketAddr,
    /// `/debug/*`.
    pub admin: Option<SocketAddr>,
}

/// Why the servers could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A listener could not be bound.
    #[error("cannot listen on {addr} for {server}: {source}")]
    Bind {
        /// `metrics`, `health probes` or `admin`.
        server: &'static str,
        /// The address asked for.
        addr: BindAddress,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The servers' runtime or thread could not be created.
    #[error("cannot start the HTTP server thread: {0}")]
    Thread(#[source] std::io::Error),
}

/// The running servers.
pub struct Servers {
    bound: Addresses,
    stop: CancellationToken,
    thread: Option<JoinHandle<()>>,
}

impl Servers {
    /// How long [`Servers::stop`] waits for open connections to finish.
    pub const STOP_WAIT: Duration = Duration::from_secs(2);

    /// Binds every address in `requested`, then serves on a new thread.
    ///
    /// # Errors
    /// [`ServeError::Bind`] naming the server and address; [`ServeError::Thread`].
    pub fn start(requested: Requested, sources: Sources) -> Result<Self, ServeError> {
        let metrics = requested.metrics.map(|addr| bind("metrics", addr)).transpose()?;
        let probes = bind("health probes", requested.probes)?;
        let admin = requested.admin.map(|addr| bind("admin", addr)).transpose()?;
        let bound = Addresses {
            metrics: metrics.as_ref().map(|(_, local)| *local),
            probes: probes.1,
            admin: admin.as_ref().map(|(_, local)| *local),
        };
        let mut served: Vec<(TcpListener, BoxedFilter<(Response,)>)> =
            vec![(probes.0, routes::probes(sources.health.clone()))];
        if let Some((listener, _)) = metrics {
            served.push((listener, routes::metrics(sources.registry.clone())));
        }
        if let Some((listener, _)) = admin {
            served.push((
                listener,
                routes::debug(sources.tree, sources.queues, sources.ferrvault),
            ));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(ServeError::Thread)?;
        let stop = CancellationToken::new();
        let token = stop.clone();
        let thread = std::thread::Builder::new()
            .name("http-servers".into())
            .spawn(move || runtime.block_on(serve_all(served, token)))
            .map_err(ServeError::Thread)?;
        Ok(Self {
            bound,
            stop,
            thread: Some(thread),
        })
    }

    /// The addresses actually bound (ports resolved when `:0` was asked for).
    pub fn addresses(&self) -> Addresses {
        self.bound
    }

    /// Stops accepting, lets open requests finish for up to [`Servers::STOP_WAIT`], and
    /// returns; a thread still serving then ends with the process.
    pub fn stop(mut self) {
        self.stop.cancel();
        let Some(thread) = self.thread.take() else {
            return;
        };
        for _ in 0..(Self::STOP_WAIT.as_millis() / 10) {
            if thread.is_finished() {
                // A panic in a handler was already printed; there is nothing left to stop.
                let _ = thread.join();
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        tracing::warn!("http servers still had open connections at shutdown");
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// A bound listener and the address it really got (ports resolved when `:0` was asked for).
fn bind(server: &'static str, addr: BindAddress) -> Result<(TcpListener, SocketAddr), ServeError> {
    let fail = |source| ServeError::Bind { server, addr, source };
    let listener = addr.bind().map_err(fail)?;
    let local = listener.local_addr().map_err(fail)?;
    Ok((listener, local))
}

async fn serve_all(served: Vec<(TcpListener, BoxedFilter<(Response,)>)>, stop: CancellationToken) {
    let mut tasks = tokio::task::JoinSet::new();
    for (listener, filter) in served {
        let listener = match tokio::net::TcpListener::from_std(listener) {
            Ok(listener) => listener,
            Err(error) => {
                tracing::error!(%error, "cannot serve a bound listener");
                continue;
            }
        };
        tasks.spawn(
            warp::serve(filter)
                .incoming(listener)
                .graceful(stop.clone().cancelled_owned())
                .run(),
        );
    }
    while tasks.join_next().await.is_some() {}
}
