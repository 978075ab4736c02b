//! RBAC least privilege, decided by [`crate::rbac::Permissions`] like the RBAC authorizer.

use crate::*;

fn permissions(sets: &[&str]) -> Permissions {
    let rendering = Rendering::new(sets);
    let account = rendering.names_of("ServiceAccount");
    assert_eq!(account.len(), 1, "one ServiceAccount expected: {account:?}");
    Permissions::of_service_account(&rendering.objects, NAMESPACE, &account[0])
}

fn request<'a>(
    verb: &'a str,
    group: &'a str,
    resource: &'a str,
    namespace: Option<&'a str>,
) -> ApiRequest<'a> {
    ApiRequest {
        verb,
        group,
        resource,
        namespace,
        name: None,
    }
}

/// What the operator does in `namespace` (`None`: across the cluster), all of which must be allowed.
fn operator_requests(namespace: Option<&str>) -> Vec<ApiRequest<'_>> {
    let mut requests = Vec::new();
    for resource in ["ferrvaultsecrets", "ferrvaultconnections"] {
        for verb in ["get", "list", "watch", "patch"] {
            requests.push(request(verb, "ferrvault.com", resource, namespace));
        }
    }
    for resource in ["ferrvaultsecrets/status", "ferrvaultconnections/status"] {
        requests.push(request("patch", "ferrvault.com", resource, namespace));
    }
    requests.push(request(
        "update",
        "ferrvault.com",
        "ferrvaultsecrets/finalizers",
        namespace,
    ));
    // `delete` replaces a target whose immutable `type` must change.
    for verb in ["get", "list", "watch", "create", "update", "delete"] {
        requests.push(request(verb, "", "secrets", namespace));
    }
    for resource in ["deployments", "statefulsets", "daemonsets"] {
        requests.extend([
            request("get", "apps", resource, namespace),
            request("patch", "apps", resource, namespace),
        ]);
    }
    requests.push(request("create", "events.k8s.io", "events", namespace));
    requests.push(request("patch", "events.k8s.io", "events", namespace));
    requests
}

/// Requests the operator must never be able to make anywhere.
fn forbidden_requests(namespace: Option<&str>) -> Vec<ApiRequest<'_>> {
    vec![
        request("deletecollection", "", "secrets", namespace),
        request("delete", "ferrvault.com", "ferrvaultsecrets", namespace),
        request("create", "ferrvault.com", "ferrvaultsecrets", namespace),
        request("list", "apps", "deployments", namespace),
        request("update", "apps", "deployments", namespace),
        request("get", "", "configmaps", namespace),
        request("create", "", "pods", namespace),
        // Verbs the operator never sends.
        request("patch", "", "secrets", namespace),
        request("update", "ferrvault.com", "ferrvaultsecrets", namespace),
        request(
            "update",
            "ferrvault.com",
            "ferrvaultconnections/status",
            namespace,
        ),
        request(
            "update",
            "ferrvault.com",
            "ferrvaultconnections/finalizers",
            namespace,
        ),
        request("create", "", "events", namespace),
        request("create", "authentication.k8s.io", "tokenreviews", None),
    ]
}

#[test]
fn cluster_wide_rbac_should_allow_the_operators_calls_and_nothing_more() {
    let permissions = permissions(DEFAULTS);
    for namespace in [None, Some("apps")] {
        for request in operator_requests(namespace) {
            assert!(permissions.allows(&request), "denied: {request:?}");
        }
        for request in forbidden_requests(namespace) {
            assert!(!permissions.allows(&request), "allowed: {request:?}");
        }
    }
}

#[test]
fn only_the_operators_lease_should_be_read_and_renewed_in_the_release_namespace() {
    const LEASE: &str = "ferrvault-operator.ferrvault.com";
    let permissions = permissions(DEFAULTS);
    let named = |verb, name| ApiRequest {
        name: Some(name),
        ..request(verb, "coordination.k8s.io", "leases", Some(NAMESPACE))
    };
    for verb in ["get", "update"] {
        assert!(permissions.allows(&named(verb, LEASE)), "{verb} of the Lease");
        assert!(
            !permissions.allows(&named(verb, "another-lease")),
            "{verb} of another Lease"
        );
    }
    assert!(permissions.allows(&request(
        "create",
        "coordination.k8s.io",
        "leases",
        Some(NAMESPACE)
    )));
    for verb in ["patch", "list", "watch", "delete"] {
        assert!(!permissions.allows(&named(verb, LEASE)), "{verb} is never sent");
    }
    for namespace in [None, Some("kube-system"), Some("apps")] {
        let lease = request("create", "coordination.k8s.io", "leases", namespace);
        assert!(
            !permissions.allows(&lease),
            "allowed outside the release namespace: {lease:?}"
        );
    }
    assert!(!permissions.allows(&request(
        "delete",
        "coordination.k8s.io",
        "leases",
        Some(NAMESPACE)
    )));
}

