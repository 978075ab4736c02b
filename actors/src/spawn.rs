//! How every actor of the runtime is spawned: through a [`Spawner`], which links it to its
//! parent, registers it (logical name, kind, mailbox counters) in its runtime's
//! [`Directory`] and wraps it so that every message it handles is counted.
//!
//! # Guarantees
//! - Nothing to forget: an actor implements [`RuntimeActor`] (ractor's `Actor` without the
//!   bookkeeping), and the only way to run one is [`Spawner::spawn`]. Its handlers receive
//!   their own [`CountedRef`], so even the messages it sends itself are counted.
//! - An actor is in the directory exactly while its state lives: registered before
//!   `pre_start`, forgotten when its state is dropped (stop, failure or kill alike).
//! - No process-global state: the directory belongs to one runtime.

use std::{future::Future, sync::Arc};

use ractor::{Actor, ActorCell, ActorId, ActorProcessingErr, ActorRef, Message, SpawnErr, SupervisionEvent};

use crate::{
    directory::{ActorKind, Directory},
    mailbox::{CountedRef, MailboxStats},
    metrics::RuntimeMetrics,
};

/// An actor of the runtime: ractor's `Actor`, minus what the runtime does for every actor
/// (registration, message counting), and with its own [`CountedRef`] in every callback.
pub(crate) trait RuntimeActor: Send + Sync + 'static {
    /// Its messages.
    type Msg: Message;
    /// Its state.
    type State: Send + 'static;
    /// What it is started with.
    type Arguments: Send + 'static;

    /// Build the state (ractor's `pre_start`).
    fn pre_start(
        &self,
        myself: CountedRef<Self::Msg>,
        args: Self::Arguments,
    ) -> impl Future<Output = Result<Self::State, ActorProcessingErr>> + Send;

    /// Runs once the actor is started, before any message.
    fn post_start(
        &self,
        _myself: CountedRef<Self::Msg>,
        _state: &mut Self::State,
    ) -> impl Future<Output = Result<(), ActorProcessingErr>> + Send {
        async { Ok(()) }
    }

    /// Handle one message (counted as handled once this returns).
    fn handle(
        &self,
        myself: CountedRef<Self::Msg>,
        msg: Self::Msg,
        state: &mut Self::State,
    ) -> impl Future<Output = Result<(), ActorProcessingErr>> + Send;

    /// A linked child started, stopped or failed. Actors without children ignore it.
    fn handle_supervisor_evt(
        &self,
        _myself: CountedRef<Self::Msg>,
        _event: SupervisionEvent,
        _state: &mut Self::State,
    ) -> impl Future<Output = Result<(), ActorProcessingErr>> + Send {
        async { Ok(()) }
    }

    /// Runs on a graceful stop (not on a kill).
    fn post_stop(
        &self,
        _myself: CountedRef<Self::Msg>,
        _state: &mut Self::State,
    ) -> impl Future<Output = Result<(), ActorProcessingErr>> + Send {
        async { Ok(()) }
    }
}

/// Spawns runtime actors under one parent, registered in one runtime's directory.
#[derive(Clone)]
pub struct Spawner {
    parent: Option<ActorCell>,
    directory: Arc<Directory>,
}

impl Spawner {
    /// Spawns top-level actors (no parent) registered in `directory`.
    pub(crate) fn root(directory: Arc<Directory>) -> Self {
        Self {
            parent: None,
            directory,
        }
    }

    /// Spawns actors linked to `parent` (their supervisor), registered in `directory`.
    pub(crate) fn under(parent: ActorCell, directory: Arc<Directory>) -> Self {
        Self {
            parent: Some(parent),
            directory,
        }
    }

    /// Spawns actors linked to `parent`, registered in a directory of their own: for running
    /// one actor (a watcher, leadership) outside a runtime, as the crate's tests do.
    pub fn standalone(parent: ActorCell) -> Self {
        let metrics = RuntimeMetrics::register(&mut prometheus_client::registry::Registry::default());
        Self::under(parent, Arc::new(Directory::new(metrics)))
    }

    /// The runtime's directory.
    pub(crate) fn directory(&self) -> &Arc<Directory> {
        &self.directory
    }

    /// Spawn `actor` with `args` as `name` (its logical name in the tree and in metrics).
    pub(crate) async fn spawn<A: RuntimeActor>(
        &self,
        name: impl Into<String>,
        kind: ActorKind,
        actor: A,
        args: A::Arguments,
    ) -> Result<CountedRef<A::Msg>, SpawnErr> {
        let stats = Arc::new(MailboxStats::default());
        let start = Start {
            args,
            name: name.into(),
            kind,
            stats: stats.clone(),
            directory: self.directory.clone(),
        };
        let (actor, _) = match &self.parent {
            Some(parent) => Actor::spawn_linked(None, Counted(actor), start, parent.clone()).await?,
            None => Actor::spawn(None, Counted(actor), start).await?,
        };
        Ok(CountedRef::new(actor, stats))
    }
}

/// A spawned actor whose message type its owner does not name: its cell and its counters.
#[derive(Clone, Debug)]
pub struct Spawned {
    cell: ActorCell,
    stats: Arc<MailboxStats>,
}

impl Spawned {
    /// The actor's cell.
    pub fn cell(&self) -> &ActorCell {
        &self.cell
    }

