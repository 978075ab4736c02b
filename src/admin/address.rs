//! Bind addresses in the forms Kubernetes operators use: `:8080` (every interface of every
//! address family, as Go's `net.Listen` reads it), `127.0.0.1:8082`, `[::1]:8082`,
//! `localhost:8082`, and `0` for "off" where controller-runtime accepts it. The servers bind
//! them ([`server`](super::server)); the `run` flags are parsed into them (`cli::settings`).

use std::{
    io,
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener},
};

use socket2::{Domain, Socket, Type};

/// Why a bind address is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value:?} is not a bind address ({problem}); use :PORT, IP:PORT or localhost:PORT")]
pub struct AddressError {
    /// The text given.
    pub value: String,
    /// What is wrong with it.
    pub problem: &'static str,
}

/// A parsed bind address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindAddress {
    /// `:PORT`: every interface, IPv6 and IPv4 (one dual-stack socket), or IPv4 alone on a host
    /// without IPv6 — what Go's `net.Listen("tcp", ":PORT")` does, so IPv6-only clusters can
    /// probe and scrape.
    EveryInterface(u16),
    /// One address, as given.
    Exact(SocketAddr),
}

impl BindAddress {
    /// Parses `:PORT`, `IP:PORT`, `[IPv6]:PORT` or `localhost:PORT`.
    ///
    /// # Errors
    /// Anything else, naming the problem.
    pub fn parse(value: &str) -> Result<Self, AddressError> {
        let fail = |problem| AddressError {
            value: value.to_owned(),
            problem,
        };
        let port = |text: &str| {
            text.parse::<u16>()
                .map_err(|_| fail("the port is not a number 0-65535"))
        };
        let value = value.trim();
        if let Some(text) = value.strip_prefix(':') {
            return Ok(Self::EveryInterface(port(text)?));
        }
        if let Some(text) = value.strip_prefix("localhost:") {
            return Ok(Self::Exact(SocketAddr::new(
                IpAddr::V4(Ipv4Addr::LOCALHOST),
                port(text)?,
            )));
        }
        value
            .parse::<SocketAddr>()
            .map(Self::Exact)
            .map_err(|_| fail("expected an IP address and a port"))
    }

    /// Parses like [`BindAddress::parse`], with `0` meaning "do not serve" (controller-runtime's
    /// spelling for a disabled metrics server) and an empty value too.
    ///
    /// # Errors
    /// As [`BindAddress::parse`].
    pub fn parse_optional(value: &str) -> Result<Option<Self>, AddressError> {
        match value.trim() {
            "" | "0" => Ok(None),
            value => Self::parse(value).map(Some),
        }
    }

    /// Binds a listening socket (non-blocking, ready for tokio).
    ///
    /// # Errors
    /// The OS error of the bind, or of the IPv4 fallback for [`BindAddress::EveryInterface`]
    /// on a host without IPv6.
    pub fn bind(self) -> io::Result<TcpListener> {
        let listener = match self {
            Self::Exact(addr) => listen_on(addr)?,
            Self::EveryInterface(port) => match dual_stack(port) {
                Ok(listener) => listener,
                Err(error) if ipv6_unavailable(&error) => {
                    listen_on(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port))?
                }
                Err(error) => return Err(error),
            },
        };
        listener.set_nonblocking(true)?;
        Ok(listener)
    }
}

impl std::fmt::Display for BindAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::EveryInterface(port) => write!(f, ":{port}"),
            Self::Exact(addr) => write!(f, "{addr}"),
        }
    }
}

/// Connections the kernel queues until they are accepted. A burst of clients (a thousand
/// connecting at once) waits there instead of having its handshakes dropped, which would cost a
/// probe caught in it a retransmission of a second or more, its whole timeout. std's `bind`
/// queues 128.
const LISTEN_BACKLOG: i32 = 1024;

/// `[::]:port` with `IPV6_V6ONLY` off, so IPv4 clients reach it as `::ffff:a.b.c.d` whatever
/// the host's `net.ipv6.bindv6only` default is.
fn dual_stack(port: u16) -> io::Result<TcpListener> {
    let socket = Socket::new(Domain::IPV6, Type::STREAM, None)?;
    socket.set_only_v6(false)?;
    listen(socket, SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), port))
}

/// A socket of `addr`'s family bound to it and listening (see [`listen`]).
fn listen_on(addr: SocketAddr) -> io::Result<TcpListener> {
    listen(Socket::new(Domain::for_address(addr), Type::STREAM, None)?, addr)
}

/// `socket` bound to `addr` (reusable at once after a restart, as std's `bind` does) and
/// listening with [`LISTEN_BACKLOG`].
fn listen(socket: Socket, addr: SocketAddr) -> io::Result<TcpListener> {
    socket.set_reuse_address(true)?;
    defer_accept(&socket)?;
    socket.bind(&addr.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    Ok(socket.into())
}

/// How long the kernel holds a connection that has sent nothing before handing it to `accept`
/// anyway (`TCP_DEFER_ACCEPT`, seconds).
#[cfg(target_os = "linux")]
const DEFER_ACCEPT_SECONDS: libc::c_int = 5;

/// Has the kernel hand a connection to `accept` only once its first bytes have arrived (or
/// after [`DEFER_ACCEPT_SECONDS`]), as nginx's `deferred` and HAProxy's `defer-accept` do: a
/// probe's request head is then already there when it is accepted, so the connection budget
/// can tell it from a slow-loris client however late the probe's client got to write it, and
/// connections that send nothing cost the process nothing.
#[cfg(target_os = "linux")]
fn defer_accept(socket: &Socket) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let seconds = DEFER_ACCEPT_SECONDS;
    // SAFETY: a valid socket descriptor, and a pointer to a live `c_int` with its size, as
    // setsockopt(2) reads it; nothing is kept.
    let done = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_DEFER_ACCEPT,
            std::ptr::from_ref(&seconds).cast(),
            std::mem::size_of_val(&seconds) as libc::socklen_t,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Other systems accept connections as they come.
#[cfg(not(target_os = "linux"))]
fn defer_accept(_socket: &Socket) -> io::Result<()> {
    Ok(())
}

/// The errors of a kernel booted without IPv6 (or a sandbox denying it).
fn ipv6_unavailable(error: &io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EAFNOSUPPORT | libc::EADDRNOTAVAIL | libc::EPROTONOSUPPORT)
    )
}

