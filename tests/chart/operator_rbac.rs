//! The rendered RBAC against what the operator really does ([`audited_run`]): every request it
//! made under the rendered ServiceAccount must be allowed by the rendered rules, and every rule
//! must be used by some request (least privilege both ways).

use std::collections::BTreeSet;

use ferrvault_operator::CONTENT_HASH_KEY_SECRET;

use crate::{
    audited_run::{AuditedRun, SCRAPER_SETS, audited_run, resource_of},
    *,
};

/// Each request with its `resource/subresource`, for [`ApiRequest`]s borrowing from it.
fn with_resources<'a>(
    entries: impl Iterator<Item = &'a ferrvault_sim::kube::AuditEntry>,
) -> Vec<(&'a ferrvault_sim::kube::AuditEntry, String)> {
    entries.map(|entry| (entry, resource_of(entry))).collect()
}

fn request<'a>(entry: &'a ferrvault_sim::kube::AuditEntry, resource: &'a str) -> ApiRequest<'a> {
    ApiRequest {
        verb: &entry.verb,
        group: &entry.group,
        resource,
        namespace: Some(entry.namespace.as_str()).filter(|ns| !ns.is_empty()),
        name: Some(entry.name.as_str()).filter(|name| !name.is_empty()),
    }
}

/// Every audited request is allowed, and the run did what the RBAC is for.
fn assert_every_call_allowed(run: &AuditedRun, sets: &[&str]) {
    let requests = with_resources(run.requests.iter());
    let mut seen = BTreeSet::new();
    let mut denied = BTreeSet::new();
    for (entry, resource) in &requests {
        if !run.permissions.allows(&request(entry, resource)) {
            denied.insert(format!(
                "{} {}/{resource} ns={} name={}",
                entry.verb, entry.group, entry.namespace, entry.name
            ));
        }
        seen.insert(format!("{} {}/{resource}", entry.verb, entry.group));
    }
    for expected in [
        "watch ferrvault.com/ferrvaultsecrets",
        "patch ferrvault.com/ferrvaultsecrets/status",
        "patch ferrvault.com/ferrvaultconnections/status",
        "create /secrets",
        "delete /secrets",
        "get apps/deployments",
        "patch apps/statefulsets",
        "patch apps/daemonsets",
        "create events.k8s.io/events",
        "create coordination.k8s.io/leases",
    ] {
        assert!(
            seen.contains(expected),
            "{sets:?}: the operator never did {expected:?}; it did {seen:#?}"
        );
    }
    // The content-hash key Secret: read (and created on this first start) in the release namespace.
    for verb in ["get", "create"] {
        assert!(
            run.requests.iter().any(|e| e.verb == verb
                && e.resource == "secrets"
                && e.namespace == NAMESPACE
                && (verb == "create" || e.name == CONTENT_HASH_KEY_SECRET)),
            "{sets:?}: the operator never did {verb} of its content-hash key Secret"
        );
    }
    assert!(
        denied.is_empty(),
        "{sets:?}: requests the rendered RBAC does not allow:\n{}",
        denied.into_iter().collect::<Vec<_>>().join("\n")
    );
    // And the check can fail: the setup's own requests include ones the account may not make.
    assert!(
        !run.permissions.allows(&ApiRequest {
            verb: "create",
            group: "apiextensions.k8s.io",
            resource: "customresourcedefinitions",
            namespace: None,
            name: None,
        }),
        "the ServiceAccount must not create CRDs"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_api_call_the_operator_makes_under_the_rendered_service_account_should_be_allowed_by_the_rendered_rbac()
 {
    let run = audited_run(DEFAULTS).await;
    assert_every_call_allowed(&run, DEFAULTS);
}

#[tokio::test(flavor = "multi_thread")]
async fn with_watch_namespaces_every_api_call_should_be_allowed_by_the_roles_of_each_namespace() {
    let sets = &["watchNamespaces={demo,other}"];
    let run = audited_run(sets).await;
    // Only the cluster kinds are cluster-wide (docs/cluster-scope.md): the operator's read-only
    // role for them and the admins' role.
    assert!(
        run.rendering
            .names_of("ClusterRole")
            .iter()
            .all(|name| name.ends_with("-cluster-kinds") || name.ends_with("-cluster-kinds-admin")),
        "{:?}",
        run.rendering.names_of("ClusterRole")
    );
    let roles: BTreeSet<&str> = run
        .rendering
        .of_kind("Role")
        .into_iter()
        .filter_map(|role| role["metadata"]["namespace"].as_str())
        .collect();
    assert!(roles.contains("demo") && roles.contains("other"), "{roles:?}");
    assert_every_call_allowed(&run, sets);
    for namespace in ["demo", "other"] {
        assert!(
            run.requests
                .iter()
                .any(|e| e.verb == "watch" && e.resource == "ferrvaultsecrets" && e.namespace == namespace),
            "the operator watches {namespace}"
        );
    }
    let cluster_kinds = [
        "clusterferrvaultconnections",
        "clusterferrvaultsecrets",
        "namespaces",
    ];
    assert!(
        !run.requests.iter().any(|e| e.verb == "watch"
            && e.namespace.is_empty()
            && !cluster_kinds.contains(&e.resource.as_str())),
        "nothing but the cluster kinds is watched cluster-wide"
    );
    for resource in cluster_kinds {
        assert!(
            run.requests
                .iter()
                .any(|e| e.verb == "watch" && e.resource == resource),
            "the operator watches {resource}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn with_shards_every_api_call_should_be_allowed_and_the_shard_leases_listed_and_held() {
    let sets = &["shards=4"];
    let run = audited_run(sets).await;
    assert_every_call_allowed(&run, sets);
    let lease = |verb: &str| {
        run.requests
            .iter()
            .filter(|e| e.resource == "leases" && e.verb == verb && e.code < 300)
            .map(|e| e.name.clone())
            .collect::<BTreeSet<_>>()
    };
    assert!(!lease("list").is_empty(), "the replica lists the Leases");
    let updated = lease("update");
    assert!(
        updated.iter().filter(|name| name.contains("-shard-")).count() == 4,
        "the one replica holds (renews) the four shard Leases: {updated:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_rule_of_the_rendered_rbac_should_be_used_by_some_call_of_the_operator() {
    let run = audited_run(SCRAPER_SETS).await;
    assert_every_call_allowed(&run, SCRAPER_SETS);
    let requests = with_resources(run.all_requests());
    let made: Vec<ApiRequest<'_>> = requests
        .iter()
        .map(|(entry, resource)| request(entry, resource))
        .collect();
    let unused = run.permissions.unused(&made);
    assert!(
        unused.is_empty(),
        "granted but never used (drop them from the chart, or exercise them here):\n{}",
        unused.join("\n")
    );
}
