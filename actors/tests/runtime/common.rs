//! Test doubles for the runtime seams, a supervisor that records what its children do, and a
//! bounded polling helper. Shared by the leadership and watcher tests.
// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use std::{
    sync::{Arc, Mutex},
    time::{Duration, SystemTime},
};

use controller_actors::{Cause, KeySink, LeadershipHooks, ObjectKey, WatchReporter, WatchState};
use ferrvault_sim::testkit::poll_until;
use futures::{FutureExt, future::BoxFuture};
use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};

/// Polls `check` until it returns `Some`, or panics after `deadline` saying `what` did not happen
/// (the shared [`poll_until`] for the synchronous checks of the runtime's test doubles).
pub async fn eventually<T>(deadline: Duration, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    poll_until(what, deadline, || {
        std::future::ready(check().ok_or_else(|| "not yet".to_owned()))
    })
    .await
}

/// A [`KeySink`] that records every key and its cause in order.
#[derive(Default)]
pub struct RecordingSink {
    keys: Mutex<Vec<(ObjectKey, Cause)>>,
}

impl RecordingSink {
    /// Every key enqueued so far, with its cause, in order.
    pub fn entries(&self) -> Vec<(ObjectKey, Cause)> {
        self.keys.lock().expect("sink lock").clone()
    }

    /// Every key enqueued so far.
    pub fn keys(&self) -> Vec<ObjectKey> {
        let keys = self.keys.lock().expect("sink lock");
        keys.iter().map(|(key, _)| key.clone()).collect()
    }

    /// The causes `name` was enqueued for, in order.
    pub fn causes(&self, name: &str) -> Vec<Cause> {
        let keys = self.keys.lock().expect("sink lock");
        keys.iter()
            .filter(|(key, _)| key.name == name)
            .map(|(_, cause)| *cause)
            .collect()
    }

    /// The names of the keys enqueued so far, in order.
    pub fn names(&self) -> Vec<String> {
        self.keys().into_iter().map(|k| k.name).collect()
    }

    /// How many times `name` was enqueued.
    pub fn count(&self, name: &str) -> usize {
        self.keys().iter().filter(|k| k.name == name).count()
    }
}

impl KeySink for RecordingSink {
    fn enqueue(&self, key: ObjectKey, cause: Cause) {
        self.keys.lock().expect("sink lock").push((key, cause));
    }
}

/// A [`WatchReporter`] that records every state in order.
#[derive(Default)]
pub struct RecordingReporter {
    states: Mutex<Vec<WatchState>>,
}

impl RecordingReporter {
    /// Every state reported so far.
    pub fn states(&self) -> Vec<WatchState> {
        self.states.lock().expect("reporter lock").clone()
    }

    /// The last state reported.
    pub fn latest(&self) -> Option<WatchState> {
        self.states().pop()
    }
}

impl WatchReporter for RecordingReporter {
    fn report(&self, state: WatchState) {
        self.states.lock().expect("reporter lock").push(state);
    }
}

/// A hook call, with the wall time it began and (for `stopped_leading`) ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookCall {
    /// `started_leading` was called at this time.
    Started(SystemTime),
    /// `stopped_leading` ran from the first to the second time.
    Stopped(SystemTime, SystemTime),
}

/// [`LeadershipHooks`] that record their calls; `stopped_leading` takes `stop_takes` to return,
/// like a controllers subtree draining its workers.
pub struct RecordingHooks {
    calls: Arc<Mutex<Vec<HookCall>>>,
    stop_takes: Duration,
}

impl RecordingHooks {
    /// Hooks whose `stopped_leading` returns after `stop_takes`.
    pub fn new(stop_takes: Duration) -> Arc<Self> {
        Arc::new(Self {
            calls: Arc::default(),
            stop_takes,
        })
    }

    /// The calls so far, in order.
    pub fn calls(&self) -> Vec<HookCall> {
        self.calls.lock().expect("hooks lock").clone()
    }

    /// Whether the controllers run: more `started_leading` than finished `stopped_leading`.
    pub fn is_leading(&self) -> bool {
        matches!(self.calls().last(), Some(HookCall::Started(_)))
    }
}

impl LeadershipHooks for RecordingHooks {
    fn started_leading(&self) -> BoxFuture<'static, ()> {
        self.calls
            .lock()
            .expect("hooks lock")
            .push(HookCall::Started(SystemTime::now()));
        futures::future::ready(()).boxed()
    }

    fn stopped_leading(&self) -> BoxFuture<'static, ()> {
        let (calls, takes) = (self.calls.clone(), self.stop_takes);
        async move {
            let began = SystemTime::now();
            tokio::time::sleep(takes).await;
            calls
                .lock()
                .expect("hooks lock")
                .push(HookCall::Stopped(began, SystemTime::now()));
        }
        .boxed()
    }
}

/// What a [`RecordingSupervisor`] saw happen to a child.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChildEvent {
    /// The child started.
    Started(Option<String>),
    /// The child failed (panic or `Err`), with the error's text.
    Failed(Option<String>, String),
    /// The child stopped cleanly.
    Terminated(Option<String>),
}

/// A supervisor that records its children's lifecycle and never stops or restarts anything.
pub struct RecordingSupervisor;

impl Actor for RecordingSupervisor {
    type Msg = ();
    type State = Arc<Mutex<Vec<ChildEvent>>>;
    type Arguments = Arc<Mutex<Vec<ChildEvent>>>;

    async fn pre_start(
        &self,
        _: ActorRef<()>,
        events: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(events)
    }

    async fn handle_supervisor_evt(
        &self,
        _: ActorRef<()>,
        event: SupervisionEvent,
        events: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let seen = match event {
            SupervisionEvent::ActorStarted(cell) => ChildEvent::Started(cell.get_name()),
            SupervisionEvent::ActorFailed(cell, error) => {
                ChildEvent::Failed(cell.get_name(), error.to_string())
            }
            SupervisionEvent::ActorTerminated(cell, _, _) => ChildEvent::Terminated(cell.get_name()),
            SupervisionEvent::ProcessGroupChanged(_) => return Ok(()),
        };
        events.lock().expect("supervisor lock").push(seen);
        Ok(())
    }
}

/// Spawn a [`RecordingSupervisor`]; returns it and the shared log of child events.
pub async fn recording_supervisor() -> (ActorRef<()>, Arc<Mutex<Vec<ChildEvent>>>) {
    let events = Arc::<Mutex<Vec<ChildEvent>>>::default();
    let (actor, _) = Actor::spawn(None, RecordingSupervisor, events.clone())
        .await
        .expect("spawn supervisor");
    (actor, events)
}

/// Install the tracing subscriber once (output only shows for failing tests).
pub fn init_tracing() {
    // Another test in this binary may have installed it already: that one serves.
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_env_filter("info")
        .try_init();
}
