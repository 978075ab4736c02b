//! Test fixtures: routes served by the real accept loop on a loopback port, and raw HTTP/1.1
//! exchanges with them (what a client reads, byte for byte, but the `date` header).

use std::{
    io::{Read, Write},
    net::{SocketAddr, TcpStream},
    time::Duration,
};

use tokio_util::sync::CancellationToken;

use super::{
    limits::HttpLimits,
    listener::{Served, serve},
    routes::Routes,
};

/// Serves `routes` under `limits` on a loopback port, on the calling test's runtime, until the
/// token is cancelled.
pub(super) fn serving(routes: Routes, limits: HttpLimits) -> (SocketAddr, CancellationToken) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("non-blocking");
    let addr = listener.local_addr().expect("addr");
    let stop = CancellationToken::new();
    let served = Served {
        name: "test",
        listener,
        routes,
        limits,
        tls: None,
        takes_body: false,
    };
    tokio::spawn(serve(served, stop.clone()));
    (addr, stop)
}

/// Sends `request` (a whole request head, and whatever follows it) and reads the answer until
/// the server closes the connection (send `Connection: close`), without its `date` header.
pub(super) async fn exchange(addr: SocketAddr, request: &'static [u8]) -> String {
    tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        stream.write_all(request).expect("send");
        let mut answer = Vec::new();
        stream
            .read_to_end(&mut answer)
            .expect("the server answers and closes within 10 s");
        String::from_utf8_lossy(&answer)
            .split_inclusive("\r\n")
            .filter(|line| !line.starts_with("date: "))
            .collect()
    })
    .await
    .expect("the client ends")
}
