//! The messages of a FerrVaultSecret's sync: synced, missing keys, a refused or too large
//! target, the cloud scope, rollout restarts.

use std::time::Duration;

use jiff::Timestamp;

use super::budget::{and_more, bounded};
use crate::{
    api::names::ADOPTABLE_BY_ANNOTATION,
    ferrvault::MissingKeys,
    reconcile::rules::{access::target_access::TargetRefusal, schedule::duration::format_go_duration},
};

/// Ready=True/`Synced`: "N key(s) synced into TARGET".
pub(crate) fn synced(key_count: usize, target: &str) -> String {
    format!("{key_count} key(s) synced into {target}")
}

/// Ready=False/`MissingKeys` after a write: "missing in FerrVault: [A B]", then " (and N more)"
/// past the [`MissingKeys::SHOWN`] names kept.
pub(crate) fn missing_keys(missing: &MissingKeys) -> String {
    format!(
        "missing in FerrVault: [{}]{}",
        missing.names().join(" "),
        and_more(missing.hidden())
    )
}

/// Ready=False/`MissingKeys` when the guard left the target alone:
/// "missing in FerrVault: [A B] (and N more): TARGET left unchanged".
pub(crate) fn missing_keys_target_unchanged(missing: &MissingKeys, target: &str) -> String {
    format!("{}: {target} left unchanged", missing_keys(missing))
}

/// `status.missingKeys`: the names kept, then "(and N more)" as a last entry when some are not
/// (it cannot be taken for a key: a Secret's key has no spaces or parentheses).
pub(crate) fn missing_keys_list(missing: &MissingKeys) -> Vec<String> {
    let mut list = missing.names().to_vec();
    if missing.hidden() > 0 {
        list.push(and_more(missing.hidden()).trim_start().to_owned());
    }
    list
}

/// Ready=False for a refused target (`TargetTypeRefused`, `TargetIsConnectionSecret`,
/// `TargetControlledByOther`, `TargetNotOwned`): what was found and, where the user can act, how.
/// `writer` is the FerrVaultSecret's name.
pub(crate) fn target_refused(refusal: &TargetRefusal, target: &str, writer: &str) -> String {
    match refusal {
        TargetRefusal::RefusedType { type_ } => bounded(format_args!(
            "target type {type_} is refused: Kubernetes turns Secrets of this type into cluster credentials; \
             {target} not written"
        )),
        TargetRefusal::KubernetesManaged { marker } => bounded(format_args!(
            "Secret {target} carries {marker}, which Kubernetes acts on (ServiceAccount or bootstrap \
             tokens): never written"
        )),
        TargetRefusal::ConnectionSecret(used) => bounded(format_args!(
            "Secret {target} is the {} Secret of FerrVaultConnection {:?}: a FerrVaultSecret never writes \
             a connection's credentials",
            used.role.as_str(),
            used.connection
        )),
        TargetRefusal::ControlledByOther { kind, name } => bounded(format_args!(
            "Secret {target} is controlled by {kind} {name:?}: not written"
        )),
        TargetRefusal::NotOwned => bounded(format_args!(
            "Secret {target} exists and is not controlled by this FerrVaultSecret: not written; to hand it \
             over, annotate the Secret with {ADOPTABLE_BY_ANNOTATION}={writer}"
        )),
        TargetRefusal::MergeMissing => bounded(format_args!(
            "Secret {target} does not exist: creationPolicy Merge writes only into an existing Secret \
             annotated {ADOPTABLE_BY_ANNOTATION}={writer}"
        )),
    }
}

/// Ready=False/`TargetImmutable`.
pub(crate) fn target_immutable(target: &str) -> String {
    bounded(format_args!(
        "Secret {target} is immutable and its content, type or flag would change: left unchanged \
         (target.immutableChange: Replace replaces it)"
    ))
}

/// Ready=False/`MissingCloudScope`.
pub(crate) const MISSING_CLOUD_SCOPE: &str =
    "mode cloud needs organization on the FerrVaultConnection and project on the FerrVaultSecret";

/// RolloutRestarted=False/`RolloutDeferred`: stable for the whole deferral (no status write per
/// pass), naming when the restart becomes due and the floor.
pub(crate) fn rollout_deferred(until: Timestamp, floor: Duration) -> String {
    format!(
        "restart deferred until {}: a workload is restarted at most once per {}",
        until.round(jiff::Unit::Second).unwrap_or(until),
        format_go_duration(floor)
    )
}

/// RolloutRestarted=True/`UpToDate`.
pub(crate) const ROLLOUT_UP_TO_DATE: &str = "workloads run the current content of the target Secret";

/// Ready=False/`SecretTooLarge`.
pub(crate) fn secret_too_large(size: usize, limit: usize, target: &str) -> String {
    format!(
        "the synced content is {size} bytes, over the {limit}-byte limit of a Secret: {target} left unchanged"
    )
}
