//! Starting the root supervisor's children, and the two ways they reach back to it: the
//! [`LeadershipHooks`] through which the leadership actor starts and stops the controllers
//! subtree, and the [`Escalation`] seam through which the controllers escalate.

use std::{sync::Arc, time::Duration};

use futures::future::BoxFuture;

use super::{RootChild, SupervisorMsg, SupervisorState};
use crate::{
    controllers::Controllers,
    directory::ActorKind,
    health::Health,
    mailbox::CountedRef,
    seams::{Escalation, LeadershipHooks},
};

impl SupervisorState {
    /// Spawn `child` linked to the supervisor; a failed start counts as a failure now.
    pub(super) async fn start(&mut self, myself: &CountedRef<SupervisorMsg>, child: RootChild) {
        let started = match child {
            RootChild::Health => self
                .spawner
                .spawn(
                    child.name(),
                    ActorKind::Health,
                    Health,
                    self.args.factory.health_args(),
                )
                .await
                .map(|health| self.health = Some(health)),
            RootChild::Controllers => {
                let args = self.args.factory.controllers_args(Arc::new(myself.clone()));
                let spawned = self
                    .spawner
                    .spawn(child.name(), ActorKind::Controllers, Controllers, args)
                    .await;
                self.controllers
                    .started(spawned.as_ref().ok().map(CountedRef::cell));
                spawned.map(drop)
            }
            RootChild::Leadership => {
                let source = self
                    .args
                    .leadership
                    .clone()
                    .expect("leadership restarted only when enabled");
                let hooks: Arc<dyn LeadershipHooks> = Arc::new(RuntimeHooks {
                    supervisor: myself.clone(),
                    stop_timeout: self.args.stop_timeout,
                });
                source
                    .spawn_linked(
                        &self.spawner,
                        hooks,
                        self.args.lease.clone(),
                        self.args.fence.clone(),
                    )
                    .await
                    .map(|leadership| self.leadership = Some(leadership))
            }
        };
        if let Err(err) = started {
            // No supervision event follows a failed start: treat it as a failure now.
            tracing::warn!(child = child.name(), %err, "child failed to start");
            self.restart_or_escalate(myself, child, format!("start failed: {err}"));
        }
    }
}

/// The controllers actor escalates into the supervisor's mailbox.
impl Escalation for CountedRef<SupervisorMsg> {
    fn escalate(&self, why: String) {
        // The supervisor may already be stopping: then escalation is moot.
        let _ = self.cast(SupervisorMsg::Escalate(why));
    }
}

/// The [`LeadershipHooks`] the leadership actor calls: they start and stop the controllers
/// subtree through the supervisor.
struct RuntimeHooks {
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
            if supervisor
                .call(SupervisorMsg::StopControllers, timeout)
                .await
                .is_none()
            {
                tracing::warn!("controllers did not confirm their stop in time; competing again anyway");
            }
        })
    }
}
