//! The target's shape beyond its content (issue 36, points 4-6): which keys of a map the
//! FerrVaultSecret owns ([`owned_map`]: labels, annotations, and the data keys of a `Merge`
//! target) and how a target is written when it exists ([`target_write`]: an update, a
//! replacement, or a refusal of an immutable target).
//!
//! # Guarantees
//! - A map keeps every key the FerrVaultSecret does not own, value and all; owned keys take the
//!   spec's value; a key owned before (recorded in status) and gone from the spec is removed.
//! - An immutable target is never updated in a way the API server would refuse (its data, its
//!   flag unset, its type): such a change is a [`TargetWrite::RefuseImmutable`] or, with
//!   `immutableChange: Replace`, a [`TargetWrite::Replace`] that restarts the rollout targets.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;

use crate::api::ImmutableChange;

/// The type the API server gives a Secret stored without one.
const IMPLICIT_TYPE: &str = "Opaque";

/// `existing` with `ours` written over it: keys of `ours` set to its values, keys of
/// `previously_owned` not in `ours` removed, every other key kept. `None` when the result is empty
/// and `existing` was `None` (so an absent map is not turned into an empty one).
pub(crate) fn owned_map<V: Clone>(
    existing: Option<&BTreeMap<String, V>>,
    previously_owned: &[String],
    ours: &BTreeMap<String, V>,
) -> Option<BTreeMap<String, V>> {
    let mut map = existing.cloned().unwrap_or_default();
    for gone in previously_owned.iter().filter(|k| !ours.contains_key(*k)) {
        map.remove(gone);
    }
    map.extend(ours.iter().map(|(k, v)| (k.clone(), v.clone())));
    (existing.is_some() || !map.is_empty()).then_some(map)
}

/// The keys of `ours`, sorted: what status records as owned after a write.
pub(crate) fn owned_keys<V>(ours: &BTreeMap<String, V>) -> Vec<String> {
    ours.keys().cloned().collect()
}

/// How an existing target is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TargetWrite {
    /// An update in place (with the read `resourceVersion`).
    Update,
    /// A delete (only the version read) and a create: the type changes, or an immutable target's
    /// content or flag does under `immutableChange: Replace`.
    Replace {
        /// The rollout targets are restarted even if the content hash alone would not restart
        /// them: an immutable target was replaced, and the kubelet does not refresh an
        /// immutable Secret in running pods.
        restart: bool,
    },
    /// The target is immutable and this change needs a replacement, which
    /// `immutableChange: Refuse` forbids: it is left untouched.
    RefuseImmutable,
}

/// How `existing` becomes `desired` under `change`.
pub(crate) fn target_write(existing: &Secret, desired: &Secret, change: ImmutableChange) -> TargetWrite {
    let locked = is_immutable(existing)
        && (data_changes(existing, desired) || !is_immutable(desired) || type_changes(existing, desired));
    match (locked, change) {
        (true, ImmutableChange::Refuse) => TargetWrite::RefuseImmutable,
        (true, ImmutableChange::Replace) => TargetWrite::Replace { restart: true },
        (false, _) if type_changes(existing, desired) => TargetWrite::Replace { restart: false },
        (false, _) => TargetWrite::Update,
    }
}

/// Whether `secret` is `immutable: true`.
pub(crate) fn is_immutable(secret: &Secret) -> bool {
    secret.immutable == Some(true)
}

/// Whether `desired` holds other `data` than `existing` (absent reads as empty).
pub(crate) fn data_changes(existing: &Secret, desired: &Secret) -> bool {
    let empty = BTreeMap::new();
    existing.data.as_ref().unwrap_or(&empty) != desired.data.as_ref().unwrap_or(&empty)
}

/// Whether `desired` has another `type` than `existing` (which only a replacement can change).
pub(crate) fn type_changes(existing: &Secret, desired: &Secret) -> bool {
    let type_of = |s: &Secret| s.type_.clone().unwrap_or_else(|| IMPLICIT_TYPE.to_owned());
    type_of(existing) != type_of(desired)
}

#[cfg(test)]
mod tests;
