//! The name every write of the reconcilers carries as `fieldManager`.
//!
//! The API server records it in `metadata.managedFields`, so `kubectl get --show-managed-fields`
//! and server-side apply conflicts name the operator. Without it a write from kube-rs (which
//! sends no User-Agent) is recorded as `unknown`.

use kube::api::{PatchParams, PostParams};

use crate::reconcile::report::REPORTING_CONTROLLER;

/// The field manager of the operator's writes (the same name as its Events' controller).
pub const FIELD_MANAGER: &str = REPORTING_CONTROLLER;

/// Parameters of a patch by the operator.
pub(crate) fn patch_params() -> PatchParams {
    PatchParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PatchParams::default()
    }
}

/// Parameters of a create or replace by the operator.
pub(crate) fn post_params() -> PostParams {
    PostParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PostParams::default()
    }
}
