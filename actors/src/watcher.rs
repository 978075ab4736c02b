//! The watcher actor: one per [`WatchSpec`](crate::watch_spec::WatchSpec). It owns a task that
//! runs the `kube_runtime::watcher` stream, keeps the spec's reflector store current and
//! forwards every stream item; the actor maps changes that matter to keys for the work queue
//! and reports its connection state to health.
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
//! - A change is enqueued exactly when the spec's filter says it matters (deletions always);
//!   the filter sees the previous version from the store, read before the event is applied.
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
//! A panicking mapper fails the actor; a stream task that ends (panic in the filter, or the
//! stream finishing) makes the actor return `Err`. Either way the supervisor sees
//! `ActorFailed` and restarts it; the new incarnation re-lists, and the store writer passes to
//! it once the old task is gone (dropping the state aborts the task even when `post_stop`
//! does not run).

use std::{collections::HashSet, marker::PhantomData, sync::Arc, time::Duration};

use futures::StreamExt;
use kube::runtime::{
    WatchStreamExt,
    reflector::{ObjectRef, Store, store::Writer},
    watcher::{self, Event},
};
use ractor::{Actor, ActorProcessingErr, ActorRef};
use tokio::{task::JoinHandle, time::Instant};

use crate::{
    key::Cause,
    mailbox::{self, CountedRef, MailboxStats},
    seams::{KeySink, WatchReporter, WatchState},
    watch_filter,
    watch_spec::{SpecShared, Watched},
};

/// At most one routine state report per this interval (connection changes are immediate).
pub const REPORT_INTERVAL: Duration = Duration::from_secs(1);

/// Messages of a watcher actor.
#[derive(Debug)]
pub enum WatcherMsg<K> {
    /// Sent by the stream task for every item of the watch stream, in order.
    Stream(StreamItem<K>),
    /// Sent by the stream task's drop guard: the task is gone (it panicked or the stream
    /// ended). The actor fails so the supervisor restarts it.
    StreamEnded,
    /// Sent by the actor to itself after a throttled report: report the current state.
    FlushReport,
}

/// One watch stream item, as the stream task saw it against the store.
#[derive(Debug)]
pub enum StreamItem<K> {
    /// A (re)list started (first start, or after a 410).
    Relisting,
    /// The (re)list completed; `vanished` were in the store but not in the list.
    Listed {
        /// Objects deleted while the watch was down.
        vanished: Vec<Arc<K>>,
    },
    /// An object was listed, applied or deleted.
    Object {
        /// The object (for a delete: its last state).
        object: Arc<K>,
        /// The filter's verdict (always `true` for deletions).
        matters: bool,
        /// It came from a (re-)list, not from a watch event.
        listed: bool,
    },
    /// The stream failed; it retries after a backoff. Secret-free description.
    Failed(String),
}

/// Why a watcher actor fails on purpose.
#[derive(Debug, thiserror::Error)]
pub enum WatcherError {
    /// The stream task ended; the supervisor restarts the watcher.
    #[error("watch stream {0:?} ended")]
    StreamEnded(String),
}

/// What a watcher actor is started with (built by the spec's `WatchSource::spawn_linked`).
pub struct WatcherArgs<K: Watched> {
    /// The spec (shared with other incarnations).
    pub(crate) spec: Arc<SpecShared<K>>,
    /// Where keys go.
    pub(crate) sink: Arc<dyn KeySink>,
    /// Where states go.
    pub(crate) reporter: Arc<dyn WatchReporter>,
}

/// A watcher actor's state.
pub struct State<K: Watched> {
    /// The spec (mapper, stream parameters).
    spec: Arc<SpecShared<K>>,
    /// Where keys go.
    sink: Arc<dyn KeySink>,
    /// Where states go.
    reporter: Arc<dyn WatchReporter>,
    /// What we report.
    watch: WatchState,
    /// When to report.
    throttle: ReportThrottle,
    /// The stream task; dropping the state aborts it.
    stream: Option<AbortOnDrop>,
    /// Our own mailbox, counted, for the stream task and timers.
    mailbox: CountedRef<WatcherMsg<K>>,
}

/// The watcher actor for kind `K` (configuration comes in [`WatcherArgs`]).
pub struct Watcher<K>(PhantomData<fn() -> K>);

impl<K> Default for Watcher<K> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<K: Watched> Actor for Watcher<K> {
    type Msg = WatcherMsg<K>;
    type State = State<K>;
    type Arguments = WatcherArgs<K>;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        let stats = Arc::new(MailboxStats::default());
        mailbox::register(myself.get_id(), stats.clone());
        let watch = WatchState::starting(args.spec.name.clone());
        Ok(State {
            spec: args.spec,
            sink: args.sink,
            reporter: args.reporter,
            watch,
            throttle: ReportThrottle::default(),
            stream: None,
            mailbox: CountedRef::new(myself, stats),
        })
    }

    async fn post_start(
        &self,
        _: ActorRef<Self::Msg>,
        state: &mut State<K>,
    ) -> Result<(), ActorProcessingErr> {
        state.reporter.report(state.watch.clone());
        let task = tokio::spawn(run_stream(state.spec.clone(), state.mailbox.clone()));
        state.stream = Some(AbortOnDrop(task));
        Ok(())
    }

    async fn handle(
        &self,
        _: ActorRef<Self::Msg>,
        msg: Self::Msg,
        state: &mut State<K>,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            WatcherMsg::Stream(item) => state.on_item(item),
            WatcherMsg::StreamEnded => return Err(WatcherError::StreamEnded(state.watch.name.clone()).into()),
            WatcherMsg::FlushReport => state.on_flush(),
        }
        state.mailbox.stats().record_handled();
        Ok(())
    }

    async fn post_stop(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut State<K>,
    ) -> Result<(), ActorProcessingErr> {
        state.stream = None;
        mailbox::unregister(myself.get_id());
        Ok(())
    }
}

