//! A ClusterFerrVaultSecret's status write (what it says is
//! [`cluster_secret_status`](crate::reconcile::rules::status::cluster_secret_status)) and the gauge
//! `ferrvault_cluster_secret_targets{name,state}`.
//!
//! # Guarantees
//! - The status is written only when it changed (a merge patch of the whole status, every field
//!   serialized), and the version written recorded, so the next pass does not start from a store
//!   that has not seen it.
//! - The gauge has two series per ClusterFerrVaultSecret (`provisioned`, `failed`): cluster
//!   secrets are created by cluster admins only, so its cardinality does not grow with tenants;
//!   both are removed with the object.

use std::{
    collections::HashMap,
    sync::{Mutex, PoisonError},
};

use jiff::Timestamp;
use kube::{
    Api, Resource, ResourceExt,
    api::{Patch, PatchParams},
};
use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{family::Family, gauge::Gauge},
    registry::Registry,
};
use serde_json::json;

use crate::{
    api::{ClusterFerrVaultSecret, ClusterFerrVaultSecretStatus, Lenient, Reason},
    reconcile::{
        read::WrittenVersions,
        rules::status::{
            cluster_secret_status::{FanOut, cluster_secret_status},
            refresh_control::suspend,
        },
        write::{KubeAction, KubeFailure, patch_params},
    },
};

/// The gauge's `state` of namespaces holding the current copy.
const PROVISIONED: &str = "provisioned";
/// The gauge's `state` of namespaces that do not (see `status.failedNamespaces`).
const FAILED: &str = "failed";

/// The gauge's labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct TargetsLabel {
    /// The ClusterFerrVaultSecret's name.
    name: String,
    /// The copies' state.
    state: &'static str,
}

/// `ferrvault_cluster_secret_targets`.
pub(crate) type TargetsGauge = Family<TargetsLabel, Gauge>;

/// The gauge `ferrvault_cluster_secret_targets`, registered in `registry`.
pub(crate) fn register_targets_gauge(registry: &mut Registry) -> TargetsGauge {
    let gauge = TargetsGauge::default();
    registry.register(
        "ferrvault_cluster_secret_targets",
        "Namespaces a ClusterFerrVaultSecret selects, by whether they hold its current copy \
         (provisioned) or not (failed)",
        gauge.clone(),
    );
    gauge
}

/// Removes the gauge's series of cluster secret `name`.
pub(super) fn forget(gauge: &TargetsGauge, name: &str) {
    for state in [PROVISIONED, FAILED] {
        gauge.remove(&TargetsLabel {
            name: name.to_owned(),
            state,
        });
    }
}

/// Writes the status after `pass` (when it changed) and sets the gauge; returns the status.
///
/// # Errors
/// The status patch failed.
pub(super) async fn record(
    (api, written): (&Api<Lenient<ClusterFerrVaultSecret>>, &WrittenVersions),
    gauge: &TargetsGauge,
    cr: &ClusterFerrVaultSecret,
    pass: &FanOut,
    now: Timestamp,
) -> Result<ClusterFerrVaultSecretStatus, KubeFailure> {
    let previous = cr.status.clone().unwrap_or_default();
    let status = cluster_secret_status(&previous, pass, cr.meta().generation, now);
    let (provisioned, failed) = pass.counts();
    let name = cr.name_any();
    for (state, count) in [(PROVISIONED, provisioned), (FAILED, failed)] {
        gauge
            .get_or_create(&TargetsLabel {
                name: name.clone(),
                state,
            })
            .set(i64::from(count));
    }
    write((api, written), cr, &previous, &status).await?;
    Ok(status)
}

/// Writes the status of a suspended cluster secret: `Suspended=True`, the rest as it was.
///
/// # Errors
/// The status patch failed.
pub(super) async fn suspended(
    (api, written): (&Api<Lenient<ClusterFerrVaultSecret>>, &WrittenVersions),
    cr: &ClusterFerrVaultSecret,
    now: Timestamp,
) -> Result<(), KubeFailure> {
    let previous = cr.status.clone().unwrap_or_default();
    let mut status = previous.clone();
    suspend(
        &mut status.conditions,
        Reason::Suspended,
        cr.meta().generation,
        now,
    );
    write((api, written), cr, &previous, &status).await
}

/// Patches `status` over `previous` when they differ.
async fn write(
    (api, written): (&Api<Lenient<ClusterFerrVaultSecret>>, &WrittenVersions),
    cr: &ClusterFerrVaultSecret,
    previous: &ClusterFerrVaultSecretStatus,
    status: &ClusterFerrVaultSecretStatus,
) -> Result<(), KubeFailure> {
    if status == previous {
        return Ok(());
    }
    let body = json!({ "status": status });
    let params: PatchParams = patch_params();
    let patched = api
        .patch_status(&cr.name_any(), &params, &Patch::Merge(&body))
        .await
        .map_err(KubeFailure::during(KubeAction::WriteStatus(
            "ClusterFerrVaultSecret",
        )))?;
    written.record(patched.meta());
    Ok(())
}

/// The status each pass wrote last, by cluster secret UID: what the next pass starts from while
/// the watch's store still shows an older one. A cluster-scoped object is read from its store only
/// (the operator may not GET it), and the store may lag our own write by a few milliseconds: a
/// pass starting in that window would otherwise find the last sync unrecorded and reveal again.
/// One entry per ClusterFerrVaultSecret (cluster admins create them), removed with it.
#[derive(Default)]
pub(super) struct LastWritten {
    statuses: Mutex<HashMap<String, ClusterFerrVaultSecretStatus>>,
}

impl LastWritten {
    /// `cr` with the newer of its stored status and the one we wrote last (by `lastSyncedAt`, then
    /// `observedGeneration`).
    pub(super) fn newest(&self, mut cr: ClusterFerrVaultSecret) -> ClusterFerrVaultSecret {
        let uid = cr.uid().unwrap_or_default();
        let ours = self.lock().get(&uid).cloned();
        let order = |s: &ClusterFerrVaultSecretStatus| {
            (s.last_synced_at.as_ref().map(|t| t.0), s.observed_generation)
        };
        if let Some(ours) = ours
            && cr
                .status
                .as_ref()
                .is_none_or(|stored| order(&ours) > order(stored))
        {
            cr.status = Some(ours);
        }
        cr
    }

    /// Remembers `status` as the last one written for `cr`.
    pub(super) fn remember(&self, cr: &ClusterFerrVaultSecret, status: &ClusterFerrVaultSecretStatus) {
        self.lock().insert(cr.uid().unwrap_or_default(), status.clone());
    }

    /// Forgets cluster secret `uid`.
    pub(super) fn forget(&self, uid: &str) {
        self.lock().remove(uid);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, ClusterFerrVaultSecretStatus>> {
        self.statuses.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
