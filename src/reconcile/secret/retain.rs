//! `target.deletionPolicy: Retain`: the pre-delete step that lets the target outlive its
//! FerrVaultSecret.
//!
//! # Guarantees
//! - Only the owner references carrying this FerrVaultSecret's UID are removed (its controller
//!   reference among them); everything else on the Secret — content, labels, annotations, other
//!   owners — stays. The update carries the read `resourceVersion`: a concurrent edit is a 409,
//!   retried, never lost.
//! - A target that is gone, or that this FerrVaultSecret does not own, is left alone.
//!
//! # Caveats
//! A foreground deletion (`kubectl delete --cascade=foreground`) lets the garbage collector
//! delete the owned Secret before this step runs: `Retain` holds for the default, background
//! deletion.

use k8s_openapi::api::core::v1::Secret;
use kube::{Api, ResourceExt};
use tracing::info;

use crate::{
    api::{DeletionPolicy, FerrVaultSecret},
    reconcile::{
        context::Context,
        write::{KubeAction, KubeFailure, post_params},
    },
};

/// Under `deletionPolicy: Retain`, removes `cr`'s owner reference from its target.
///
/// # Errors
/// The read or the update of the target failed (a 409 when it changed meanwhile).
pub(super) async fn retain_target(ctx: &Context, cr: &FerrVaultSecret) -> Result<(), KubeFailure> {
    if cr.spec.deletion_policy() != DeletionPolicy::Retain {
        return Ok(());
    }
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &cr.namespace().unwrap_or_default());
    let name = cr.name_any();
    let target = cr.spec.target_name(&name);
    let failed = || KubeFailure::during(KubeAction::RetainTarget);
    let Some(mut secret) = secrets.get_opt(target).await.map_err(failed())? else {
        return Ok(());
    };
    let uid = cr.uid().unwrap_or_default();
    let Some(owners) = secret.metadata.owner_references.as_mut() else {
        return Ok(());
    };
    let before = owners.len();
    owners.retain(|o| o.uid != uid);
    if owners.len() == before {
        return Ok(());
    }
    if owners.is_empty() {
        secret.metadata.owner_references = None;
    }
    secrets
        .replace(target, &post_params(), &secret)
        .await
        .map_err(failed())?;
    info!(target, "target Secret retained: owner reference removed");
    Ok(())
}
