use std::io::{Read, Write};

use bytes::Bytes;
use warp::Filter;

use super::*;
use crate::admin::fixtures;

/// Serves `body` for every request on a loopback port under `limits`.
fn serving(body: Bytes, limits: HttpLimits) -> (std::net::SocketAddr, CancellationToken) {
    let routes = warp::any().map(move || Reply::new(body.clone().into())).boxed();
    fixtures::serving(routes, limits)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_should_be_cut_off_after_the_idle_timeout() {
    const SIZE: usize = 64 << 20;
    let limits = HttpLimits {
        header_read_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_millis(300),
        max_connections: 4,
    };
    let (addr, stop) = serving(Bytes::from(vec![b'x'; SIZE]), limits);
    let received = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(addr).expect("connect");
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .expect("send");
        // Stop reading: the server's writes stall once the socket buffers are full.
        std::thread::sleep(Duration::from_secs(2));
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        let mut received = 0;
        let mut chunk = vec![0; 1 << 16];
        while let Ok(n) = stream.read(&mut chunk) {
            if n == 0 {
                break;
            }
            received += n;
        }
        received
    })
    .await
    .expect("client");
    stop.cancel();
    assert!(
        received > 0 && received < SIZE,
        "received {received} of {SIZE} bytes: the stalled connection should have been closed"
    );
}

#[tokio::test]
async fn probes_accepted_amid_a_burst_of_slow_connections_should_all_be_answered() {
    const PROBES: usize = 5;
    const SLOW_PER_PROBE: usize = 16;
    let limits = HttpLimits {
        max_connections: 8,
        ..HttpLimits::default()
    };
    let (addr, stop) = serving(Bytes::from_static(b"ok"), limits);
    // The server's task has not run yet (one thread, not yielded to): every connection below
    // waits in the listen backlog with what it sent, and the accept loop takes them in one go,
    // as it does a real burst. Each probe is followed by twice the budget of slow connections.
    let mut slow = Vec::new();
    let mut probes = Vec::new();
    for _ in 0..PROBES {
        let mut probe = std::net::TcpStream::connect(addr).expect("connect");
        probe
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .expect("send");
        probes.push(probe);
        for _ in 0..SLOW_PER_PROBE {
            let mut loris = std::net::TcpStream::connect(addr).expect("connect");
            loris.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").expect("send");
            slow.push(loris);
        }
    }
    let answers = tokio::task::spawn_blocking(move || {
        probes
            .into_iter()
            .map(|mut probe| {
                probe
                    .set_read_timeout(Some(Duration::from_secs(5)))
                    .expect("timeout");
                let mut answer = Vec::new();
                let _ = probe.read_to_end(&mut answer);
                String::from_utf8_lossy(&answer)
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect::<Vec<_>>()
    })
    .await
    .expect("probes");
    stop.cancel();
    drop(slow);
    assert_eq!(answers, vec!["HTTP/1.1 200 OK"; PROBES], "every probe answered");
}
