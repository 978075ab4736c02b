//! What each resource's registry strategy decides about generations and unconditional
//! updates, as the kube-apiserver v1.33 strategies do (`pkg/registry/**/strategy.go`, the
//! apiextensions `customresource` and `customresourcedefinition` strategies).
//!
//! # Guarantees
//! - Only kinds whose strategy sets `metadata.generation` have one: workloads (Deployments,
//!   StatefulSets, DaemonSets, ReplicaSets, Jobs), Pods, PodDisruptionBudgets, CRDs and
//!   every custom resource. Secrets, ConfigMaps, Namespaces, Leases, Events, Services,
//!   ServiceAccounts and RBAC objects never carry one.
//! - A PUT without `metadata.resourceVersion` is refused (422) for the kinds whose strategy
//!   says `AllowUnconditionalUpdate() == false`: Leases, PodDisruptionBudgets, CRDs and
//!   custom resources. Other built-ins take it as "overwrite whatever is stored".

use super::{
    errors::ApiError,
    field_errors::{BadValue, FieldError},
    registry::ResourceType,
};
use serde_json::Value;

/// When an update bumps `metadata.generation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// The kind has no generation.
    None,
    /// A change of `spec`.
    Spec,
    /// A change of `spec` or of the annotations (Deployments copy their annotations to
    /// their ReplicaSets, so the controller must see them as a new generation).
    SpecOrAnnotations,
    /// A change of anything outside `metadata` (custom resources; with a `/status`
    /// subresource the main endpoint cannot change `status`, so in effect `spec` and the
    /// other top-level fields).
    AllButMetadata,
}

/// The generation policy of `rt`'s strategy.
pub fn generation(rt: &ResourceType) -> Generation {
    if rt.is_custom() {
        return Generation::AllButMetadata;
    }
    match (rt.group.as_str(), rt.plural.as_str()) {
        ("apps", "deployments") => Generation::SpecOrAnnotations,
        ("apps", "statefulsets" | "daemonsets" | "replicasets")
        | ("batch", "jobs")
        | ("", "pods")
        | ("policy", "poddisruptionbudgets")
        | ("apiextensions.k8s.io", "customresourcedefinitions") => Generation::Spec,
        _ => Generation::None,
    }
}

/// The generation `new` gets when it replaces `old` (`old`'s, bumped when the policy says).
pub fn next_generation(rt: &ResourceType, old: &Value, new: &Value) -> Option<i64> {
    let current = old
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let changed = |pointer: &str| old.pointer(pointer) != new.pointer(pointer);
    let bump = match generation(rt) {
        Generation::None => return None,
        Generation::Spec => changed("/spec"),
        Generation::SpecOrAnnotations => changed("/spec") || changed("/metadata/annotations"),
        Generation::AllButMetadata => all_but_metadata(old) != all_but_metadata(new),
    };
    Some(current + i64::from(bump))
}

fn all_but_metadata(obj: &Value) -> Value {
    let mut rest = obj.clone();
    if let Some(map) = rest.as_object_mut() {
        map.remove("metadata");
    }
    rest
}

/// `AllowUnconditionalUpdate` of `rt`'s strategy.
pub fn allows_unconditional_update(rt: &ResourceType) -> bool {
    !rt.is_custom()
        && !matches!(
            (rt.group.as_str(), rt.plural.as_str()),
            ("coordination.k8s.io", "leases")
                | ("policy", "poddisruptionbudgets")
                | ("apiextensions.k8s.io", "customresourcedefinitions")
        )
}

/// Refuses a PUT of `name` without a resourceVersion where the strategy requires one, in
/// the words of the generic registry (which names the resource, not the kind:
/// `leases.coordination.k8s.io "x" is invalid: metadata.resourceVersion: Invalid value: 0x0:
/// must be specified for an update`).
///
/// # Errors
/// 422 Invalid.
pub fn check_conditional_update(rt: &ResourceType, name: &str, body: &Value) -> Result<(), ApiError> {
    let submitted = body
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !matches!(submitted, "" | "0") || allows_unconditional_update(rt) {
        return Ok(());
    }
    Err(ApiError::invalid_fields(
        &rt.group,
        &rt.plural,
        name,
        &[FieldError::invalid(
            "metadata.resourceVersion",
            BadValue::GoSyntax("0x0".into()),
            "must be specified for an update",
        )],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kube::registry::Registry;
    use serde_json::json;

    #[test]
    fn only_kinds_with_a_spec_status_split_should_have_a_generation() {
        for (group, plural) in [
            ("", "secrets"),
            ("", "configmaps"),
            ("", "namespaces"),
            ("coordination.k8s.io", "leases"),
        ] {
            assert_eq!(
                generation(&Registry::builtin_type(group, plural)),
                Generation::None,
                "{plural}"
            );
        }
        assert_eq!(
            generation(&Registry::builtin_type("apps", "statefulsets")),
            Generation::Spec
        );
    }

    #[test]
    fn deployment_annotations_should_bump_the_generation() {
        let deployments = Registry::builtin_type("apps", "deployments");
        let old = json!({"metadata": {"generation": 3}, "spec": {"replicas": 1}});
        let annotated = json!({"metadata": {"annotations": {"a": "b"}}, "spec": {"replicas": 1}});
        assert_eq!(next_generation(&deployments, &old, &annotated), Some(4));
        let labelled = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"replicas": 1}});
        assert_eq!(next_generation(&deployments, &old, &labelled), Some(3));
    }

    #[test]
    fn a_put_without_resource_version_should_be_refused_only_where_the_strategy_says() {
        let body = json!({"metadata": {"name": "x"}});
        assert!(check_conditional_update(&Registry::builtin_type("", "secrets"), "x", &body).is_ok());
        let e = check_conditional_update(
            &Registry::builtin_type("coordination.k8s.io", "leases"),
            "x",
            &body,
        )
        .expect_err("leases need a resourceVersion");
        assert_eq!(
            e.message,
            "leases.coordination.k8s.io \"x\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
        );
        let with_rv = json!({"metadata": {"name": "x", "resourceVersion": "7"}});
        assert!(
            check_conditional_update(
                &Registry::builtin_type("coordination.k8s.io", "leases"),
                "x",
                &with_rv
            )
            .is_ok()
        );
    }
}
