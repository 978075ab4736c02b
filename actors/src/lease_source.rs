//! The runtime's adapter for the Lease leadership actor ([`crate::leadership`]): how the
//! supervisor spawns it and asks it to release the lease.

use std::{sync::Arc, time::Duration};

use futures::future::BoxFuture;
use ractor::SpawnErr;
use tokio::sync::watch;

use crate::{
    directory::ActorKind,
    fence::Fence,
    leadership::{LeaderElectionConfig, Leadership, LeadershipArgs, LeadershipMsg},
    seams::{LeadershipHooks, LeadershipSource, LeaseStatus},
    spawn::{Spawned, Spawner},
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
        spawner: &Spawner,
        hooks: Arc<dyn LeadershipHooks>,
        status: watch::Sender<LeaseStatus>,
        fence: Fence,
    ) -> BoxFuture<'static, Result<Spawned, SpawnErr>> {
        let args = LeadershipArgs {
            config: self.config.clone(),
            client: self.client.clone(),
            hooks,
            status,
            fence,
        };
        let spawner = spawner.clone();
        Box::pin(async move {
            let actor = spawner
                .spawn("leadership", ActorKind::Leadership, Leadership, args)
                .await?;
            Ok(actor.into())
        })
    }

    fn release(&self, leadership: &Spawned, timeout: Duration) -> BoxFuture<'static, ()> {
        let actor = leadership.typed::<LeadershipMsg>();
        Box::pin(async move {
            if actor.call(LeadershipMsg::Release, timeout).await.is_none() {
                tracing::warn!("the leadership actor did not confirm the release; the lease will expire");
            }
        })
    }
}
