//! The FerrVaultSecret reconciler.

use std::sync::Arc;

use controller_actors::{
    key::ObjectKey,
    reconciler::{Outcome, ReconcileContext, Reconciler},
};

use super::context::Context;

/// Reconciles one FerrVaultSecret: reveal, transform, guard, write the target, restart workloads.
pub struct SecretReconciler {
    ctx: Arc<Context>,
}

impl SecretReconciler {
    /// A reconciler over the shared context.
    pub fn new(ctx: Arc<Context>) -> Self {
        Self { ctx }
    }
}

impl Reconciler for SecretReconciler {
    async fn reconcile(&self, _key: &ObjectKey, _rc: &ReconcileContext) -> Outcome {
        let _ = &self.ctx;
        Outcome::done()
    }
}