#[test]
fn watch_namespaces_should_grant_a_role_in_each_merged_with_the_go_value_and_nothing_elsewhere() {
    let sets = &["watchNamespaces={apps,team-a}", "watchNamespace=team-b"];
    let permissions = permissions(sets);
    for namespace in ["apps", "team-a", "team-b"] {
        for request in operator_requests(Some(namespace)) {
            assert!(permissions.allows(&request), "denied in {namespace}: {request:?}");
        }
    }
    for request in operator_requests(Some("other"))
        .into_iter()
        .chain(operator_requests(None))
    {
        assert!(!permissions.allows(&request), "allowed outside: {request:?}");
    }
    assert_eq!(
        launch(sets).flag("watch-namespace"),
        Some(Some("apps,team-a,team-b".to_owned())),
        "the operator watches each of them"
    );
    let repeated = launch(&["watchNamespaces={apps}", "watchNamespace=apps"]);
    assert_eq!(repeated.flag("watch-namespace"), Some(Some("apps".to_owned())));
}

#[test]
fn rollout_restart_kinds_should_bound_workload_access() {
    let only_deployments = permissions(&["rbac.rolloutRestartKinds={deployments}"]);
    assert!(only_deployments.allows(&request("patch", "apps", "deployments", Some("apps"))));
    for kind in ["statefulsets", "daemonsets"] {
        assert!(
            !only_deployments.allows(&request("get", "apps", kind, Some("apps"))),
            "{kind}"
        );
    }
    let none = Rendering::new(&["rbac.rolloutRestartKinds=null"]);
    assert!(
        !none.yaml.contains("apiGroups: [\"apps\"]"),
        "no workload rule without kinds"
    );
}

#[test]
fn secure_metrics_should_grant_reviews_to_the_operator_and_a_reader_role_for_scrapers() {
    let secure = &["metrics.secure.enabled=true"];
    let permissions = permissions(secure);
    for (group, resource) in [
        ("authentication.k8s.io", "tokenreviews"),
        ("authorization.k8s.io", "subjectaccessreviews"),
    ] {
        assert!(
            permissions.allows(&request("create", group, resource, None)),
            "{resource}"
        );
    }
    let rendering = Rendering::new(secure);
    let reader = rendering
        .of_kind("ClusterRole")
        .into_iter()
        .find(|role| role["metadata"]["name"] == "fv-ferrvault-operator-metrics-reader")
        .expect("a metrics-reader ClusterRole");
    assert_eq!(
        reader["rules"],
        serde_json::json!([{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}])
    );
    assert!(
        rendering
            .names_of("ClusterRoleBinding")
            .iter()
            .all(|name| !name.ends_with("-metrics-reader")),
        "nobody reads metrics until bound"
    );
}

/// The ClusterRoles of the cluster kinds (docs/cluster-scope.md), rendered in both modes: the
/// operator's read-only one, and the one for cluster admins.
const CLUSTER_KINDS_ROLES: [&str; 2] = [
    "fv-ferrvault-operator-cluster-kinds",
    "fv-ferrvault-operator-cluster-kinds-admin",
];

