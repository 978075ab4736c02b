//! The watcher actor: one per [`WatchSpec`](crate::watch_spec::WatchSpec). It owns a task that
//! runs the `kube_runtime::watcher` stream, keeps the spec's store current, maps the
//! changes that matter to keys and forwards every stream item; the actor hands the keys to the
//! work queue and reports its connection state to health.
//!
//! Who sends to it: its stream task (`Stream`, and `StreamEnded` from the task's drop guard) and
//! itself (`FlushReport`). What it sends: keys to the [`KeySink`], [`WatchState`]s to the
//! [`WatchReporter`].
//!
//! # Guarantees
//! - The stream never runs inside `handle`: stop and supervision messages are served promptly.
//! - Bookmarks and `default_backoff()`: errors are retried with exponential backoff; a 410
//!   re-lists, and objects missing from the re-list are treated as deleted (their keys are
//!   enqueued: the deletion event was lost).
//! - A change is enqueued exactly when a route's filter says it matters to that route
//!   (deletions always, to every route); the filters see the previous version from the store,
//!   read before the event is applied.
//! - Objects reach neither the filter, the mapper nor the store with `metadata.managedFields`:
//!   they are dropped from every listed, applied and deleted object as it leaves the watch
//!   stream (as kube-rs recommends: a real API server sends one entry per field manager on
//!   every object, often more bytes than the rest of the metadata, and nothing here reads
//!   them). Filters therefore never see managedFields churn. The same goes for the
//!   `kubectl.kubernetes.io/last-applied-configuration` annotation: a copy of the whole applied
//!   object, which for a Secret watched as metadata would bring its data into memory.
//! - The reported state is secret-free: errors are reduced to variant, HTTP code and reason.
//! - Reports are throttled to one per [`REPORT_INTERVAL`] (a trailing report follows a burst);
//!   the first completed list, connection changes and errors are reported at once.
//! - `synced` (what readiness checks) turns true at the first completed list and stays true
//!   for the life of this incarnation: stream errors are retried by the stream itself, which
//!   resumes from its resourceVersion or re-lists.
//!
//! # Caveats
//! `connected` is informative: it turns false on a stream error and true again at the next
//! completed list. An error the watcher recovers from without a re-list (a failed watch start
//! followed by a good one) leaves no trace in the stream, so it may keep saying
//! "disconnected" while the watch works; `last_error` and `errors` say why. That is why
//! readiness looks at `synced`, not `connected`.
//!
//! # Failure
//! A stream task that ends (a panic in the filter or the mapper, or the stream finishing)
//! makes the actor return `Err` saying which: the supervisor sees `ActorFailed` and restarts
//! it. The new incarnation re-lists, and the store writer passes to it once the old task is
//! gone (dropping the state aborts the task even when `post_stop` does not run). The mapper
//! runs after the store took the object, so the re-list does not map it again.

use std::{marker::PhantomData, sync::Arc, time::Duration};

use futures::future::BoxFuture;
use ractor::{ActorCell, ActorProcessingErr, SpawnErr};
use tokio::{task::JoinHandle, time::Instant};

use self::stream::{Forward, StreamItem};
use crate::{
    directory::ActorKind,
    key::{Cause, ObjectKey},
    mailbox::CountedRef,
    seams::{KeySink, WatchSource, WatchStart},
    spawn::{RuntimeActor, Spawner},
    watch_spec::{SpecShared, WatchSpec, Watched},
    watch_state::{WatchReporter, WatchState},
};

/// At most one routine state report per this interval (connection changes are immediate).
pub(crate) const REPORT_INTERVAL: Duration = Duration::from_secs(1);

/// Messages of a watcher actor.
#[derive(Debug)]
pub(crate) enum WatcherMsg {
    /// Sent by the stream task for every item of the watch stream, in order.
    Stream(StreamItem),
    /// Sent by the stream task's drop guard: the task is gone (it `panicked`, or the stream
    /// ended). The actor fails so the supervisor restarts it.
    StreamEnded { panicked: bool },
    /// Sent by the actor to itself after a throttled report: report the current state.
    FlushReport,
}

