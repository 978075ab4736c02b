//! The generation of a connection that its FerrVaultSecrets record as their input
//! (`status.observedInputs`): the generation at which the part of its spec they depend on last
//! changed, so that pausing and resuming a connection (`spec.suspend`, which bumps
//! `metadata.generation`) re-syncs none of them (issue 36 point 2), as
//! [`spec_digest`](super::spec_digest) does for a FerrVaultSecret's own suspension.
//!
//! The connection's status records the digest of that part (`status.inputDigest`) and the
//! generation at which it last changed (`status.inputGeneration`); a dependant compares the
//! digest with the spec it sees now, so a status not written yet for the current spec never
//! hides a real change.
//!
//! # Guarantees
//! - `spec.suspend` and `spec.changeDetection` never change a connection's input generation; any field its
//!   FerrVaultSecrets read does (for a ClusterFerrVaultConnection, `allowedNamespaces` and
//!   `revocation` do not either: who may use it is checked on every pass, not recorded).
//! - A spec whose digest differs from the recorded one (changed, and not probed since) gives
//!   its current `metadata.generation`: a real change re-syncs its dependants at once.
//! - No object syncs on an upgrade: a status without these fields gives `metadata.generation`,
//!   which is what dependants recorded before, and the connection's first status write records
//!   the current generation as the one its digest last changed at.
//! - Pure and bounded: a 64-character digest, the same in every process.

use super::spec_digest::digest_without;
use crate::api::{
    ClusterFerrVaultConnection, ClusterFerrVaultConnectionSpec, FerrVaultConnection, FerrVaultConnectionSpec,
};

/// The fields of a FerrVaultConnection's spec its FerrVaultSecrets do not depend on: pausing,
/// and how changes are detected (switching to `Versions` must not reveal every dependant again).
const NOT_INPUTS: &[&str] = &["suspend", "changeDetection"];

/// The fields of a ClusterFerrVaultConnection's spec its FerrVaultSecrets do not depend on
/// (`changeDetection` as a FerrVaultConnection's).
const CLUSTER_NOT_INPUTS: &[&str] = &["suspend", "allowedNamespaces", "revocation", "changeDetection"];

/// The digest of what `spec`'s FerrVaultSecrets depend on.
pub(crate) fn connection_input_digest(spec: &FerrVaultConnectionSpec) -> String {
    digest_without(spec, NOT_INPUTS)
}

/// The digest of what `spec`'s FerrVaultSecrets depend on.
pub(crate) fn cluster_input_digest(spec: &ClusterFerrVaultConnectionSpec) -> String {
    digest_without(spec, CLUSTER_NOT_INPUTS)
}

/// The input generation of a spec with `digest` at `generation`, given what status recorded
/// (`recorded`: the digest and the generation it changed at): the recorded generation when the
/// digest is the same, else `generation`. What a status write records, and what a dependant
/// reads.
pub(crate) fn input_generation(
    recorded: (Option<&str>, Option<i64>),
    digest: &str,
    generation: Option<i64>,
) -> Option<i64> {
    match recorded {
        (Some(recorded_digest), Some(at)) if recorded_digest == digest => Some(at),
        _ => generation,
    }
}

/// `connection`'s input generation as its FerrVaultSecrets record it.
pub(crate) fn connection_input_generation(connection: &FerrVaultConnection) -> Option<i64> {
    let status = connection.status.as_ref();
    let recorded = (
        status.and_then(|s| s.input_digest.as_deref()),
        status.and_then(|s| s.input_generation),
    );
    input_generation(
        recorded,
        &connection_input_digest(&connection.spec),
        connection.metadata.generation,
    )
}

/// `connection`'s input generation as its FerrVaultSecrets record it.
pub(crate) fn cluster_input_generation(connection: &ClusterFerrVaultConnection) -> Option<i64> {
    let status = connection.status.as_ref();
    let recorded = (
        status.and_then(|s| s.input_digest.as_deref()),
        status.and_then(|s| s.input_generation),
    );
    input_generation(
        recorded,
        &cluster_input_digest(&connection.spec),
        connection.metadata.generation,
    )
}

#[cfg(test)]
mod tests;