#[cfg(test)]
mod tests {
    use std::{net::TcpStream, time::Duration};

    use super::*;

    #[test]
    fn a_bare_port_should_mean_every_interface() {
        assert_eq!(
            BindAddress::parse(":8080").unwrap(),
            BindAddress::EveryInterface(8080)
        );
    }

    #[test]
    fn ip_ipv6_and_localhost_forms_should_parse() {
        for (input, expected) in [
            ("127.0.0.1:8082", "127.0.0.1:8082"),
            ("[::1]:9000", "[::1]:9000"),
            ("localhost:0", "127.0.0.1:0"),
            ("0.0.0.0:9102", "0.0.0.0:9102"),
        ] {
            assert_eq!(
                BindAddress::parse(input).unwrap(),
                BindAddress::Exact(expected.parse().unwrap()),
                "{input}"
            );
        }
    }

    #[test]
    fn zero_and_empty_should_mean_off_only_where_off_is_allowed() {
        assert_eq!(BindAddress::parse_optional("0").unwrap(), None);
        assert_eq!(BindAddress::parse_optional("").unwrap(), None);
        assert_eq!(
            BindAddress::parse_optional(":9").unwrap(),
            Some(BindAddress::EveryInterface(9))
        );
        BindAddress::parse("0").expect_err("0 is not an address where off is not allowed");
    }

    #[test]
    fn malformed_addresses_should_be_refused_with_the_value() {
        for input in ["8080", ":http", ":70000", "example.com:80", "localhost", ""] {
            let error = BindAddress::parse(input).expect_err(input);
            assert!(error.to_string().contains(&format!("{input:?}")), "{error}");
        }
    }

    #[test]
    fn a_burst_of_connections_should_wait_to_be_accepted_rather_than_be_dropped() {
        const BURST: usize = 500;
        let listener = BindAddress::Exact("127.0.0.1:0".parse().unwrap())
            .bind()
            .expect("bind");
        let addr = listener.local_addr().expect("bound");
        // Nothing accepts: each handshake must be queued. A dropped one is retried by the
        // kernel after a second, past this timeout.
        let connected: Vec<TcpStream> = (0..BURST)
            .map_while(|_| TcpStream::connect_timeout(&addr, Duration::from_millis(500)).ok())
            .collect();
        assert_eq!(connected.len(), BURST, "connections queued before the first drop");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_connection_should_reach_accept_only_once_its_first_bytes_have_arrived() {
        use std::io::{ErrorKind, Write};
        let listener = BindAddress::Exact("127.0.0.1:0".parse().unwrap())
            .bind()
            .expect("bind");
        let mut client = TcpStream::connect(listener.local_addr().expect("bound")).expect("connect");
        // The handshake is complete (connect returned); a listener without the option would
        // have the connection ready to accept by now.
        std::thread::sleep(Duration::from_millis(200));
        let silent = listener.accept().map(|_| ()).map_err(|e| e.kind());
        assert_eq!(
            silent,
            Err(ErrorKind::WouldBlock),
            "a silent connection is held back"
        );
        client.write_all(b"GET /healthz HTTP/1.1\r\n\r\n").expect("send");
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        let accepted = loop {
            match listener.accept() {
                Ok((accepted, _)) => break accepted,
                Err(error) if error.kind() == ErrorKind::WouldBlock => {
                    assert!(std::time::Instant::now() < deadline, "never accepted");
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(error) => panic!("accept: {error}"),
            }
        };
        let mut head = [0; 64];
        let waiting = accepted.peek(&mut head).expect("peek");
        assert_eq!(
            &head[..waiting],
            b"GET /healthz HTTP/1.1\r\n\r\n",
            "the head came with it"
        );
    }

    #[test]
    fn every_interface_should_accept_ipv4_and_ipv6_clients_on_one_port() {
        let host_has_ipv6 = TcpListener::bind("[::1]:0").is_ok();
        let listener = BindAddress::EveryInterface(0).bind().expect("bind :0");
        let port = listener.local_addr().expect("bound").port();
        listener.set_nonblocking(false).expect("blocking accept");
        TcpStream::connect(("127.0.0.1", port)).expect("an IPv4 client connects");
        listener.accept().expect("the IPv4 connection is accepted");
        if host_has_ipv6 {
            TcpStream::connect(("::1", port)).expect("an IPv6 client connects");
            listener.accept().expect("the IPv6 connection is accepted");
        } else {
            assert!(
                listener.local_addr().expect("bound").is_ipv4(),
                "the IPv4 fallback"
            );
        }
    }
}