#[test]
fn the_cluster_kinds_should_be_read_for_the_operator_and_managed_only_by_a_cluster_role_for_admins() {
    for sets in [DEFAULTS, WATCH_NAMESPACE] {
        let permissions = permissions(sets);
        for resource in [
            ("ferrvault.com", "clusterferrvaultconnections"),
            ("", "namespaces"),
        ] {
            for verb in ["list", "watch"] {
                assert!(
                    permissions.allows(&request(verb, resource.0, resource.1, None)),
                    "{verb} {resource:?}"
                );
            }
            for verb in ["get", "create", "update", "patch", "delete"] {
                assert!(
                    !permissions.allows(&request(verb, resource.0, resource.1, None)),
                    "{verb} {resource:?}"
                );
            }
        }
        let status = request(
            "patch",
            "ferrvault.com",
            "clusterferrvaultconnections/status",
            None,
        );
        assert!(permissions.allows(&status), "its status");
        let rendering = Rendering::new(sets);
        let admin = rendering
            .of_kind("ClusterRole")
            .into_iter()
            .find(|role| role["metadata"]["name"] == CLUSTER_KINDS_ROLES[1])
            .expect("the admins' ClusterRole");
        assert_eq!(
            admin["rules"][0]["resources"],
            serde_json::json!(["clusterferrvaultconnections", "clusterferrvaultsecrets"]),
            "{admin}"
        );
    }
}

#[test]
fn watch_namespace_should_grant_a_role_in_that_namespace_and_only_the_cluster_kinds_cluster_wide() {
    let rendering = Rendering::new(WATCH_NAMESPACE);
    assert_eq!(
        rendering.names_of("ClusterRole"),
        CLUSTER_KINDS_ROLES,
        "only the cluster kinds' roles are cluster-wide"
    );
    assert_eq!(
        rendering.names_of("ClusterRoleBinding"),
        ["fv-ferrvault-operator-cluster-kinds"],
        "the admin role is bound to nobody"
    );
    let permissions = permissions(WATCH_NAMESPACE);
    for request in operator_requests(Some("apps")) {
        assert!(
            permissions.allows(&request),
            "denied in the watched namespace: {request:?}"
        );
    }
    for request in operator_requests(Some("other"))
        .into_iter()
        .chain(operator_requests(None))
    {
        assert!(
            !permissions.allows(&request),
            "allowed outside the watched namespace: {request:?}"
        );
    }
    let lease = ApiRequest {
        name: Some("ferrvault-operator.ferrvault.com"),
        ..request("update", "coordination.k8s.io", "leases", Some(NAMESPACE))
    };
    assert!(
        permissions.allows(&lease),
        "the Lease stays in the release namespace"
    );
}

#[test]
fn the_content_hash_key_secret_should_be_readable_by_name_and_creatable_in_the_release_namespace_only() {
    const KEY: &str = ferrvault_operator::CONTENT_HASH_KEY_SECRET;
    // With watchNamespace no other rule grants Secrets in the release namespace: these are the
    // key Secret's own.
    let namespaced = permissions(WATCH_NAMESPACE);
    let without_election = permissions(LEADER_ELECTION_OFF);
    let named = |verb, name| ApiRequest {
        name: Some(name),
        ..request(verb, "", "secrets", Some(NAMESPACE))
    };
    assert!(namespaced.allows(&named("get", KEY)));
    assert!(namespaced.allows(&request("create", "", "secrets", Some(NAMESPACE))));
    assert!(
        !namespaced.allows(&named("get", "another-secret")),
        "only the key Secret is readable by name"
    );
    for verb in ["update", "patch", "delete", "list", "watch"] {
        assert!(
            !namespaced.allows(&named(verb, KEY)),
            "{verb} of the key Secret: a key changes only by delete-and-restart, by an admin"
        );
    }
    assert!(
        !namespaced.allows(&request("create", "", "secrets", Some("other"))),
        "nothing outside the release and watched namespaces"
    );
    assert!(
        without_election.allows(&named("get", KEY)),
        "the key does not depend on leader election"
    );
}

#[test]
fn leader_election_off_should_grant_no_lease_access() {
    let permissions = permissions(LEADER_ELECTION_OFF);
    assert!(!permissions.allows(&request("get", "coordination.k8s.io", "leases", Some(NAMESPACE))));
}

#[test]
fn rbac_and_service_account_off_should_grant_nothing_and_use_the_named_account() {
    let rendering = Rendering::new(&[
        "rbac.create=false",
        "serviceAccount.create=false",
        "serviceAccount.name=ops",
    ]);
    for kind in [
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "ServiceAccount",
    ] {
        assert!(
            rendering.of_kind(kind).is_empty(),
            "{kind} rendered with rbac.create=false"
        );
    }
    assert_eq!(
        pod_spec(&deployment(&rendering)).service_account_name.as_deref(),
        Some("ops")
    );
}
