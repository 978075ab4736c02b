//! Which watch events deserve a reconcile: pure functions over object metadata.
//!
//! The API server sends an event for every write, including status writes (our own, after each
//! reconcile), `managedFields` churn and re-lists that repeat unchanged objects. Enqueueing all
//! of them would make every reconcile trigger another one. These rules keep what a reconcile
//! can act on.
//!
//! # Guarantees
//! - A first sighting (no previous version) always matters: the first pass after a start
//!   reconciles everything once. So does the first list of each controllers term (the stream
//!   passes no previous version then: `watcher/stream.rs`), since the keys of the term before
//!   went with its queue.
//! - An unchanged `resourceVersion` never matters (a re-list repeating what we have).
//! - For kinds with `metadata.generation` (custom resources with a status subresource), a
//!   write that changes neither the generation nor the labels, annotations, owner references,
//!   finalizers or deletion timestamp does not matter: it was a status or managedFields write.
//! - For kinds without a generation (Secrets, ConfigMaps) metadata cannot tell content changes
//!   from no-ops, so any new `resourceVersion` matters.
//! - Deletions always matter (decided by the caller: a delete has no "new" version).

use kube::api::ObjectMeta;

/// Whether the change from `old` (our previous version, `None` if never seen) to `new` matters.
pub(crate) fn metadata_change_matters(old: Option<&ObjectMeta>, new: &ObjectMeta) -> bool {
    let Some(old) = old else {
        return true;
    };
    if old.resource_version.is_some() && old.resource_version == new.resource_version {
        return false;
    }
    if new.generation.is_none() {
        return true;
    }
    old.generation != new.generation
        || old.deletion_timestamp != new.deletion_timestamp
        || old.finalizers != new.finalizers
        || old.labels != new.labels
        || old.annotations != new.annotations
        || old.owner_references != new.owner_references
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};

    use super::*;

    fn meta(rv: &str, generation: Option<i64>) -> ObjectMeta {
        ObjectMeta {
            name: Some("app".into()),
            namespace: Some("ns".into()),
            resource_version: Some(rv.into()),
            generation,
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn first_sighting_should_matter() {
        assert!(metadata_change_matters(None, &meta("1", Some(1))));
        assert!(metadata_change_matters(None, &meta("1", None)));
    }

    #[test]
    fn unchanged_resource_version_should_not_matter() {
        assert!(!metadata_change_matters(
            Some(&meta("7", Some(2))),
            &meta("7", Some(2))
        ));
        assert!(!metadata_change_matters(Some(&meta("7", None)), &meta("7", None)));
    }

    #[test]
    fn status_only_write_should_not_matter() {
        let old = meta("7", Some(2));
        let mut new = meta("8", Some(2));
        new.managed_fields = Some(Vec::new());
        assert!(!metadata_change_matters(Some(&old), &new));
    }

    #[test]
    fn new_generation_should_matter() {
        assert!(metadata_change_matters(
            Some(&meta("7", Some(2))),
            &meta("8", Some(3))
        ));
    }

    #[test]
    fn each_metadata_field_a_reconcile_acts_on_should_matter() {
        let old = meta("7", Some(2));
        type Edit = fn(&mut ObjectMeta);
        let edits: [(&str, Edit); 5] = [
            ("deletionTimestamp", |m| {
                m.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH))
            }),
            ("finalizers", |m| {
                m.finalizers = Some(vec!["ferrvault.com/cleanup".into()])
            }),
            ("labels", |m| {
                m.labels = Some(BTreeMap::from([("a".into(), "b".into())]))
            }),
            ("annotations", |m| {
                m.annotations = Some(BTreeMap::from([("a".into(), "b".into())]))
            }),
            ("ownerReferences", |m| {
                m.owner_references = Some(vec![OwnerReference::default()])
            }),
        ];
        for (field, edit) in edits {
            let mut new = meta("8", Some(2));
            edit(&mut new);
            assert!(
                metadata_change_matters(Some(&old), &new),
                "a change of {field} must matter"
            );
        }
    }

    #[test]
    fn any_new_version_of_a_kind_without_generation_should_matter() {
        assert!(metadata_change_matters(Some(&meta("7", None)), &meta("8", None)));
    }
}
