//! The real binary's HTTP servers against hostile clients: a slow-loris client is cut off at the
//! header-read timeout, connections beyond a server's budget are closed (the longest idle first)
//! while the probes still answer, 2,000 idle connections leave the resident memory bounded, and
//! oversized heads and request bodies are refused.

use std::{
    io::{ErrorKind, Read, Write},
    net::{SocketAddr, TcpStream},
    time::{Duration, Instant},
};

use crate::{
    process_support::{Addresses, Spawned, wait_for_200},
    run::{cluster, run_command},
};
use ferrvault_sim::testkit::poll_until;

/// How long a probe may take to answer while the servers are under attack.
const PROBE_BOUND: Duration = Duration::from_secs(1);

/// A request head that never ends: the request line and a header, no blank line.
const PARTIAL_HEAD: &[u8] = b"GET /metrics HTTP/1.1\r\nHost: x\r\n";

/// Starts the operator with `extra` flags and waits until it is ready.
async fn start(extra: &[&str]) -> (impl Drop, Spawned, Addresses) {
    let (sim, dir, kubeconfig) = cluster().await;
    let mut operator = Spawned::start(run_command(&kubeconfig, extra));
    let at = operator.addresses();
    wait_for_200(&format!("http://{}/readyz", at.probes), Duration::from_secs(30)).await;
    (Box::new((sim, dir)), operator, at)
}

fn connect(addr: SocketAddr) -> TcpStream {
    TcpStream::connect_timeout(&addr, Duration::from_secs(2))
        .unwrap_or_else(|error| panic!("connect {addr}: {error}"))
}

/// A connection that sent part of a request head and then nothing.
fn idle_connection(addr: SocketAddr) -> TcpStream {
    let mut stream = connect(addr);
    stream.write_all(PARTIAL_HEAD).expect("send a partial head");
    stream
}

/// Whether the server has closed `stream` (end of stream or reset), without waiting.
fn closed_by_server(stream: &mut TcpStream) -> bool {
    stream.set_nonblocking(true).expect("non-blocking");
    let mut byte = [0; 1];
    let closed = match stream.read(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(error) => error.kind() != ErrorKind::WouldBlock,
    };
    stream.set_nonblocking(false).expect("blocking");
    closed
}

