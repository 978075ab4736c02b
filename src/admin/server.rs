//! Binds the listeners, then serves each on a thread of its own with its own single-threaded
//! tokio runtime and its own connection budget.
//!
//! # Guarantees
//! - Every listener is bound (the runtimes built, the metrics certificate loaded) before
//!   [`Servers::start`] returns, on the calling thread: a port in use, a bad address or an
//!   unusable certificate fails startup, never a background task.
//! - Work on the operator's runtime, however heavy, cannot delay a probe: the servers share
//!   nothing with it but the snapshots they read.
//! - The hint endpoint (`--hint-bind-address`) is a server of its own too: a flood of hints
//!   uses its thread and connection budget only.
//! - The probes share nothing with `/metrics` or `/debug/*` either: a flood of scrapes, or of
//!   connections to the metrics port, uses the metrics thread and its connection budget only.
//! - [`Servers::stop`] (or drop) ends serving; `stop` waits at most [`Servers::STOP_WAIT`] for
//!   the threads, so a client holding a connection open cannot keep the process from exiting.

use std::{
    net::{SocketAddr, TcpListener},
    thread::JoinHandle,
    time::{Duration, Instant},
};

use tokio_util::sync::CancellationToken;

use super::BindAddress;
use super::{
    Sources,
    limits::HttpLimits,
    listener::{self, Served},
    routes::{self, Routes},
    secure::{CertError, MetricsGuard, SecureMetrics, ServingCert},
};

/// Where each server is asked to listen (`None` = disabled), under which limits, and whether
/// `/metrics` is secure.
#[derive(Clone)]
pub struct Requested {
    /// `/metrics`.
    pub metrics: Option<BindAddress>,
    /// `/healthz`, `/readyz`.
    pub probes: BindAddress,
    /// `/debug/*`.
    pub admin: Option<BindAddress>,
    /// The limits of each server (each has its own budget).
    pub limits: HttpLimits,
    /// `--metrics-secure`: HTTPS with authentication and authorization.
    pub secure_metrics: Option<SecureMetrics>,
    /// `POST /hooks/ferrvault` (`--hint-bind-address`), with its routes.
    pub hints: Option<(BindAddress, Routes)>,
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
    /// `POST /hooks/ferrvault`.
    pub hints: Option<SocketAddr>,
}

/// Why the servers could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A listener could not be bound.
    #[error("cannot listen on {addr} for {server}: {source}")]
    Bind {
        /// `metrics`, `health probes`, `admin` or `hints`.
        server: &'static str,
        /// The address asked for.
        addr: BindAddress,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A server's runtime or thread could not be created.
    #[error("cannot start the HTTP server thread: {0}")]
    Thread(#[source] std::io::Error),
    /// The metrics serving certificate is unusable.
    #[error(transparent)]
    Certificate(#[from] CertError),
}

/// The running servers.
pub struct Servers {
    bound: Addresses,
    stop: CancellationToken,
    threads: Vec<JoinHandle<()>>,
}

impl Servers {
    /// How long [`Servers::stop`] waits for open connections to finish.
    pub const STOP_WAIT: Duration = Duration::from_secs(2);

    /// Binds every address in `requested`, then serves each on a new thread.
    ///
    /// # Errors
    /// [`ServeError::Bind`] naming the server and address; [`ServeError::Certificate`];
    /// [`ServeError::Thread`].
    pub fn start(requested: Requested, sources: Sources) -> Result<Self, ServeError> {
        let metrics = requested.metrics.map(|addr| bind("metrics", addr)).transpose()?;
        let probes = bind("health probes", requested.probes)?;
        let admin = requested.admin.map(|addr| bind("admin", addr)).transpose()?;
        let hints = requested
            .hints
            .map(|(addr, routes)| bind("hints", addr).map(|bound| (bound, routes)))
            .transpose()?;
        let bound = Addresses {
            metrics: metrics.as_ref().map(|(_, local)| *local),
            probes: probes.1,
            admin: admin.as_ref().map(|(_, local)| *local),
            hints: hints.as_ref().map(|((_, local), _)| *local),
        };
        let limits = requested.limits;
        let mut served = vec![Served {
            name: "probes",
            listener: probes.0,
            routes: routes::probes(sources.health.clone()),
            limits,
            tls: None,
            takes_body: false,
        }];
        if let Some((listener, _)) = metrics {
            let (tls, guard) = match requested.secure_metrics {
                Some(secure) => (
                    Some(ServingCert::load(secure.cert)?),
                    Some(MetricsGuard::new(secure.client)),
                ),
                None => (None, None),
            };
            served.push(Served {
                name: "metrics",
                listener,
                routes: routes::metrics(sources.registry.clone(), guard),
                limits,
                tls,
                takes_body: false,
            });
        }
        if let Some((listener, _)) = admin {
            served.push(Served {
                name: "admin",
                listener,
                routes: routes::debug(sources.tree, sources.queues, sources.ferrvault),
                limits,
                tls: None,
                takes_body: false,
            });
        }
        if let Some(((listener, _), routes)) = hints {
            served.push(Served {
                name: "hints",
                listener,
                routes,
                limits,
                tls: None,
                takes_body: true,
            });
        }
        let stop = CancellationToken::new();
        let mut threads = Vec::new();
        for served in served {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(ServeError::Thread)?;
            let token = stop.clone();
            let thread = std::thread::Builder::new()
                .name(format!("http-{}", served.name))
                .spawn(move || runtime.block_on(listener::serve(served, token)))
                .map_err(ServeError::Thread)?;
            threads.push(thread);
        }
        Ok(Self { bound, stop, threads })
    }

    /// The addresses actually bound (ports resolved when `:0` was asked for).
    pub fn addresses(&self) -> Addresses {
        self.bound
    }

    /// Stops accepting, lets open requests finish for up to [`Servers::STOP_WAIT`], and
    /// returns; a thread still serving then ends with the process.
    pub fn stop(mut self) {
        self.stop.cancel();
        let deadline = Instant::now() + Self::STOP_WAIT;
        while self.threads.iter().any(|thread| !thread.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if self.threads.iter().any(|thread| !thread.is_finished()) {
            tracing::warn!("http servers still had open connections at shutdown");
        }
        for thread in self.threads.drain(..).filter(JoinHandle::is_finished) {
            // A panic in a route was already printed; there is nothing left to stop.
            let _ = thread.join();
        }
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
