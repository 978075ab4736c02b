//! Starting the root supervisor's children, and the [`LeadershipHooks`] through which the
//! leadership actor starts and stops the controllers subtree.

use std::{sync::Arc, time::Duration};

use futures::future::BoxFuture;
use ractor::{Actor, ActorRef};

use super::{RootChild, SupervisorMsg, SupervisorState};
use crate::{
    controllers::Controllers,
    directory::ActorKind,
    health::Health,
    mailbox::{self, CountedRef, MailboxStats},
    seams::LeadershipHooks,
};

impl SupervisorState {
    /// Spawn `child` linked to the supervisor; a failed start counts as a failure now.
    pub(super) async fn start(&mut self, myself: &ActorRef<SupervisorMsg>, child: RootChild) {
        let stats = Arc::new(MailboxStats::default());
        let result = match child {
            RootChild::Health => {
                let args = self.args.factory.health_args(stats.clone());
                Actor::spawn_linked(None, Health, args, myself.get_cell())
                    .await
                    .map(|(health, _)| {
                        self.health = Some(CountedRef::new(health.clone(), stats.clone()));
                        (health.get_cell(), ActorKind::Health)
                    })
            }
            RootChild::Controllers => {
                let args = self
                    .args
                    .factory
                    .controllers_args(self.myself(myself), stats.clone());
                Actor::spawn_linked(None, Controllers, args, myself.get_cell())
                    .await
                    .map(|(c, _)| {
                        self.controllers = Some(c.get_cell());
                        (c.get_cell(), ActorKind::Controllers)
                    })
            }
            RootChild::Leadership => {
                let source = self
                    .args
                    .leadership
                    .clone()
                    .expect("leadership restarted only when enabled");
                let supervisor = self.myself(myself);
                let hooks: Arc<dyn LeadershipHooks> = Arc::new(RuntimeHooks {
                    supervisor,
                    stop_timeout: self.args.stop_timeout,
                });
                source
                    .spawn_linked(myself.get_cell(), hooks, self.args.lease.clone())
                    .await
                    .map(|cell| {
                        self.leadership = Some(cell.clone());
                        (cell, ActorKind::Leadership)
                    })
            }
        };
        match result {
            Ok((cell, kind)) => {
                if kind != ActorKind::Leadership {
                    mailbox::register(cell.get_id(), stats);
                }
                self.args.directory.name(cell.get_id(), child.name(), kind);
            }
            Err(err) => {
                // No supervision event follows a failed start: treat it as a failure now.
                tracing::warn!(child = child.name(), %err, "child failed to start");
                self.restart_or_escalate(myself, child, format!("start failed: {err}"));
            }
        }
    }
}

/// The [`LeadershipHooks`] the leadership actor calls: they start and stop the controllers
/// subtree through the supervisor.
pub struct RuntimeHooks {
    supervisor: CountedRef<SupervisorMsg>,
    stop_timeout: Duration,
}

impl LeadershipHooks for RuntimeHooks {
    fn started_leading(&self) -> BoxFuture<'static, ()> {
        // A stopped supervisor means the runtime is ending: nothing to start.
        let _ = self.supervisor.cast(SupervisorMsg::StartControllers);
        Box::pin(async {})
    }

    fn stopped_leading(&self) -> BoxFuture<'static, ()> {
        let supervisor = self.supervisor.clone();
        let timeout = self.stop_timeout + Duration::from_secs(5);
        Box::pin(async move {
            supervisor.stats().record_enqueued();
            let stopped = supervisor
                .actor()
                .call(SupervisorMsg::StopControllers, Some(timeout))
                .await;
            if !matches!(stopped, Ok(ractor::rpc::CallResult::Success(()))) {
                tracing::warn!("controllers did not confirm their stop in time; competing again anyway");
            }
        })
    }
}
