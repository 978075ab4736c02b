//! One rendered `/metrics` body per format, shared by every scrape that comes within a second of
//! its render (issue 34 point 5): a flood of scrapes, or 64 slow readers each holding a
//! connection, costs one body, not one per connection.
//!
//! # Guarantees
//! - Each format is rendered at most once per [`RenderCache::MAX_AGE`]: a scrape less than that
//!   after a render ended gets the very same bytes (a [`Bytes`] handle, not a copy), and scrapes
//!   that arrive while a render runs wait for that render instead of starting their own.
//! - A render runs on the blocking pool, so the server's thread keeps accepting, timing out and
//!   evicting connections meanwhile; a render whose scraper went away still finishes and is
//!   served to the scrapes waiting for it.
//! - The cache lets go of a body [`RenderCache::MAX_AGE`] after its render: between scrapes it
//!   holds nothing, and a body is freed once the last connection writing it is done with it.
//! - A render that fails is not kept: the next scrape renders again.
//!
//! Nothing here knows HTTP: a format in, bytes out (`routes.rs` puts them in a response).

use std::{fmt, sync::Arc, time::Duration};

use bytes::Bytes;
use tokio::{sync::Mutex, time::Instant};

use super::exposition::Format;

/// Renders the body of a format into a buffer of the given starting capacity.
type Render = dyn Fn(Format, usize) -> Result<String, fmt::Error> + Send + Sync;

/// Why no body could be served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// The encoder failed.
    #[error("encoding metrics failed: {0}")]
    Encoding(fmt::Error),
    /// The render task ended without a body (it panicked, or the server is stopping).
    #[error("rendering metrics did not finish")]
    Interrupted,
}

/// The last body of each format, and the lock a render holds while it runs.
pub struct RenderCache {
    render: Arc<Render>,
    /// One per format, in [`Format::index`] order. Locked for the whole of a render, so the
    /// scrapes behind it wait for its body; a `tokio` mutex because they wait across an
    /// `.await`.
    slots: [Arc<Mutex<Slot>>; 2],
}

/// What the cache keeps of one format.
#[derive(Debug, Default)]
struct Slot {
    /// The last body and when its render ended, while it is younger than
    /// [`RenderCache::MAX_AGE`] (an expiry task clears it then).
    body: Option<(Bytes, Instant)>,
    /// The last body's length: the next render's starting capacity, so a body of about the
    /// same size is written without its buffer doubling on the way.
    last_len: usize,
}

impl RenderCache {
    /// How long a rendered body is served to later scrapes.
    pub const MAX_AGE: Duration = Duration::from_secs(1);

    /// A cache over `render` (typically [`super::exposition::encode`] of the registry).
    pub fn new(render: impl Fn(Format, usize) -> Result<String, fmt::Error> + Send + Sync + 'static) -> Self {
        Self {
            render: Arc::new(render),
            slots: Default::default(),
        }
    }

    /// The body of `format`: the cached one if it is younger than [`RenderCache::MAX_AGE`],
    /// else a new render (or the one in progress).
    ///
    /// # Errors
    /// [`RenderError`] when the render failed; nothing is cached then.
    pub async fn body(&self, format: Format) -> Result<Bytes, RenderError> {
        let slot = self.slots[format.index()].clone();
        let mut held = slot.clone().lock_owned().await;
        if let Some((body, rendered_at)) = &held.body
            && Instant::now() < *rendered_at + Self::MAX_AGE
        {
            return Ok(body.clone());
        }
        let render = self.render.clone();
        // The render, and the lock with it, belong to a task of their own: if this scrape goes
        // away, the scrapes queued behind the lock still get the body instead of a second render.
        let rendering = tokio::spawn(async move {
            let capacity = held.last_len + held.last_len / 16;
            let body = match tokio::task::spawn_blocking(move || render(format, capacity)).await {
                Ok(Ok(text)) => Bytes::from(text),
                Ok(Err(error)) => return Err(RenderError::Encoding(error)),
                Err(_) => return Err(RenderError::Interrupted),
            };
            let rendered_at = Instant::now();
            held.last_len = body.len();
            held.body = Some((body.clone(), rendered_at));
            drop(held);
            tokio::spawn(expire(slot, rendered_at));
            Ok(body)
        });
        rendering.await.map_err(|_| RenderError::Interrupted)?
    }
}

