//! The HTTP servers do not share the operator's tokio runtime: with that runtime's only thread
//! blocked (a CPU-saturated reconcile pool, at its worst), `/healthz` and `/readyz` still answer.

use std::{
    io::{Read, Write},
    net::{SocketAddr, TcpStream},
    time::Duration,
};

use clap::Parser;
use ferrvault_operator::{OperatorProcess, ProcessEnv, RunArgs, RunSettings};

#[derive(Parser)]
struct Flags {
    #[command(flatten)]
    run: RunArgs,
}

/// `GET path` over a raw socket with 1s timeouts; the status line.
fn status_line(addr: SocketAddr, path: &str) -> String {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(1)))
        .expect("timeout");
    write!(stream, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").expect("send");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .unwrap_or_else(|error| panic!("no answer on {path} within 1s: {error}"));
    response.lines().next().unwrap_or_default().to_owned()
}

#[test]
fn probes_should_answer_while_the_operator_runtime_is_blocked() {
    let _ = rustls::crypto::ring::default_provider().install_default(); // same provider if already set
    let flags = Flags::parse_from([
        "run",
        "--metrics-bind-address=127.0.0.1:0",
        "--health-probe-bind-address=127.0.0.1:0",
        "--admin-bind-address=",
    ]);
    let settings = RunSettings::from_args(flags.run, &ProcessEnv::default()).expect("valid flags");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        // Nothing listens here; the operator is built but never run, so it makes no call.
        let config = kube::Config::new("http://127.0.0.1:9".parse().expect("uri"));
        let client = kube::Client::try_from(config).expect("client");
        let operator = OperatorProcess::start(&settings, client).expect("operator starts");
        let probes = operator.addresses().probes;
        let prober =
            std::thread::spawn(move || [status_line(probes, "/healthz"), status_line(probes, "/readyz")]);
        // Hold the operator runtime's only thread while the prober asks.
        std::thread::sleep(Duration::from_secs(3));
        let [live, ready] = prober.join().expect("prober");
        assert!(
            live.starts_with("HTTP/1.0 200") || live.starts_with("HTTP/1.1 200"),
            "{live}"
        );
        assert!(
            ready.contains(" 500"),
            "not ready before the runtime runs: {ready}"
        );
    });
}
