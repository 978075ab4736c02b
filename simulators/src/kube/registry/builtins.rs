//! The built-in resource types a fresh cluster serves.

use super::ResourceType;

/// Every built-in type: stored kinds, then the reviews.
pub(super) fn builtin_types() -> Vec<ResourceType> {
    let b = ResourceType::builtin;
    let builtins = [
        b("", "v1", "namespaces", "Namespace", false, &["ns"], true),
        b("", "v1", "secrets", "Secret", true, &[], false),
        b("", "v1", "configmaps", "ConfigMap", true, &["cm"], false),
        b(
            "",
            "v1",
            "serviceaccounts",
            "ServiceAccount",
            true,
            &["sa"],
            false,
        ),
        b("", "v1", "services", "Service", true, &["svc"], true),
        b("", "v1", "pods", "Pod", true, &["po"], true),
        b("", "v1", "events", "Event", true, &["ev"], false),
        // One Event resource served through both APIs, as the real server does.
        b("events.k8s.io", "v1", "events", "Event", true, &["ev"], false).serving(&b(
            "",
            "v1",
            "events",
            "Event",
            true,
            &["ev"],
            false,
        )),
        b("apps", "v1", "deployments", "Deployment", true, &["deploy"], true),
        b("apps", "v1", "statefulsets", "StatefulSet", true, &["sts"], true),
        b("apps", "v1", "daemonsets", "DaemonSet", true, &["ds"], true),
        b("apps", "v1", "replicasets", "ReplicaSet", true, &["rs"], true),
        b("batch", "v1", "jobs", "Job", true, &[], true),
        b("coordination.k8s.io", "v1", "leases", "Lease", true, &[], false),
        // What a Helm chart installs besides workloads: stored; access reviews read them (see
        // `auth`), requests are not authorized against them.
        b(
            "rbac.authorization.k8s.io",
            "v1",
            "roles",
            "Role",
            true,
            &[],
            false,
        ),
        b(
            "rbac.authorization.k8s.io",
            "v1",
            "rolebindings",
            "RoleBinding",
            true,
            &[],
            false,
        ),
        b(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterroles",
            "ClusterRole",
            false,
            &[],
            false,
        ),
        b(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterrolebindings",
            "ClusterRoleBinding",
            false,
            &[],
            false,
        ),
        b(
            "policy",
            "v1",
            "poddisruptionbudgets",
            "PodDisruptionBudget",
            true,
            &["pdb"],
            true,
        ),
        b(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "CustomResourceDefinition",
            false,
            &["crd", "crds"],
            true,
        ),
    ];
    let r = ResourceType::review;
    let reviews = [
        r(
            "authorization.k8s.io",
            "selfsubjectaccessreviews",
            "SelfSubjectAccessReview",
            false,
        ),
        r(
            "authorization.k8s.io",
            "subjectaccessreviews",
            "SubjectAccessReview",
            false,
        ),
        r(
            "authorization.k8s.io",
            "localsubjectaccessreviews",
            "LocalSubjectAccessReview",
            true,
        ),
        r(
            "authorization.k8s.io",
            "selfsubjectrulesreviews",
            "SelfSubjectRulesReview",
            false,
        ),
        r("authentication.k8s.io", "tokenreviews", "TokenReview", false),
        r(
            "authentication.k8s.io",
            "selfsubjectreviews",
            "SelfSubjectReview",
            false,
        ),
    ];
    builtins.into_iter().chain(reviews).collect()
}
