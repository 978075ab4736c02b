//! The passes of a ClusterFerrVaultSecret that differ under `--shards N > 1` (`shard.rs`): a
//! replica that does not write the object provisions its own namespaces only, and the one that
//! does learns the other copies from one LIST.
//!
//! # Guarantees
//! - A replica that does not write the object never writes its status or finalizer, publishes
//!   no Event, and writes no copy before the object carries the finalizer (its deletion would
//!   otherwise leave them); at deletion it lets go of its own namespaces' copies.
//! - See `shard.rs` for what the LIST reads and its bound.

use controller_actors::{Outcome, ReconcileContext};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::{Api, Resource};

use super::{
    ClusterSecretReconciler, next,
    shard::{BEHIND_RECHECK, Elsewhere},
};
use crate::{
    api::{ClusterFerrVaultSecret, Lenient, names::CLUSTER_SECRET_FINALIZER},
    reconcile::{
        rules::{
            bounds::spec_bounds::SpecBounds,
            status::cluster_secret_status::{CopyState, FanOut},
        },
        write::{KubeAction, KubeFailure, finalizer::has_finalizer},
    },
};

impl ClusterSecretReconciler {
    /// A replica that does not write the object (`--shards N > 1`, not holding the empty
    /// namespace's shard): its own namespaces' copies only, let go of at deletion; no status,
    /// no finalizer, no Event.
    pub(super) async fn run_part(&self, name: &str, rc: &ReconcileContext) -> Result<Outcome, KubeFailure> {
        let api: Api<Lenient<ClusterFerrVaultSecret>> = Api::all(self.ctx.client.clone());
        let Some(object) = (self.reads.cluster_secrets.get(&api, "", name).await)
            .map_err(KubeFailure::during(KubeAction::Read("ClusterFerrVaultSecret")))?
        else {
            return Ok(Outcome::done());
        };
        if object.meta().deletion_timestamp.is_some() {
            if let Some(cr) = object.valid() {
                self.let_go_of_own_copies(cr).await?;
            }
            return Ok(Outcome::done());
        }
        if !has_finalizer(&object, CLUSTER_SECRET_FINALIZER) {
            // No copy before the object's writer holds it: its deletion would leave them.
            return Ok(Outcome::done_refresh_in(BEHIND_RECHECK));
        }
        let Some(cr) = object.valid().filter(|cr| cr.beyond_bounds().is_none()) else {
            return Ok(Outcome::done());
        };
        let now = Timestamp::now();
        if cr.spec.secret_spec.is_suspended() {
            return Ok(Outcome::done());
        }
        let (interval, pass, _) = match self.pass(cr, rc, now).await? {
            Ok(done) => done,
            Err(outcome) => return Ok(outcome),
        };
        // Its refresh follows the status the object's writer records, or this pass's sync.
        let last = cr.status.as_ref().and_then(|s| s.last_synced_at.clone());
        let synced = pass.synced.then_some(Time(now)).or(last);
        Ok(next(cr, &pass, interval, synced.as_ref(), now))
    }

    /// The other shards' copies of `cr`, listed once.
    pub(super) async fn elsewhere(&self, cr: &ClusterFerrVaultSecret) -> Result<Elsewhere, KubeFailure> {
        let bound = self.reads.stores.namespaces.state().len();
        Elsewhere::read(&self.ctx, cr, bound)
            .await
            .map_err(KubeFailure::during(KubeAction::Read("Secret")))
    }

    /// Adds to `pass` the state of the copies in `elsewhere` (selected namespaces other
    /// replicas write), from one LIST; whether any of them is missing or behind.
    pub(super) async fn learn_elsewhere(
        &self,
        cr: &ClusterFerrVaultSecret,
        pass: &mut FanOut,
        elsewhere: &[String],
    ) -> Result<bool, KubeFailure> {
        if elsewhere.is_empty() {
            return Ok(false);
        }
        let copies = self.elsewhere(cr).await?;
        let current = pass
            .content_hash
            .clone()
            .or_else(|| cr.status.as_ref().and_then(|s| s.content_hash.clone()));
        let mut behind = false;
        for namespace in elsewhere {
            let state = copies.state(namespace, current.as_deref());
            behind |= state != CopyState::Provisioned;
            pass.copies.insert(namespace.clone(), state);
        }
        Ok(behind)
    }
}
