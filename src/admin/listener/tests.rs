use std::io::{Read, Write};

use bytes::Bytes;
use http_body_util::Full;

use super::*;

/// Serves `body` for every request on a loopback port under `limits`.
fn serving(body: Bytes, limits: HttpLimits) -> (std::net::SocketAddr, CancellationToken) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("non-blocking");
    let addr = listener.local_addr().expect("addr");
    let handler: Handler = Arc::new(move |_| {
        let body = body.clone();
        Box::pin(async move { http::Response::new(Full::new(body)) })
    });
    let stop = CancellationToken::new();
    let served = Served {
        name: "test",
        listener,
        handler,
        limits,
        tls: None,
    };
    tokio::spawn(serve(served, stop.clone()));
    (addr, stop)
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