/// Why a watcher actor fails on purpose.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WatcherError {
    /// The stream task ended; the supervisor restarts the watcher.
    #[error("watch stream {0:?} ended")]
    StreamEnded(String),
    /// The stream task panicked (in the spec's filter or mapper); the supervisor restarts the
    /// watcher.
    #[error("watch stream {0:?} panicked in its filter or mapper")]
    StreamPanicked(String),
}

/// What a watcher actor is started with (built by [`WatchSource::spawn_linked`] below).
pub(crate) struct WatcherArgs<K: Watched> {
    /// The spec (shared with other incarnations).
    spec: Arc<SpecShared<K>>,
    /// Where keys go.
    sink: Arc<dyn KeySink>,
    /// Where states go.
    reporter: Arc<dyn WatchReporter>,
    /// Whether a term begins (the first list maps everything) or the watcher is replaced.
    start: WatchStart,
}

/// A spec becomes a watcher actor, registered under the spec's name.
impl<K: Watched> WatchSource for WatchSpec<K> {
    fn name(&self) -> &str {
        &self.shared().name
    }

    fn spawn_linked(
        &self,
        spawner: &Spawner,
        sink: Arc<dyn KeySink>,
        reporter: Arc<dyn WatchReporter>,
        start: WatchStart,
    ) -> BoxFuture<'static, Result<ActorCell, SpawnErr>> {
        let args = WatcherArgs {
            spec: self.shared().clone(),
            sink,
            reporter,
            start,
        };
        let (spawner, name) = (spawner.clone(), self.shared().name.clone());
        Box::pin(async move {
            let actor = spawner
                .spawn(name, ActorKind::Watcher, Watcher::<K>::default(), args)
                .await?;
            Ok(actor.cell())
        })
    }
}

/// The stream task forwards into the actor's mailbox.
impl Forward for CountedRef<WatcherMsg> {
    fn item(&self, item: StreamItem) -> bool {
        self.cast(WatcherMsg::Stream(item)).is_ok()
    }

    fn ended(&self, panicked: bool) {
        // Fails when the actor is already gone (it aborted us): then nobody needs to know.
        let _ = self.cast(WatcherMsg::StreamEnded { panicked });
    }
}

/// A watcher actor's state.
pub(crate) struct State<K: Watched> {
    /// The spec (stream parameters, mapper and filter).
    spec: Arc<SpecShared<K>>,
    /// Where keys go.
    sink: Arc<dyn KeySink>,
    /// Where states go.
    reporter: Arc<dyn WatchReporter>,
    /// Why this incarnation started (handed to its stream task).
    start: WatchStart,
    /// What we report.
    watch: WatchState,
    /// When to report.
    throttle: ReportThrottle,
    /// The stream task; dropping the state aborts it.
    stream: Option<AbortOnDrop>,
    /// Our own mailbox, counted, for the stream task and timers.
    mailbox: CountedRef<WatcherMsg>,
}

/// The watcher actor for kind `K` (configuration comes in [`WatcherArgs`]).
pub(crate) struct Watcher<K>(PhantomData<fn() -> K>);

impl<K> Default for Watcher<K> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<K: Watched> RuntimeActor for Watcher<K> {
    type Msg = WatcherMsg;
    type State = State<K>;
    type Arguments = WatcherArgs<K>;

    async fn pre_start(
        &self,
        myself: CountedRef<WatcherMsg>,
        args: WatcherArgs<K>,
    ) -> Result<State<K>, ActorProcessingErr> {
        let watch = WatchState::starting(args.spec.name.clone());
        Ok(State {
            spec: args.spec,
            sink: args.sink,
            reporter: args.reporter,
            start: args.start,
            watch,
            throttle: ReportThrottle::default(),
            stream: None,
            mailbox: myself,
        })
    }

    async fn post_start(
        &self,
        _: CountedRef<WatcherMsg>,
        state: &mut State<K>,
    ) -> Result<(), ActorProcessingErr> {
        state.reporter.report(state.watch.clone());
        let task = tokio::spawn(stream::run(
            state.spec.clone(),
            state.mailbox.clone(),
            state.start,
        ));
        state.stream = Some(AbortOnDrop(task));
        Ok(())
    }

