//! A deadline on what the server writes (issue 34 point 5): once a response starts going out,
//! the client must take all of it within the write timeout, or the connection fails. A client
//! that stops reading, or reads a trickle to keep the idle timeout away, holds its connection
//! (and its share of the response) for that long at most.
//!
//! # Guarantees
//! - A write episode starts at the first write after the last completed flush and ends at the
//!   next completed flush; hyper flushes once it has handed a response (head and body) to the
//!   socket. A write or flush still unfinished `timeout` after its episode started fails with
//!   [`io::ErrorKind::TimedOut`], which ends the connection.
//! - Reading is untouched: between responses there is no episode, and the header-read timeout
//!   governs a silent keep-alive connection.
//! - Vectored writes pass through (and `is_write_vectored` with them), so hyper keeps queueing
//!   a shared body's bytes instead of copying them into a buffer of its own.

use std::{
    future::Future,
    io::{self, IoSlice},
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    time::{Instant, Sleep},
};

/// `inner` whose writes must be taken by the client within a timeout.
pub(super) struct WriteDeadline<S> {
    inner: S,
    timeout: Duration,
    /// When the write episode in progress must end; `None` between episodes.
    deadline: Option<Instant>,
    /// Wakes the connection at `deadline` while a write waits for the client; made at the first
    /// such wait and reset after, so a connection that never waits never has one.
    timer: Option<Pin<Box<Sleep>>>,
}

impl<S> WriteDeadline<S> {
    /// `inner`, each of whose write episodes must end within `timeout`.
    pub(super) fn new(inner: S, timeout: Duration) -> Self {
        Self {
            inner,
            timeout,
            deadline: None,
            timer: None,
        }
    }

    /// The deadline of the episode in progress, starting one now if none is.
    fn episode(&mut self) -> Instant {
        *self.deadline.get_or_insert_with(|| Instant::now() + self.timeout)
    }

    /// Pending until `deadline` (with the waker registered), then the timeout error.
    fn wait_until(&mut self, deadline: Instant, cx: &mut Context<'_>) -> Poll<io::Error> {
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if timer.deadline() != deadline {
            timer.as_mut().reset(deadline);
        }
        timer.as_mut().poll(cx).map(|()| timed_out())
    }

    /// One write of the episode: refused once the deadline has passed; while the socket is
    /// full, pending until it has room or the deadline passes.
    fn poll_episode<T>(
        &mut self,
        cx: &mut Context<'_>,
        write: impl FnOnce(Pin<&mut S>, &mut Context<'_>) -> Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>>
    where
        S: Unpin,
    {
        let deadline = self.episode();
        if Instant::now() >= deadline {
            return Poll::Ready(Err(timed_out()));
        }
        match write(Pin::new(&mut self.inner), cx) {
            Poll::Pending => self.wait_until(deadline, cx).map(Err),
            done => done,
        }
    }
}

fn timed_out() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        "the client did not take the response within the write timeout",
    )
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.get_mut()
            .poll_episode(cx, |inner, cx| inner.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_mut()
            .poll_episode(cx, |inner, cx| inner.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.deadline.is_none() {
            return Pin::new(&mut this.inner).poll_flush(cx);
        }
        let flushed = this.poll_episode(cx, |inner, cx| inner.poll_flush(cx));
        if let Poll::Ready(Ok(())) = flushed {
            this.deadline = None;
        }
        flushed
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteDeadline<S> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream, duplex};

    use super::*;

    const TIMEOUT: Duration = Duration::from_secs(10);
    /// What the pipe holds before a write must wait for the reader.
    const PIPE: usize = 1024;

    fn pipe() -> (WriteDeadline<DuplexStream>, DuplexStream) {
        let (server, client) = duplex(PIPE);
        (WriteDeadline::new(server, TIMEOUT), client)
    }

    /// `write`'s outcome, failing the test if it is still pending after twice the timeout.
    async fn within_twice_the_timeout<T>(write: impl Future<Output = T>) -> T {
        tokio::time::timeout(2 * TIMEOUT, write)
            .await
            .expect("the write was still waiting for the client at twice the timeout")
    }

    #[tokio::test(start_paused = true)]
    async fn a_client_that_reads_nothing_should_fail_the_write_at_the_deadline() {
        let (mut server, _client) = pipe();
        let started = Instant::now();
        let error = within_twice_the_timeout(server.write_all(&[b'x'; 4 * PIPE]))
            .await
            .expect_err("nobody reads");
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), TIMEOUT);
    }

    #[tokio::test(start_paused = true)]
    async fn a_client_that_reads_a_trickle_should_still_be_cut_at_the_deadline() {
        let (mut server, mut client) = pipe();
        let trickle = tokio::spawn(async move {
            let mut byte = [0; 1];
            // One byte a second: the connection is never idle, the response never done.
            while client.read(&mut byte).await.is_ok_and(|n| n > 0) {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
        let started = Instant::now();
        let error = within_twice_the_timeout(server.write_all(&[b'x'; 4 * PIPE]))
            .await
            .expect_err("too slow");
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() <= TIMEOUT, "{:?}", started.elapsed());
        drop(server);
        trickle.await.expect("the reader ends");
    }

    #[tokio::test(start_paused = true)]
    async fn each_flushed_response_should_have_its_own_deadline() {
        let (mut server, mut client) = pipe();
        let reader = tokio::spawn(async move {
            let mut taken = vec![0; 4 * PIPE];
            for _ in 0..2 {
                // Each response is taken 9 s after it started going out: in time, twice in a row.
                tokio::time::sleep(Duration::from_secs(9)).await;
                client.read_exact(&mut taken).await.expect("a whole response");
            }
        });
        for _ in 0..2 {
            server.write_all(&[b'x'; 4 * PIPE]).await.expect("taken in time");
            server.flush().await.expect("flushed");
        }
        reader.await.expect("the reader ends");
    }

    #[tokio::test]
    async fn vectored_writes_should_pass_through() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let stream = tokio::net::TcpStream::connect(listener.local_addr().expect("addr"))
            .await
            .expect("connect");
        assert!(stream.is_write_vectored());
        assert!(
            WriteDeadline::new(stream, TIMEOUT).is_write_vectored(),
            "hyper would copy every body into its own buffer"
        );
    }
}
