//! apimachinery `meta/v1` messages: object and list metadata, `Status`, `DeleteOptions`, label selectors, conditions.
//!
//! Field lists generated from k8s-pb's messages; JSON names checked against k8s-openapi.

use super::convert::messages;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;

messages! {
    meta::Status { metadata, status, message, reason, details, code }
    meta::DeleteOptions {
        grace_period_seconds: keep, preconditions, orphan_dependents: keep,
        propagation_policy: keep, dry_run,
        ignore_store_read_error_with_cluster_breaking_potential: keep
    }
    meta::ObjectMeta {
        name, generate_name, namespace, self_link, uid, resource_version, generation,
        creation_timestamp, deletion_timestamp: keep, deletion_grace_period_seconds: keep, labels,
        annotations, owner_references, finalizers, managed_fields
    }
    meta::ListMeta { self_link, resource_version, r#continue, remaining_item_count: keep }
    meta::StatusDetails { name, group, kind, uid, causes, retry_after_seconds }
    meta::Preconditions { uid: keep, resource_version: keep }
    meta::OwnerReference {
        api_version: keep, kind: keep, name: keep, uid: keep, controller: keep,
        block_owner_deletion: keep
    }
    meta::ManagedFieldsEntry {
        manager, operation, api_version, time: keep, fields_type, fields_v1, subresource
    }
    meta::Condition {
        r#type: keep, status: keep, observed_generation, last_transition_time: keep, reason: keep,
        message: keep
    }
    meta::LabelSelector { match_labels, match_expressions }
    meta::StatusCause { reason, message, field }
    meta::FieldSelectorRequirement { key: keep, operator: keep, values }
    meta::LabelSelectorRequirement { key: keep, operator: keep, values }
}