    /// A counted reference for messages of type `M` (ractor refuses them at runtime if the
    /// actor takes another type).
    pub(crate) fn typed<M: Message>(&self) -> CountedRef<M> {
        CountedRef::new(self.cell.clone().into(), self.stats.clone())
    }
}

impl<M: Message> From<CountedRef<M>> for Spawned {
    fn from(actor: CountedRef<M>) -> Self {
        Self {
            cell: actor.cell(),
            stats: actor.stats().clone(),
        }
    }
}

/// What the wrapper is started with: the actor's arguments and its registration.
struct Start<Args> {
    args: Args,
    name: String,
    kind: ActorKind,
    stats: Arc<MailboxStats>,
    directory: Arc<Directory>,
}

/// Keeps an actor in its directory while its state lives.
struct Registration {
    id: ActorId,
    directory: Arc<Directory>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.directory.forget(self.id);
    }
}

/// The wrapper's state: the actor's own state, its counters and its registration.
struct CountedState<S> {
    inner: S,
    stats: Arc<MailboxStats>,
    _registration: Registration,
}

/// Wraps a [`RuntimeActor`] into a ractor `Actor` that registers it and counts its messages.
struct Counted<A>(A);

impl<A: RuntimeActor> Counted<A> {
    fn myself(myself: ActorRef<A::Msg>, stats: &Arc<MailboxStats>) -> CountedRef<A::Msg> {
        CountedRef::new(myself, stats.clone())
    }
}

impl<A: RuntimeActor> Actor for Counted<A> {
    type Msg = A::Msg;
    type State = CountedState<A::State>;
    type Arguments = Start<A::Arguments>;

    async fn pre_start(
        &self,
        myself: ActorRef<A::Msg>,
        start: Start<A::Arguments>,
    ) -> Result<Self::State, ActorProcessingErr> {
        start
            .directory
            .register(myself.get_id(), start.name, start.kind, start.stats.clone());
        let registration = Registration {
            id: myself.get_id(),
            directory: start.directory,
        };
        let inner = self
            .0
            .pre_start(Self::myself(myself, &start.stats), start.args)
            .await?;
        Ok(CountedState {
            inner,
            stats: start.stats,
            _registration: registration,
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<A::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        self.0
            .post_start(Self::myself(myself, &state.stats), &mut state.inner)
            .await
    }

    async fn handle(
        &self,
        myself: ActorRef<A::Msg>,
        msg: A::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let handled = self
            .0
            .handle(Self::myself(myself, &state.stats), msg, &mut state.inner)
            .await;
        state.stats.record_handled();
        handled
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<A::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        self.0
            .handle_supervisor_evt(Self::myself(myself, &state.stats), event, &mut state.inner)
            .await
    }

    async fn post_stop(
        &self,
        myself: ActorRef<A::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        self.0
            .post_stop(Self::myself(myself, &state.stats), &mut state.inner)
            .await
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A root spawner over a fresh directory (not `test_support`'s: that module uses this one).
    fn spawner() -> (Spawner, Arc<Directory>) {
        let metrics = RuntimeMetrics::register(&mut prometheus_client::registry::Registry::default());
        let directory = Arc::new(Directory::new(metrics));
        (Spawner::root(directory.clone()), directory)
    }

    async fn eventually(within: Duration, what: &str, check: impl Fn() -> bool) {
        let polled = tokio::time::timeout(within, async {
            while !check() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        assert!(
            polled.await.is_ok(),
            "timed out after {within:?} waiting until {what}"
        );
    }

    /// Counts to itself: `Tick(n)` sends itself `Tick(n - 1)` until 0.
    struct Countdown;

    impl RuntimeActor for Countdown {
        type Msg = u32;
        type State = ();
        type Arguments = ();

        async fn pre_start(&self, _: CountedRef<u32>, (): ()) -> Result<(), ActorProcessingErr> {
            Ok(())
        }

        async fn handle(
            &self,
            myself: CountedRef<u32>,
            n: u32,
            (): &mut (),
        ) -> Result<(), ActorProcessingErr> {
            if n > 0 {
                myself.cast(n - 1)?;
            }
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_spawned_actor_should_be_registered_while_it_lives_and_count_every_message() {
        let (spawner, directory) = spawner();
        let actor = spawner
            .spawn("countdown", ActorKind::Worker, Countdown, ())
            .await
            .expect("spawns");
        let id = actor.cell().get_id();
        assert_eq!(
            directory.lookup(id),
            Some(("countdown".to_owned(), ActorKind::Worker))
        );
        actor.cast(4).expect("alive");
        let mailbox = directory.mailbox(id).expect("registered with its counters");
        eventually(
            Duration::from_secs(5),
            "five messages handled, none waiting",
            || mailbox.handled() == 5 && mailbox.depth() == 0,
        )
        .await;
        actor.cell().kill();
        eventually(Duration::from_secs(5), "a killed actor forgotten", || {
            directory.lookup(id).is_none() && directory.mailbox(id).is_none()
        })
        .await;
    }

    #[tokio::test]
    async fn a_send_to_a_stopped_actor_should_not_count_as_waiting() {
        let (spawner, _) = spawner();
        let actor = spawner
            .spawn("countdown", ActorKind::Worker, Countdown, ())
            .await
            .expect("spawns");
        actor
            .cell()
            .stop_and_wait(None, Some(Duration::from_secs(5)))
            .await
            .expect("stops");
        assert!(actor.cast(1).is_err());
        assert_eq!(actor.stats().depth(), 0, "a refused message is not in the depth");
    }
}
