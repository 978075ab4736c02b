//! Finalizer names and annotation keys the operator reads and writes.
//!
//! # Guarantees
//! The strings are the Go operator's (reference §3.2, §3.5, §4), so a cluster can move from it to
//! this operator without orphaned finalizers, spurious rollouts or re-adopted Secrets.

/// Finalizer on `FerrVaultSecret`: removed once the pre-delete cleanup (metrics series) is done.
/// The target Secret itself is removed by owner-reference garbage collection.
pub const SECRET_FINALIZER: &str = "ferrvault.com/secret-cleanup";

/// Finalizer on `FerrVaultConnection`: held while any FerrVaultSecret still references it.
pub const CONNECTION_FINALIZER: &str = "ferrvault.com/connection-cleanup";

/// Finalizer on `ClusterFerrVaultSecret`: removed once its copies are deleted (or, under
/// `deletionPolicy: Retain`, unlabelled).
pub const CLUSTER_SECRET_FINALIZER: &str = "ferrvault.com/cluster-secret-cleanup";

/// Label on each copy a ClusterFerrVaultSecret writes: its UID. Owner references cannot cross
/// namespaces, so this label is what marks a Secret as a copy; a cluster secret writes and
/// deletes only Secrets carrying its own UID here (or absent, to create them).
pub const CLUSTER_SECRET_UID_LABEL: &str = "ferrvault.com/cluster-secret-uid";

/// Annotation on a target Secret naming its writer; its value is [`MANAGED_BY_VALUE`].
pub const MANAGED_BY_ANNOTATION: &str = "ferrvault.com/managed-by";

/// The value of [`MANAGED_BY_ANNOTATION`].
pub const MANAGED_BY_VALUE: &str = "ferrvault-operator";

/// Annotation on a target Secret: the content hash (see `reconcile::rules::content::content_hash`)
/// of the data the operator last wrote. A mismatch with the data means someone edited the Secret
/// (drift).
pub const CONTENT_HASH_ANNOTATION: &str = "ferrvault.com/content-hash";

/// Annotation on a Secret, set by whoever controls it, letting one FerrVaultSecret of the same
/// namespace take it over: its value is that FerrVaultSecret's name. Without it a Secret that
/// exists without the FerrVaultSecret's controller owner reference is never written.
pub const ADOPTABLE_BY_ANNOTATION: &str = "ferrvault.com/adoptable-by";

/// Annotation on a FerrVaultSecret or FerrVaultConnection asking for a sync now: a pass is due
/// while its value differs from `status.observedForceSync` (any value; a new one forces again).
/// The only annotation of the custom resources the operator reads.
pub const FORCE_SYNC_ANNOTATION: &str = "ferrvault.com/force-sync";

/// Pod-template annotation set on a rollout restart: UTC time of the restart, RFC 3339 with
/// nanoseconds. Changing the pod template is what makes the workload controller roll the pods.
pub const RESTARTED_AT_ANNOTATION: &str = "ferrvault.com/restarted-at";

/// Prefix of the per-CR pod-template annotation; see [`workload_content_hash_annotation`].
pub const WORKLOAD_CONTENT_HASH_PREFIX: &str = "ferrvault.com/content-hash.";

/// The pod-template annotation `ferrvault.com/content-hash.<uid>` recording which content hash
/// of the FerrVaultSecret with this UID the workload was last restarted for.
///
/// # Guarantees
/// One key per FerrVaultSecret, so several FerrVaultSecrets restarting one workload never
/// overwrite each other's idempotency record. With a 36-character UID the name part is 49
/// characters, inside the 63-character limit of an annotation name.
pub fn workload_content_hash_annotation(cr_uid: &str) -> String {
    format!("{WORKLOAD_CONTENT_HASH_PREFIX}{cr_uid}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_cr_annotation_name_should_fit_the_63_character_limit_for_a_uid() {
        let key = workload_content_hash_annotation("0b6f7e2c-1d2e-4f00-8a9b-0123456789ab");
        let (prefix, name) = key.split_once('/').expect("prefixed annotation");
        assert_eq!(prefix, "ferrvault.com");
        assert!(name.len() <= 63, "{name} is {} characters", name.len());
    }
}
