//! [`KeyFeed`]: a source of keys that is not a Kubernetes watch (a poller, a webhook), run by
//! the controllers subtree like a watch, so it lives exactly while this replica leads.
//!
//! Who sends to it: nobody (no messages). What it does: on start it hands the controllers' key
//! sink to its [`FeedHooks`] and reports itself synced (a feed has no initial list to wait
//! for); on stop it takes the sink back.
//!
//! # Guarantees
//! - The hooks hold a sink only between `attach` and `detach`: a feed never enqueues while this
//!   replica does not lead (the controllers stop their watch children before their queues).
//! - A restarted incarnation attaches again (the sink of the new term).
//!
//! # Failure
//! Nothing in it can fail after start; a panic in a hook is the controllers' child failure
//! like a watcher's (restarted with backoff).

use std::sync::Arc;

use futures::future::BoxFuture;
use ractor::{ActorCell, ActorProcessingErr, SpawnErr};

use crate::{
    directory::ActorKind,
    mailbox::CountedRef,
    seams::{KeySink, WatchSource, WatchStart},
    spawn::{RuntimeActor, Spawner},
    watch_state::{WatchReporter, WatchState},
};

/// What a feed's owner does with the controllers' key sink.
pub trait FeedHooks: Send + Sync + 'static {
    /// The controllers started (this replica leads): keys go to `sink` from now on.
    fn attach(&self, sink: Arc<dyn KeySink>);
    /// The controllers stop: enqueue nothing more, and stop the work that would.
    fn detach(&self);
}

/// A feed of keys from outside the watches, registered with
/// [`RuntimeBuilder::watch`](crate::RuntimeBuilder::watch) under `name`.
pub struct KeyFeed {
    name: String,
    hooks: Arc<dyn FeedHooks>,
}

impl KeyFeed {
    /// A feed named `name` (shown in the actor tree and readiness) driving `hooks`.
    pub fn new(name: impl Into<String>, hooks: Arc<dyn FeedHooks>) -> Self {
        Self {
            name: name.into(),
            hooks,
        }
    }
}

/// What the feed actor is started with.
struct FeedArgs {
    name: String,
    hooks: Arc<dyn FeedHooks>,
    sink: Arc<dyn KeySink>,
    reporter: Arc<dyn WatchReporter>,
}

/// The feed's actor: it only attaches and detaches.
struct FeedActor;

impl RuntimeActor for FeedActor {
    type Msg = ();
    /// The hooks, to detach on stop.
    type State = Arc<dyn FeedHooks>;
    type Arguments = FeedArgs;

    async fn pre_start(
        &self,
        _myself: CountedRef<()>,
        args: FeedArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        args.hooks.attach(args.sink);
        args.reporter.report(WatchState {
            synced: true,
            connected: true,
            ..WatchState::starting(args.name)
        });
        Ok(args.hooks)
    }

    async fn handle(
        &self,
        _myself: CountedRef<()>,
        (): (),
        _hooks: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: CountedRef<()>,
        hooks: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        hooks.detach();
        Ok(())
    }
}

impl WatchSource for KeyFeed {
    fn name(&self) -> &str {
        &self.name
    }

    fn spawn_linked(
        &self,
        spawner: &Spawner,
        sink: Arc<dyn KeySink>,
        reporter: Arc<dyn WatchReporter>,
        _: WatchStart,
    ) -> BoxFuture<'static, Result<ActorCell, SpawnErr>> {
        let args = FeedArgs {
            name: self.name.clone(),
            hooks: self.hooks.clone(),
            sink,
            reporter,
        };
        let (spawner, name) = (spawner.clone(), self.name.clone());
        Box::pin(async move {
            let actor = spawner.spawn(name, ActorKind::Watcher, FeedActor, args).await?;
            Ok(actor.cell())
        })
    }
}
