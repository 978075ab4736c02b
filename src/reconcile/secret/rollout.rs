//! Rollout restarts of the workloads listed in `spec.rolloutRestart` (reference §3.5).
//!
//! # Guarantees
//! - Each workload is read uncached (`get`) and restarted by a JSON merge patch of its pod
//!   template's annotations only (`patch` RBAC; no full update).
//! - A workload whose per-CR annotation already records the content hash is skipped, so a retry
//!   restarts only the workloads that missed the rollout.
//! - Every workload is attempted even after a failure; the first failure is reported.

use jiff::Timestamp;
use kube::{
    Api,
    api::{ApiResource, DynamicObject, GroupVersionKind, Patch},
};

use crate::reconcile::field_manager::patch_params;
use crate::{
    api::{RolloutTarget, WorkloadKind},
    reconcile::{
        kube_errors::{is_not_found, kube_error_text},
        rules::rollout_rules::{restart_patch, workload_needs_restart},
    },
};

/// What a rollout pass did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RolloutReport {
    /// `Kind/name` of each workload restarted in this pass.
    pub restarted: Vec<String>,
    /// The first failure, for the `RolloutRestarted` condition (names only).
    pub first_error: Option<String>,
}

fn api_for(client: &kube::Client, namespace: &str, kind: WorkloadKind) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("apps", "v1", kind.as_str());
    Api::namespaced_with(client.clone(), namespace, &ApiResource::from_gvk(&gvk))
}

/// Restarts every workload of `targets` that does not run `content_hash` yet.
pub async fn restart_workloads(
    client: &kube::Client,
    namespace: &str,
    cr_uid: &str,
    targets: &[RolloutTarget],
    content_hash: &str,
) -> RolloutReport {
    let mut report = RolloutReport::default();
    for target in targets {
        let workload = format!("{}/{}", target.kind.as_str(), target.name);
        match restart_one(client, namespace, cr_uid, target, content_hash).await {
            Ok(true) => {
                tracing::info!(workload, "rollout triggered");
                report.restarted.push(workload);
            }
            Ok(false) => {}
            Err(why) => {
                tracing::warn!(workload, error = %why, "rollout patch failed");
                report.first_error.get_or_insert(why);
            }
        }
    }
    report
}

/// Restarts one workload if needed; `Ok(true)` when it was patched.
async fn restart_one(
    client: &kube::Client,
    namespace: &str,
    cr_uid: &str,
    target: &RolloutTarget,
    content_hash: &str,
) -> Result<bool, String> {
    let api = api_for(client, namespace, target.kind);
    let workload = format!("{} {:?}", target.kind.as_str(), target.name);
    let object = api.get(&target.name).await.map_err(|e| {
        if is_not_found(&e) {
            format!("{workload} not found")
        } else {
            format!("read {workload}: {}", kube_error_text(&e))
        }
    })?;
    let annotations = object
        .data
        .pointer("/spec/template/metadata/annotations")
        .and_then(|a| serde_json::from_value(a.clone()).ok());
    if !workload_needs_restart(annotations.as_ref(), cr_uid, content_hash) {
        return Ok(false);
    }
    let patch = restart_patch(cr_uid, content_hash, Timestamp::now());
    api.patch(&target.name, &patch_params(), &Patch::Merge(&patch))
        .await
        .map_err(|e| format!("patch {workload}: {}", kube_error_text(&e)))?;
    Ok(true)
}