// === impl State ===

impl<K: Watched> State<K> {
    fn on_item(&mut self, item: StreamItem<K>) {
        let urgent = record(&mut self.watch, &item, std::time::SystemTime::now());
        match &item {
            StreamItem::Object {
                object,
                matters: true,
                listed,
            } => self.enqueue(object, if *listed { Cause::Listed } else { Cause::Event }),
            StreamItem::Listed { vanished } => vanished
                .iter()
                .for_each(|object| self.enqueue(object, Cause::Event)),
            StreamItem::Object { matters: false, .. } | StreamItem::Relisting | StreamItem::Failed(_) => {}
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

    fn enqueue(&self, object: &K, cause: Cause) {
        for key in (self.spec.mapper)(object) {
            self.sink.enqueue(key, cause);
        }
    }
}

/// Fold one stream item into the reported state; `true` when the change must be reported now
/// (first sync, connection state changed, or an error).
fn record<K>(watch: &mut WatchState, item: &StreamItem<K>, at: std::time::SystemTime) -> bool {
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

/// Tells the actor the stream task is gone, however it ends.
struct EndGuard<K: Watched>(CountedRef<WatcherMsg<K>>);

impl<K: Watched> Drop for EndGuard<K> {
    fn drop(&mut self) {
        // Fails when the actor is already gone (it aborted us): then nobody needs to know.
        let _ = self.0.cast(WatcherMsg::StreamEnded);
    }
}

/// The stream task: owns the watch stream and the store writer, forwards every item.
async fn run_stream<K: Watched>(spec: Arc<SpecShared<K>>, mailbox: CountedRef<WatcherMsg<K>>) {
    let _end = EndGuard(mailbox.clone());
    let mut writer = spec.writer.clone().lock_owned().await;
    let store = writer.as_reader();
    let mut stream = std::pin::pin!(
        watcher::watcher(spec.api.clone(), spec.config.clone())
            .default_backoff()
            .modify(drop_bookkeeping::<K>)
    );
    let mut relist = None;
    while let Some(item) = stream.next().await {
        let item = match item {
            Ok(event) => observe(&spec, &mut writer, &store, &mut relist, event),
            Err(error) => StreamItem::Failed(describe(&error)),
        };
        if mailbox.cast(WatcherMsg::Stream(item)).is_err() {
            return;
        }
    }
}

/// The annotation `kubectl apply` keeps: a copy of the whole applied object (for a Secret, its
/// data), never read by a controller.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Forgets an object's write bookkeeping, managedFields and kubectl's last-applied copy (see
/// the module's guarantees).
fn drop_bookkeeping<K: kube::Resource>(object: &mut K) {
    let meta = object.meta_mut();
    meta.managed_fields = None;
    if let Some(annotations) = meta.annotations.as_mut() {
        annotations.remove(LAST_APPLIED);
    }
}

/// Judge `event` against the store (before applying it), then apply it.
fn observe<K: Watched>(
    spec: &SpecShared<K>,
    writer: &mut Writer<K>,
    store: &Store<K>,
    relist: &mut Option<HashSet<ObjectRef<K>>>,
    event: Event<K>,
) -> StreamItem<K> {
    let item = match &event {
        Event::Init => {
            *relist = Some(HashSet::new());
            StreamItem::Relisting
        }
        Event::InitApply(object) | Event::Apply(object) => {
            let key = ObjectRef::from_obj(object);
            let previous = store.get(&key);
            if let (Event::InitApply(_), Some(listed)) = (&event, relist.as_mut()) {
                listed.insert(key);
            }
            StreamItem::Object {
                matters: (spec.matters)(previous.as_deref(), object),
                object: Arc::new(object.clone()),
                listed: matches!(event, Event::InitApply(_)),
            }
        }
        Event::Delete(object) => StreamItem::Object {
            object: Arc::new(object.clone()),
            matters: true,
            listed: false,
        },
        Event::InitDone => {
            let listed = relist.take().unwrap_or_default();
            let vanished = watch_filter::vanished(store.state(), &listed, |o| ObjectRef::from_obj(&**o));
            StreamItem::Listed { vanished }
        }
    };
    writer.apply_watcher_event(&event);
    item
}

/// A secret-free description of a stream error: variant, HTTP code and reason only (API
/// messages may quote object content).
fn describe(error: &watcher::Error) -> String {
    let api = |e: &kube::Error| match e {
        kube::Error::Api(status) => format!("{} {}", status.code, status.reason),
        _ => "transport error".to_owned(),
    };
    match error {
        watcher::Error::InitialListFailed(e) => format!("initial list failed: {}", api(e)),
        watcher::Error::WatchStartFailed(e) => format!("watch start failed: {}", api(e)),
        watcher::Error::WatchError(status) => format!("watch error: {} {}", status.code, status.reason),
        watcher::Error::WatchFailed(e) => format!("watch failed: {}", api(e)),
        watcher::Error::NoResourceVersion => "no resourceVersion in watch result".to_owned(),
    }
}

#[cfg(test)]
mod tests;