    async fn handle(
        &self,
        _: CountedRef<WatcherMsg>,
        msg: WatcherMsg,
        state: &mut State<K>,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            WatcherMsg::Stream(item) => state.on_item(item),
            WatcherMsg::StreamEnded { panicked } => {
                let name = state.watch.name.clone();
                let error = if panicked {
                    WatcherError::StreamPanicked(name)
                } else {
                    WatcherError::StreamEnded(name)
                };
                return Err(error.into());
            }
            WatcherMsg::FlushReport => state.on_flush(),
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _: CountedRef<WatcherMsg>,
        state: &mut State<K>,
    ) -> Result<(), ActorProcessingErr> {
        state.stream = None;
        Ok(())
    }
}

// === impl State ===

impl<K: Watched> State<K> {
    fn on_item(&mut self, item: StreamItem) {
        let urgent = record(&mut self.watch, &item, std::time::SystemTime::now());
        match item {
            StreamItem::Object { keys } => {
                for (key, cause) in keys {
                    self.sink.enqueue(key, cause);
                }
            }
            StreamItem::Listed { vanished } => self.enqueue(vanished, Cause::Event),
            StreamItem::Relisting | StreamItem::Failed(_) => {}
        }
        match self.throttle.on_change(urgent, Instant::now()) {
            ReportNow::Send => self.reporter.report(self.watch.clone()),
            ReportNow::FlushAfter(delay) => {
                self.mailbox.send_after(delay, || WatcherMsg::FlushReport);
            }
            ReportNow::Nothing => {}
        }
    }

    fn on_flush(&mut self) {
        self.throttle.on_flush(Instant::now());
        self.reporter.report(self.watch.clone());
    }

    fn enqueue(&self, keys: Vec<ObjectKey>, cause: Cause) {
        for key in keys {
            self.sink.enqueue(key, cause);
        }
    }
}

/// Fold one stream item into the reported state; `true` when the change must be reported now
/// (first sync, connection state changed, or an error).
fn record(watch: &mut WatchState, item: &StreamItem, at: std::time::SystemTime) -> bool {
    watch.events += 1;
    watch.last_event_at = Some(at);
    match item {
        StreamItem::Listed { .. } => {
            let first_sync = !std::mem::replace(&mut watch.synced, true);
            let reconnected = !std::mem::replace(&mut watch.connected, true);
            first_sync || reconnected
        }
        StreamItem::Failed(error) => {
            watch.errors += 1;
            watch.last_error = Some(error.clone());
            watch.connected = false;
            true
        }
        StreamItem::Relisting | StreamItem::Object { .. } => false,
    }
}

/// What to do with a state change.
#[derive(Debug, PartialEq, Eq)]
enum ReportNow {
    /// Report it now.
    Send,
    /// Report it in a trailing flush after this delay.
    FlushAfter(Duration),
    /// A flush is already scheduled and will carry it.
    Nothing,
}

/// Limits routine reports to one per [`REPORT_INTERVAL`].
#[derive(Debug, Default)]
struct ReportThrottle {
    /// When the last report went out.
    last_sent: Option<Instant>,
    /// A `FlushReport` is scheduled.
    flush_pending: bool,
}

impl ReportThrottle {
    fn on_change(&mut self, urgent: bool, now: Instant) -> ReportNow {
        match self.last_sent {
            Some(last) if !urgent && now < last + REPORT_INTERVAL => {
                if std::mem::replace(&mut self.flush_pending, true) {
                    ReportNow::Nothing
                } else {
                    ReportNow::FlushAfter(last + REPORT_INTERVAL - now)
                }
            }
            Some(_) | None => {
                self.last_sent = Some(now);
                ReportNow::Send
            }
        }
    }

    fn on_flush(&mut self, now: Instant) {
        self.flush_pending = false;
        self.last_sent = Some(now);
    }
}

/// Aborts the task when dropped (with the actor's state, even if `post_stop` never runs).
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

mod stream;
#[cfg(test)]
mod tests;
