//! The runtime's adapter for the Lease leadership actor ([`crate::leadership`]): how the
//! supervisor spawns it and asks it to release the lease.

use std::{sync::Arc, time::Duration};

use futures::future::BoxFuture;
use ractor::{Actor, ActorCell, ActorRef, SpawnErr};
use tokio::sync::watch;

use crate::{
    leadership::{LeaderElectionConfig, Leadership, LeadershipArgs, LeadershipMsg},
    mailbox,
    seams::{LeadershipHooks, LeadershipSource, LeaseStatus},
};

/// Leader election through a `coordination.k8s.io/v1` Lease.
pub struct LeaseLeadership {
    config: LeaderElectionConfig,
    client: kube::Client,
}

impl LeaseLeadership {
    /// Compete for the Lease described by `config` through `client`.
    pub fn new(config: LeaderElectionConfig, client: kube::Client) -> Self {
        Self { config, client }
    }
}

impl LeadershipSource for LeaseLeadership {
    fn lease_name(&self) -> &str {
        &self.config.lease_name
    }

    fn identity(&self) -> &str {
        &self.config.identity
    }

    fn spawn_linked(
        &self,
        supervisor: ActorCell,
        hooks: Arc<dyn LeadershipHooks>,
        status: watch::Sender<LeaseStatus>,
    ) -> BoxFuture<'static, Result<ActorCell, SpawnErr>> {
        let args = LeadershipArgs {
            config: self.config.clone(),
            client: self.client.clone(),
            hooks,
            status,
        };
        Box::pin(async move {
            let (actor, _) = Actor::spawn_linked(None, Leadership, args, supervisor).await?;
            Ok(actor.get_cell())
        })
    }

    fn release(&self, leadership: ActorCell, timeout: Duration) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            if let Some(stats) = mailbox::lookup(leadership.get_id()) {
                stats.record_enqueued();
            }
            let actor: ActorRef<LeadershipMsg> = leadership.into();
            let released = actor.call(LeadershipMsg::Release, Some(timeout)).await;
            if !matches!(released, Ok(ractor::rpc::CallResult::Success(()))) {
                tracing::warn!("the leadership actor did not confirm the release; the lease will expire");
            }
        })
    }
}
