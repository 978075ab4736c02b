//! Which changes of each watched kind matter: the filters of the watches' routes. A change
//! that does not matter enqueues nothing (status writes, our own writes, probes that only moved
//! `lastCheckedAt`).

use kube::{Resource, api::ObjectMeta};

use crate::{
    api::{
        FerrVaultConnection, Lenient,
        names::{CONTENT_HASH_ANNOTATION, MANAGED_BY_ANNOTATION},
    },
    reconcile::{
        read::{OwnWrites, ready_for_dependants},
        rules::schedule::force_sync::force_token,
    },
};

/// Whether a change of a custom resource deserves a reconcile of that resource: first sighting,
/// new generation, deletion started, our `finalizer` removed by someone, or a new value of the
/// `ferrvault.com/force-sync` annotation. Status, label, other annotation and `managedFields`
/// writes do not (the Go operator's `GenerationChangedPredicate`), nor does our own finalizer
/// being added.
pub(crate) fn cr_change_matters(old: Option<&ObjectMeta>, new: &ObjectMeta, finalizer: &str) -> bool {
    let Some(old) = old else {
        return true;
    };
    let has_finalizer = |m: &ObjectMeta| m.finalizers.iter().flatten().any(|f| f == finalizer);
    old.generation != new.generation
        || old.deletion_timestamp != new.deletion_timestamp
        || (has_finalizer(old) && !has_finalizer(new))
        || force_token(old.annotations.as_ref()) != force_token(new.annotations.as_ref())
}

/// Whether a connection change matters to the FerrVaultSecrets that use it: first sighting
/// (a connection they waited for now exists), a new generation (spec change, `suspend`
/// included), deletion, a forced probe recorded (`status.observedForceSync`: it forces them), or
/// a change of its Ready status as they see it ([`ready_for_dependants`]: a first probe finding
/// it reachable is none). A probe that only moved `lastCheckedAt` does not.
///
/// An invalid connection (not matching its type) has no readable Ready status here; turning
/// invalid or valid again is a new generation, which matters.
pub(crate) fn connection_change_matters_to_dependants(
    old: Option<&Lenient<FerrVaultConnection>>,
    new: &Lenient<FerrVaultConnection>,
) -> bool {
    let Some(old) = old else {
        return true;
    };
    old.meta().generation != new.meta().generation
        || old.meta().deletion_timestamp != new.meta().deletion_timestamp
        || old.valid().map(ready_for_dependants) != new.valid().map(ready_for_dependants)
        || old.valid().map(recorded_force) != new.valid().map(recorded_force)
}

/// A connection's `status.observedForceSync`.
fn recorded_force(connection: &FerrVaultConnection) -> Option<&str> {
    connection.status.as_ref()?.observed_force_sync.as_deref()
}

/// Whether a Secret change matters: not when it is our own write, and not when it is a
/// first sighting (a start or re-list) of a target that still looks as we left it.
pub(crate) fn secret_change_matters(own: &OwnWrites, old: Option<&ObjectMeta>, new: &ObjectMeta) -> bool {
    if own.is_own(new) {
        return false;
    }
    let looks_managed = |m: &ObjectMeta| {
        m.annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(MANAGED_BY_ANNOTATION) && a.contains_key(CONTENT_HASH_ANNOTATION))
    };
    match old {
        None => !looks_managed(new),
        Some(old) => old.resource_version != new.resource_version || old.resource_version.is_none(),
    }
}
