//! `rbac.authorization.k8s.io/v1` roles and bindings.
//!
//! Field lists generated from k8s-pb's messages; JSON names checked against k8s-openapi.

use super::convert::messages;
use k8s_pb::api::rbac::v1 as rbac;

messages! {
    rbac::Role { metadata, rules }
    rbac::RoleList { metadata, items }
    rbac::RoleBinding { metadata, subjects, role_ref }
    rbac::RoleBindingList { metadata, items }
    rbac::ClusterRole { metadata, rules, aggregation_rule }
    rbac::ClusterRoleList { metadata, items }
    rbac::ClusterRoleBinding { metadata, subjects, role_ref }
    rbac::ClusterRoleBindingList { metadata, items }
    rbac::PolicyRule {
        verbs, api_groups, resources, resource_names, non_resource_ur_ls: "nonResourceURLs"
    }
    rbac::Subject { kind: keep, api_group, name: keep, namespace }
    rbac::RoleRef { api_group: keep, kind: keep, name: keep }
    rbac::AggregationRule { cluster_role_selectors }
}