/// `GET path` over a fresh connection: the status line and how long the answer took.
fn timed_get(addr: SocketAddr, path: &str) -> (String, Duration) {
    let started = Instant::now();
    let mut stream = connect(addr);
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    write!(stream, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").expect("send");
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let response = String::from_utf8_lossy(&response).into_owned();
    (
        response.lines().next().unwrap_or_default().to_owned(),
        started.elapsed(),
    )
}

/// The probes answer (200 or 500: they answer, whatever the verdict) within [`PROBE_BOUND`].
fn assert_probes_answer(at: &Addresses) {
    for path in ["/healthz", "/readyz"] {
        let (status, took) = timed_get(at.probes, path);
        assert!(
            status.ends_with(" 200 OK") || status.ends_with(" 500 Internal Server Error"),
            "{path}: {status:?}"
        );
        assert!(took < PROBE_BOUND, "{path} took {took:?}");
    }
}

fn vm_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/<pid>/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmRSS line")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_loris_client_should_be_cut_off_after_the_header_read_timeout() {
    let (_cluster, _operator, at) =
        start(&["--http-read-header-timeout=1s", "--http-idle-timeout=60s"]).await;
    let mut slow = connect(at.probes);
    slow.set_read_timeout(Some(Duration::from_millis(100)))
        .expect("timeout");
    let started = Instant::now();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .expect("send");
    // One byte of a header value that never ends every 100 ms: the connection is never idle, so
    // only the header-read timeout can end it.
    let cut_after = loop {
        let elapsed = started.elapsed();
        assert!(
            elapsed < Duration::from_secs(8),
            "still connected after {elapsed:?}"
        );
        let mut answer = [0; 64];
        match slow.read(&mut answer) {
            Ok(0) => break elapsed,
            Ok(n) => panic!(
                "a head never finished got an answer: {:?}",
                String::from_utf8_lossy(&answer[..n])
            ),
            Err(error) if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break elapsed,
        }
        if slow.write_all(b"a").is_err() {
            break started.elapsed();
        }
    };
    assert!(
        cut_after >= Duration::from_millis(900) && cut_after < Duration::from_secs(3),
        "cut off after {cut_after:?}, expected about 1s"
    );
    // The same request, sent at once, is answered.
    assert_probes_answer(&at);
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_beyond_the_cap_should_be_closed_longest_idle_first_while_probes_answer() {
    let (_cluster, _operator, at) =
        start(&["--http-max-connections=4", "--http-read-header-timeout=60s"]).await;
    let mut flood: Vec<TcpStream> = (0..40).map(|_| idle_connection(at.metrics)).collect();
    // Each newcomer took the place of the longest idle connection: only the last four are left.
    let expected: Vec<bool> = (0..40).map(|i| i < 36).collect();
    poll_until(
        "the server to close the first 36 connections only",
        Duration::from_secs(5),
        || {
            let closed: Vec<bool> = flood.iter_mut().map(closed_by_server).collect();
            std::future::ready(if closed == expected {
                Ok(())
            } else {
                Err(format!("closed by the server: {closed:?}"))
            })
        },
    )
    .await;
    // The probes have their own budget: untouched by the metrics flood.
    assert_probes_answer(&at);
    // A flood of the probes port itself cannot keep a probe out: the probe takes an idle one's place.
    let _probe_flood: Vec<TcpStream> = (0..40).map(|_| idle_connection(at.probes)).collect();
    assert_probes_answer(&at);
    // And a scrape still gets through the metrics flood the same way.
    let (status, took) = timed_get(at.metrics, "/metrics");
    assert!(status.ends_with(" 200 OK"), "{status:?}");
    assert!(took < PROBE_BOUND, "scrape took {took:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_thousand_idle_connections_should_leave_memory_bounded_and_probes_answering() {
    let (_cluster, operator, at) = start(&["--http-read-header-timeout=60s"]).await;
    // Settle: the first scrape and probes allocate what every later one reuses.
    for _ in 0..3 {
        let _ = timed_get(at.metrics, "/metrics");
        assert_probes_answer(&at);
    }
    let before = vm_rss_kib(operator.pid());
    let idle: Vec<TcpStream> = (0..2_000).map(|_| idle_connection(at.metrics)).collect();
    assert_probes_answer(&at);
    let (status, _) = timed_get(at.metrics, "/metrics");
    assert!(status.ends_with(" 200 OK"), "{status:?}");
    let after = vm_rss_kib(operator.pid());
    let growth_kib = after.saturating_sub(before);
    assert!(
        growth_kib < 8 * 1024,
        "VmRSS grew by {growth_kib} KiB ({before} -> {after}) with {} idle connections",
        idle.len()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_head_should_get_431_and_a_request_body_413() {
    let (_cluster, _operator, at) = start(&[]).await;
    let answer = |request: &[u8]| {
        let mut stream = connect(at.probes);
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        // The server may close before reading everything; its answer is still there to read.
        let _ = stream.write_all(request);
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
        String::from_utf8_lossy(&response)
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    let big = format!(
        "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(20 * 1024)
    );
    assert!(
        answer(big.as_bytes()).starts_with("HTTP/1.1 431"),
        "a 20 KiB head"
    );
    let fits = format!(
        "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Fits: {}\r\n\r\n",
        "a".repeat(8 * 1024)
    );
    let status = answer(fits.as_bytes());
    assert!(
        status.starts_with("HTTP/1.1 200") || status.starts_with("HTTP/1.1 500"),
        "an 8 KiB head: {status}"
    );
    let body = b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
    assert!(answer(body).starts_with("HTTP/1.1 413"), "a request body");
}
