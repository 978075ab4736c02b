//! How the reconcilers write: the finalizer, the `fieldManager` every write carries, the
//! `InvalidSpec` report both kinds share, Kubernetes failures carried typed until a pass decides
//! its outcome, and the per-namespace write budget that bounds what a tenant's objects cost.
//!
//! # Layout
//! - [`finalizer`]: adding and removing our finalizer (merge patches carrying the version read).
//! - `field_manager.rs`: [`FIELD_MANAGER`] and the write parameters carrying it.
//! - [`invalid_spec`]: Ready=False/`InvalidSpec` and its Event, for either kind.
//! - `kube_errors.rs`: [`KubeFailure`], a Kubernetes failure and the action it interrupted.
//! - [`write_budget`]: [`WriteBudget`], each namespace's budget: charged on the wire
//!   (`write_budget/charging.rs`), asked before a pass writes.

mod field_manager;
pub(crate) mod finalizer;
pub(crate) mod invalid_spec;
mod kube_errors;
pub(crate) mod write_budget;

pub use self::{field_manager::FIELD_MANAGER, write_budget::WriteBudget};
pub(crate) use self::{
    field_manager::{patch_params, post_params},
    kube_errors::{KubeAction, KubeFailure, is_not_found, kube_error_text},
};
