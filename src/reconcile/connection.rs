//! The FerrVaultConnection reconciler.

use std::sync::Arc;

use controller_actors::{
    key::ObjectKey,
    reconciler::{Outcome, ReconcileContext, Reconciler},
};

use super::context::Context;

/// Reconciles one FerrVaultConnection: probe, deletion blocking, OIDC invalidation.
pub struct ConnectionReconciler {
    ctx: Arc<Context>,
}

impl ConnectionReconciler {
    /// A reconciler over the shared context.
    pub fn new(ctx: Arc<Context>) -> Self {
        Self { ctx }
    }
}

impl Reconciler for ConnectionReconciler {
    async fn reconcile(&self, _key: &ObjectKey, _rc: &ReconcileContext) -> Outcome {
        let _ = &self.ctx;
        Outcome::done()
    }
}
