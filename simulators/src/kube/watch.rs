//! Watch streams: replay from a resourceVersion, synthetic initial events, periodic and
//! initial-events-end bookmarks, selector transitions, 410 Gone, timeouts and faults.
//!
//! Each watch runs in its own task that reads the history ring (see [`Store`]) whenever
//! the cluster resourceVersion moves, and writes newline-delimited JSON events into a
//! bounded channel that is the HTTP response body.
//!
//! # Guarantees
//! - Events of one watch are in resourceVersion order, with no gap: a watcher that falls
//!   further behind than the retained history gets an `ERROR` event with a 410 `Expired`
//!   Status (HTTP 200, as the real server sends it) and the stream ends.
//! - With a selector, an object that stops matching is sent as `DELETED`, one that starts
//!   matching as `ADDED` (the real watch cache does the same).
//! - `resourceVersion` unset or "0" sends the current objects as `ADDED` first.
//!   `sendInitialEvents=true` does the same and then a BOOKMARK annotated
//!   `k8s.io/initial-events-end: "true"` (requires `allowWatchBookmarks`).
//! - The stream ends on `timeoutSeconds`, server shutdown, [`Faults::drop_watches`] or
//!   when the client goes away. While frozen it delivers nothing (bookmarks included).
//!
//! [`Store`]: super::store::Store
//! [`Faults::drop_watches`]: super::faults::Faults::drop_watches

use super::{
    api::Target,
    errors::ApiError,
    metadata::{View, render},
    selectors::Selectors,
    state::Shared,
    store::{Change, EventType},
};
use bytes::Bytes;
use serde_json::{Value, json};
use std::{
    convert::Infallible,
    pin::Pin,
    sync::{Arc, atomic::Ordering},
    task::{Context, Poll},
    time::Duration,
};
use tokio::sync::mpsc;

/// Watch-specific query parameters.
#[derive(Debug, Clone, Default)]
pub struct WatchQuery {
    /// Label and field selectors.
    pub selectors: Selectors,
    /// `resourceVersion`.
    pub resource_version: Option<String>,
    /// `sendInitialEvents=true`.
    pub send_initial_events: bool,
    /// `allowWatchBookmarks=true`.
    pub bookmarks: bool,
    /// `timeoutSeconds`.
    pub timeout: Option<Duration>,
}

/// The streaming response body of a watch.
#[derive(Debug)]
pub struct WatchBody(mpsc::Receiver<Bytes>);

impl futures::Stream for WatchBody {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx).map(|o| o.map(Ok))
    }
}

/// Where a watch starts.
enum Start {
    /// Send these objects as ADDED, then changes after `rv`.
    Initial {
        objects: Vec<Arc<Value>>,
        rv: u64,
        end_bookmark: bool,
    },
    /// Replay changes after `rv`.
    From(u64),
    /// Send a 410 and end.
    Gone(ApiError),
}

/// Events per channel slot batch; the channel bounds how far a slow client lags.
const CHANNEL_DEPTH: usize = 256;

/// Starts a watch and returns its response body.
///
/// # Errors
/// 400 for a malformed `resourceVersion`.
pub fn start(shared: Arc<Shared>, t: Target, q: WatchQuery, view: View) -> Result<WatchBody, ApiError> {
    let start = if take_forced_gone(&shared) {
        let rv = shared.read().rv();
        Start::Gone(ApiError::expired(rv.saturating_sub(1), rv))
    } else {
        starting_point(&shared, &t, &q)?
    };
    let (tx, rx) = mpsc::channel(CHANNEL_DEPTH);
    tokio::spawn(
        WatchTask {
            shared,
            t,
            q,
            view,
            tx,
        }
        .run(start),
    );
    Ok(WatchBody(rx))
}

fn take_forced_gone(shared: &Shared) -> bool {
    shared
        .force_gone
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

fn starting_point(shared: &Shared, t: &Target, q: &WatchQuery) -> Result<Start, ApiError> {
    let store = shared.read();
    let rv = q.resource_version.as_deref().unwrap_or_default();
    if rv.is_empty() || rv == "0" || q.send_initial_events {
        let objects = store
            .range(&t.rt.id(), t.namespace.as_deref(), None)
            .filter(|(_, o)| q.selectors.matches(o))
            .map(|(_, o)| o.clone())
            .collect();
        return Ok(Start::Initial {
            objects,
            rv: store.rv(),
            end_bookmark: q.send_initial_events && q.bookmarks,
        });
    }
    let n: u64 = rv
        .parse()
        .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv:?}")))?;
    if n < store.floor() {
        return Ok(Start::Gone(ApiError::expired(n, store.floor())));
    }
    Ok(Start::From(n))
}

struct WatchTask {
    shared: Arc<Shared>,
    t: Target,
    q: WatchQuery,
    view: View,
    tx: mpsc::Sender<Bytes>,
}

/// Why the delivery loop stopped waiting.
enum Wake {
    Changed,
    Bookmark,
    Stop,
}

