//! What one HTTP client may take of a server: how long it may dawdle (sending its request or
//! taking the response), how many connections all clients may hold, how big a request may be. Each server (metrics, probes, admin) has its own
//! budget, so a flood of one cannot take the other's connections.

use std::time::Duration;

/// Limits of one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// A request head (request line and headers) must arrive whole within this time, counted
    /// from when the server waits for it: on a new connection (TLS handshake included) and
    /// between two requests of a kept-alive connection. A slow-loris client is cut off here,
    /// and so is a kept-alive connection that stays silent this long.
    pub header_read_timeout: Duration,
    /// A connection on which no byte moves either way for this long is closed: a client that
    /// stops reading its response cannot hold the connection.
    pub idle_timeout: Duration,
    /// Connections open at once. When all are taken, the connection waiting longest for a
    /// request is closed to make room for the new one; with every connection busy in a request
    /// the new one is closed at once.
    pub max_connections: usize,
}

impl HttpLimits {
    /// Default of `--http-read-header-timeout`.
    pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
    /// Default of `--http-idle-timeout`.
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30);
    /// Default of `--http-max-connections`.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 64;
    /// The most bytes a request head may take (request line and headers; a bearer token of the
    /// secure metrics endpoint fits many times). Larger heads get 431 and the connection closes.
    pub const MAX_HEAD_BYTES: usize = 16 * 1024;
    /// The most header fields in one request.
    pub const MAX_HEADERS: usize = 64;
    /// A response must be taken by its client within this time of its first byte going out
    /// (issue 34 point 5: slow readers), however slowly the bytes trickle; the connection is
    /// closed otherwise. Prometheus's default `scrape_timeout` is 10 s too: a scraper slower
    /// than that has given up already.
    pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: Self::DEFAULT_HEADER_READ_TIMEOUT,
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
        }
    }
}
