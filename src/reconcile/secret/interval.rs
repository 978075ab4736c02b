//! The refresh interval of a FerrVaultSecret as the operator uses it: `spec.refreshInterval`
//! under `--min-refresh-interval`
//! ([`duration_floor`](crate::reconcile::rules::schedule::duration_floor)), and the condition that says
//! when it is clamped.

use jiff::Timestamp;
use kube::{Api, Resource, ResourceExt};

use super::status;
use crate::{
    api::{FerrVaultSecret, FerrVaultSecretStatus, Lenient, Reason},
    reconcile::{
        read::WrittenVersions,
        rules::schedule::{
            duration::DurationError,
            duration_floor::{Floored, REFRESH_INTERVAL, floor_interval, record_clamp},
            requeue::resolve_refresh_interval,
        },
        rules::status::refresh_control::without_suspension,
        settings::OperatorSettings,
        write::{KubeAction, KubeFailure},
    },
};

/// `spec.refreshInterval` resolved (`--default-refresh-interval` when empty) and under the
/// operator's floor (`--min-refresh-interval`).
///
/// # Errors
/// The interval does not parse (`InvalidRefreshInterval`).
pub(super) fn refresh_interval(
    settings: &OperatorSettings,
    cr: &FerrVaultSecret,
) -> Result<Floored, DurationError> {
    resolve_refresh_interval(&cr.spec.refresh_interval, settings.default_refresh_interval)
        .map(|requested| floor_interval(requested, settings.min_refresh_interval))
}

/// `status` with the `RefreshIntervalClamped` condition as `cr`'s interval stands now (none for
/// an invalid interval), and without a `Suspended` condition: every status this builds is
/// written by a pass that runs (so a resumed object loses it on its first pass).
pub(super) fn with_clamp(
    settings: &OperatorSettings,
    cr: &FerrVaultSecret,
    mut status: FerrVaultSecretStatus,
    now: Timestamp,
) -> FerrVaultSecretStatus {
    record_clamp(
        &mut status.conditions,
        REFRESH_INTERVAL,
        refresh_interval(settings, cr).ok(),
        cr.meta().generation,
        now,
    );
    without_suspension(&mut status.conditions);
    status
}

/// Writes `current` (the status a pass with nothing due keeps) with the condition as the interval
/// stands now (the minimum may have changed since the last sync) when `previous` does not show
/// it: one status write, nothing else; none when it does.
///
/// # Errors
/// The status write failed.
pub(super) async fn correct_clamp(
    settings: &OperatorSettings,
    (api, written): (&Api<Lenient<FerrVaultSecret>>, &WrittenVersions),
    cr: &FerrVaultSecret,
    (previous, current): (&FerrVaultSecretStatus, FerrVaultSecretStatus),
) -> Result<(), KubeFailure> {
    let status = with_clamp(settings, cr, current, Timestamp::now());
    status::write((api, written), &cr.name_any(), previous, &status)
        .await
        .map_err(KubeFailure::during(KubeAction::WriteStatus(
            Reason::BelowMinimum.as_str(),
        )))
}