/// Drops the body rendered at `rendered_at` once it is too old to be served, unless a newer one
/// replaced it already.
async fn expire(slot: Arc<Mutex<Slot>>, rendered_at: Instant) {
    tokio::time::sleep_until(rendered_at + RenderCache::MAX_AGE).await;
    let mut held = slot.lock().await;
    if held.body.as_ref().is_some_and(|(_, at)| *at == rendered_at) {
        held.body = None;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{
        Mutex as StdMutex,
        atomic::{AtomicUsize, Ordering},
        mpsc,
    };

    use super::*;

    /// A cache whose renders are counted and answer `format:render number`.
    fn counting() -> (RenderCache, Arc<AtomicUsize>) {
        let renders = Arc::new(AtomicUsize::new(0));
        let counted = renders.clone();
        let cache = RenderCache::new(move |format, _| {
            let number = counted.fetch_add(1, Ordering::SeqCst) + 1;
            Ok(format!("{format:?}:{number}"))
        });
        (cache, renders)
    }

    #[tokio::test]
    async fn concurrent_scrapes_should_share_one_render() {
        const SCRAPES: usize = 32;
        let renders = Arc::new(AtomicUsize::new(0));
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let started_tx = StdMutex::new(Some(started_tx));
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let release_rx = StdMutex::new(release_rx);
        let counted = renders.clone();
        let cache = Arc::new(RenderCache::new(move |_, _| {
            counted.fetch_add(1, Ordering::SeqCst);
            if let Some(started) = started_tx.lock().expect("lock").take() {
                // The test may be gone already; nobody to tell then.
                let _ = started.send(());
            }
            // Each render waits for the test's go: the scrapes all arrive while the first runs.
            release_rx.lock().expect("lock").recv().expect("released");
            Ok("body".to_owned())
        }));
        let scrapes: Vec<_> = (0..SCRAPES)
            .map(|_| {
                let cache = cache.clone();
                tokio::spawn(async move { cache.body(Format::Text).await })
            })
            .collect();
        started_rx.await.expect("a render started");
        // Every scrape task runs up to its first wait before this task is polled again.
        for _ in 0..SCRAPES {
            tokio::task::yield_now().await;
        }
        for _ in 0..SCRAPES {
            release_tx.send(()).expect("the renders listen");
        }
        let mut bodies = Vec::new();
        for scrape in scrapes {
            bodies.push(scrape.await.expect("joined").expect("rendered"));
        }
        assert_eq!(
            renders.load(Ordering::SeqCst),
            1,
            "one render for {SCRAPES} scrapes"
        );
        assert!(
            bodies.iter().all(|body| body.as_ptr() == bodies[0].as_ptr()),
            "every scrape holds the same bytes, not a copy"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_should_be_served_for_a_second_then_rendered_again() {
        let (cache, renders) = counting();
        let first = cache.body(Format::Text).await.expect("rendered");
        tokio::time::advance(Duration::from_millis(999)).await;
        let again = cache.body(Format::Text).await.expect("cached");
        assert_eq!(renders.load(Ordering::SeqCst), 1);
        assert_eq!(again.as_ptr(), first.as_ptr(), "the same bytes");
        tokio::time::advance(Duration::from_millis(2)).await;
        let next = cache.body(Format::Text).await.expect("rendered");
        assert_eq!(
            renders.load(Ordering::SeqCst),
            2,
            "older than a second: rendered again"
        );
        assert_eq!(next, "Text:2");
    }

    #[tokio::test(start_paused = true)]
    async fn each_format_should_have_its_own_body() {
        let (cache, renders) = counting();
        assert_eq!(cache.body(Format::Text).await.expect("text"), "Text:1");
        assert_eq!(
            cache.body(Format::OpenMetrics).await.expect("openmetrics"),
            "OpenMetrics:2"
        );
        assert_eq!(cache.body(Format::Text).await.expect("text"), "Text:1");
        assert_eq!(renders.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn the_cache_should_let_go_of_a_body_once_it_is_too_old() {
        let (cache, _) = counting();
        let body = cache.body(Format::Text).await.expect("rendered");
        assert_eq!(Arc::strong_count(&cache.slots[1]), 2, "the expiry task waits");
        tokio::time::sleep(RenderCache::MAX_AGE).await;
        // Let the expiry task take the lock.
        while Arc::strong_count(&cache.slots[1]) > 1 {
            tokio::task::yield_now().await;
        }
        assert!(
            cache.slots[1].lock().await.body.is_none(),
            "nothing held between scrapes"
        );
        assert!(body.is_unique(), "the scrape's handle is the last one");
    }

    #[tokio::test]
    async fn a_failed_render_should_not_be_kept() {
        let renders = Arc::new(AtomicUsize::new(0));
        let counted = renders.clone();
        let cache = RenderCache::new(move |_, _| {
            if counted.fetch_add(1, Ordering::SeqCst) == 0 {
                Err(fmt::Error)
            } else {
                Ok("body".to_owned())
            }
        });
        assert_eq!(
            cache.body(Format::Text).await,
            Err(RenderError::Encoding(fmt::Error))
        );
        assert_eq!(cache.body(Format::Text).await.expect("rendered"), "body");
        assert_eq!(renders.load(Ordering::SeqCst), 2);
    }
}