impl WatchTask {
    async fn run(self, start: Start) {
        let mut changed = self.shared.changed.subscribe();
        let mut dropped = self.shared.drop_watches.subscribe();
        let mut last = match start {
            Start::Gone(e) => {
                let _ = self
                    .send_raw(&json!({ "type": "ERROR", "object": e.to_status() }))
                    .await; // ending anyway
                return;
            }
            Start::From(rv) => rv,
            Start::Initial {
                objects,
                rv,
                end_bookmark,
            } => {
                for o in objects {
                    if !self.send("ADDED", &o).await {
                        return;
                    }
                }
                if end_bookmark && !self.bookmark(rv, true).await {
                    return;
                }
                rv
            }
        };
        let deadline = tokio::time::Instant::now() + self.q.timeout.unwrap_or(Duration::from_secs(30 * 60));
        let mut ticker = tokio::time::interval(self.shared.bookmark_interval);
        ticker.tick().await;
        loop {
            if !self.wait_while_frozen(&mut dropped).await {
                return;
            }
            let batch = {
                let store = self.shared.read();
                store
                    .changes_since(&self.t.rt.id(), last)
                    .map(|c| (c, store.rv()))
            };
            match batch {
                Err(floor) => {
                    let _ = self
                        .send_raw(
                            &json!({ "type": "ERROR", "object": ApiError::expired(last, floor).to_status() }),
                        )
                        .await; // ending anyway
                    return;
                }
                Ok((changes, rv)) => {
                    for c in changes {
                        if let Some(ty) = self.translate(&c)
                            && !self.send_change(ty, &c).await
                        {
                            return;
                        }
                    }
                    last = rv;
                }
            }
            let wake = tokio::select! {
                () = self.shared.shutdown.cancelled() => Wake::Stop,
                _ = dropped.changed() => Wake::Stop,
                () = tokio::time::sleep_until(deadline) => Wake::Stop,
                () = self.tx.closed() => Wake::Stop,
                _ = ticker.tick(), if self.q.bookmarks => Wake::Bookmark,
                r = changed.changed() => if r.is_ok() { Wake::Changed } else { Wake::Stop },
            };
            match wake {
                Wake::Stop => return,
                Wake::Bookmark if !self.shared.faults.borrow().frozen => {
                    if !self.bookmark(last, false).await {
                        return;
                    }
                }
                Wake::Bookmark | Wake::Changed => {}
            }
        }
    }

    /// Waits out a freeze; false when the watch must end meanwhile.
    async fn wait_while_frozen(&self, dropped: &mut tokio::sync::watch::Receiver<u64>) -> bool {
        let mut faults = self.shared.faults.subscribe();
        tokio::select! {
            r = faults.wait_for(|c| !c.frozen) => r.is_ok(),
            () = self.shared.shutdown.cancelled() => false,
            _ = dropped.changed() => false,
            () = self.tx.closed() => false,
        }
    }

    /// The event a change produces for this watch, if any (namespace and selector
    /// filtering, with selector transitions).
    fn translate(&self, c: &Change) -> Option<&'static str> {
        let in_scope = |o: &Value| {
            self.t
                .namespace
                .as_deref()
                .is_none_or(|ns| o.pointer("/metadata/namespace").and_then(Value::as_str) == Some(ns))
                && self.q.selectors.matches(o)
        };
        let now = in_scope(&c.object);
        let before = c.previous.as_deref().is_some_and(in_scope);
        match (c.kind, before, now) {
            (EventType::Added, _, true) => Some("ADDED"),
            (EventType::Modified, true, true) => Some("MODIFIED"),
            (EventType::Modified, false, true) => Some("ADDED"),
            (EventType::Modified, true, false) | (EventType::Deleted, true, _) => Some("DELETED"),
            (EventType::Added, _, false)
            | (EventType::Modified, false, false)
            | (EventType::Deleted, false, _) => None,
        }
    }

    /// Sends a stored change; in the full view at the stored version the object's JSON is
    /// shared with every other watcher instead of re-rendered (not for custom resources,
    /// which get their schema's defaults when read).
    async fn send_change(&self, ty: &str, c: &Change) -> bool {
        let stored_version = c.object.get("apiVersion").and_then(Value::as_str);
        if self.view != View::Full
            || self.t.rt.is_custom()
            || stored_version != Some(&self.t.rt.api_version(&self.t.version))
        {
            return self.send(ty, &c.object).await;
        }
        let object = c.object_json();
        let mut line = Vec::with_capacity(object.len() + 32);
        line.extend_from_slice(b"{\"type\":\"");
        line.extend_from_slice(ty.as_bytes());
        line.extend_from_slice(b"\",\"object\":");
        line.extend_from_slice(object);
        line.extend_from_slice(b"}\n");
        self.tx.send(Bytes::from(line)).await.is_ok()
    }

    async fn send(&self, ty: &str, obj: &Value) -> bool {
        let rendered = render(obj, &self.t.rt, &self.t.version, self.view);
        self.send_raw(&json!({ "type": ty, "object": rendered })).await
    }

    async fn bookmark(&self, rv: u64, initial_events_end: bool) -> bool {
        let mut meta = json!({ "resourceVersion": rv.to_string(), "creationTimestamp": null });
        if initial_events_end {
            meta["annotations"] = json!({ "k8s.io/initial-events-end": "true" });
        }
        let object = match self.view {
            View::Metadata => {
                json!({ "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta })
            }
            View::Full | View::Table { .. } => {
                json!({ "kind": self.t.rt.kind, "apiVersion": self.t.rt.api_version(&self.t.version), "metadata": meta })
            }
        };
        let sent = self
            .send_raw(&json!({ "type": "BOOKMARK", "object": object }))
            .await;
        if sent {
            self.shared.bookmarks_sent.fetch_add(1, Ordering::SeqCst);
        }
        sent
    }

    async fn send_raw(&self, event: &Value) -> bool {
        let mut line = serde_json::to_vec(event).expect("watch events serialise");
        line.push(b'\n');
        self.tx.send(Bytes::from(line)).await.is_ok()
    }
}
