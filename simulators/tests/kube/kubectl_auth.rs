//! Access reviews answered from the stored RBAC objects and token reviews from the token
//! registry: `kubectl auth can-i` / `whoami`, and the TokenReview + SubjectAccessReview pair
//! a metrics endpoint protected like controller-runtime's
//! `filters.WithAuthenticationAndAuthorization` sends.

use crate::{
    kube_sim_support::sim,
    kubectl_support::{CREATE_SECRET_READER, Kubectl},
};
use ferrvault_sim::kube::KubeSim;
use k8s_openapi::api::{
    authentication::v1::{TokenReview, TokenReviewSpec},
    authorization::v1::{NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec},
    core::v1::ServiceAccount,
};
use kube::{
    Api,
    api::{DeleteParams, PostParams},
};
use serde_json::json;

/// `kubectl auth can-i <args>` as `user`: true for "yes" (exit 0), false for "no" (exit 1).
async fn can_i(k: &Kubectl, user: &str, args: &[&str]) -> bool {
    let mut all = vec!["auth", "can-i"];
    all.extend_from_slice(args);
    all.extend(["--as", user]);
    let out = k.run(&all).await;
    let answer = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(
        matches!(
            (out.status.code(), answer.as_str()),
            (Some(0), "yes") | (Some(1), "no")
        ),
        "kubectl {all:?}: {answer} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.status.success()
}

#[tokio::test]
async fn kubectl_auth_can_i_should_follow_roles_cluster_roles_and_their_bindings() {
    let sim = sim().await;
    let k = Kubectl::new(&sim);
    for args in [
        &["create", "namespace", "team-a"][..],
        CREATE_SECRET_READER,
        &[
            "create",
            "rolebinding",
            "alice-reads",
            "-n",
            "team-a",
            "--role=reader",
            "--user=alice",
        ],
        &[
            "create",
            "clusterrole",
            "deployer",
            "--verb=*",
            "--resource=deployments.apps,deployments.apps/scale",
        ],
        &[
            "create",
            "clusterrolebinding",
            "devs-deploy",
            "--clusterrole=deployer",
            "--group=devs",
        ],
        &[
            "create",
            "clusterrole",
            "one-secret",
            "--verb=get",
            "--resource=secrets",
            "--resource-name=db",
        ],
        &[
            "create",
            "rolebinding",
            "bob-db",
            "-n",
            "team-a",
            "--clusterrole=one-secret",
            "--user=bob",
        ],
    ] {
        k.ok(args).await;
    }
    assert!(can_i(&k, "alice", &["list", "secrets", "-n", "team-a"]).await);
    assert!(
        !can_i(&k, "alice", &["list", "secrets", "-n", "default"]).await,
        "a RoleBinding grants in its namespace only"
    );
    assert!(!can_i(&k, "alice", &["delete", "secrets", "-n", "team-a"]).await);
    assert!(!can_i(&k, "alice", &["create", "deployments.apps", "-n", "team-a"]).await);
    assert!(
        can_i(
            &k,
            "carol",
            &["create", "deployments.apps", "-n", "x", "--as-group=devs"]
        )
        .await
    );
    assert!(
        can_i(
            &k,
            "carol",
            &["update", "deployments.apps/scale", "-n", "x", "--as-group=devs"]
        )
        .await
    );
    assert!(can_i(&k, "bob", &["get", "secrets/db", "-n", "team-a"]).await);
    assert!(
        !can_i(&k, "bob", &["get", "secrets/other", "-n", "team-a"]).await,
        "resourceNames restrict"
    );
    assert!(!can_i(&k, "bob", &["get", "secrets/db", "-n", "default"]).await);
    assert!(
        can_i(&k, "alice", &["get", "/healthz"]).await,
        "every authenticated user may read health"
    );
    assert!(!can_i(&k, "alice", &["get", "/metrics"]).await);
    assert_eq!(
        k.ok(&["auth", "can-i", "delete", "nodes"]).await.trim(),
        "yes",
        "the kubeconfig is the admin's"
    );

    let whoami = k
        .ok(&["auth", "whoami", "--as", "system:serviceaccount:team-a:bot"])
        .await;
    assert!(
        whoami.contains("system:serviceaccount:team-a:bot")
            && whoami.contains("system:serviceaccounts:team-a")
            && whoami.contains("system:authenticated"),
        "{whoami}"
    );
    let list = k
        .ok(&["auth", "can-i", "--list", "-n", "team-a", "--as", "alice"])
        .await;
    let secrets = list
        .lines()
        .find(|l| l.starts_with("secrets "))
        .unwrap_or_default();
    assert!(secrets.contains("[get list]"), "{list}");
}

async fn token_review(sim: &KubeSim, token: &str) -> TokenReview {
    let review = TokenReview {
        spec: TokenReviewSpec {
            token: Some(token.into()),
            ..TokenReviewSpec::default()
        },
        ..TokenReview::default()
    };
    Api::<TokenReview>::all(sim.client())
        .create(&PostParams::default(), &review)
        .await
        .expect("token review answered")
}

/// May the user of an authenticated TokenReview `get /metrics`? Asked the way a delegating
/// authorizer asks: exactly the user and groups the TokenReview returned.
async fn may_get_metrics(sim: &KubeSim, reviewed: &TokenReview) -> (bool, Option<String>) {
    let user = reviewed
        .status
        .as_ref()
        .and_then(|s| s.user.clone())
        .expect("a user");
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: user.username,
            groups: user.groups,
            uid: user.uid,
            non_resource_attributes: Some(NonResourceAttributes {
                path: Some("/metrics".into()),
                verb: Some("get".into()),
            }),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    };
    let answered = Api::<SubjectAccessReview>::all(sim.client())
        .create(&PostParams::default(), &review)
        .await
        .expect("access review answered");
    let status = answered.status.expect("status");
    (status.allowed, status.reason)
}

#[tokio::test]
async fn token_and_subject_access_reviews_should_protect_a_metrics_endpoint_like_controller_runtime() {
    let sim = sim().await;
    let k = Kubectl::new(&sim);
    for args in [
        &["create", "namespace", "monitoring"][..],
        &["create", "serviceaccount", "prometheus", "-n", "monitoring"],
        &["create", "serviceaccount", "intruder", "-n", "monitoring"],
        &[
            "create",
            "clusterrole",
            "metrics-reader",
            "--verb=get",
            "--non-resource-url=/metrics",
        ],
        &[
            "create",
            "clusterrolebinding",
            "prometheus-metrics",
            "--clusterrole=metrics-reader",
            "--serviceaccount=monitoring:prometheus",
        ],
    ] {
        k.ok(args).await;
    }
    let prometheus = sim.register_identity("system:serviceaccount:monitoring:prometheus");
    let intruder = sim.register_identity("system:serviceaccount:monitoring:intruder");

    let reviewed = token_review(&sim, &prometheus).await;
    let status = reviewed.status.clone().expect("status");
    assert_eq!(status.authenticated, Some(true));
    let user = status.user.clone().expect("user");
    assert_eq!(
        user.username.as_deref(),
        Some("system:serviceaccount:monitoring:prometheus")
    );
    assert_eq!(
        user.groups.clone().unwrap_or_default(),
        [
            "system:serviceaccounts",
            "system:serviceaccounts:monitoring",
            "system:authenticated"
        ]
    );
    let account = Api::<ServiceAccount>::namespaced(sim.client(), "monitoring")
        .get("prometheus")
        .await
        .expect("account");
    assert_eq!(user.uid, account.metadata.uid, "the token's ServiceAccount uid");
    let (allowed, reason) = may_get_metrics(&sim, &reviewed).await;
    assert!(allowed);
    assert_eq!(
        reason.as_deref(),
        Some(
            r#"RBAC: allowed by ClusterRoleBinding "prometheus-metrics" of ClusterRole "metrics-reader" to ServiceAccount "prometheus/monitoring""#
        )
    );

    let (allowed, _) = may_get_metrics(&sim, &token_review(&sim, &intruder).await).await;
    assert!(!allowed, "a ServiceAccount without a binding");

    let forged = token_review(&sim, "not-a-token").await.status.expect("status");
    assert_ne!(forged.authenticated, Some(true));
    assert!(forged.error.is_some());

    Api::<ServiceAccount>::namespaced(sim.client(), "monitoring")
        .delete("prometheus", &DeleteParams::default())
        .await
        .expect("deleted");
    let orphaned = token_review(&sim, &prometheus).await.status.expect("status");
    assert_ne!(
        orphaned.authenticated,
        Some(true),
        "a deleted ServiceAccount's token is invalid"
    );
}

#[tokio::test]
async fn group_and_wildcard_rules_should_grant_non_resource_urls() {
    let sim = sim().await;
    let k = Kubectl::new(&sim);
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "debug-reader"},
        "rules": [{"verbs": ["get"], "nonResourceURLs": ["/debug/*"]}, {"verbs": ["*"], "nonResourceURLs": ["/metrics"]}]});
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "monitoring-debug"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "debug-reader"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:serviceaccounts:monitoring"}]});
    for (name, object) in [("role.json", role), ("binding.json", binding)] {
        let file = k.file(name, &object.to_string());
        k.ok(&["apply", "-f", file.to_str().expect("utf-8")]).await;
    }
    let sa = "system:serviceaccount:monitoring:anyone";
    assert!(can_i(&k, sa, &["get", "/debug/actors"]).await);
    assert!(can_i(&k, sa, &["get", "/metrics"]).await);
    assert!(
        !can_i(&k, sa, &["get", "/debugging"]).await,
        "a prefix ends at the *"
    );
    assert!(!can_i(&k, "system:serviceaccount:other:anyone", &["get", "/metrics"]).await);

    // A SubjectAccessReview checks exactly the groups it names.
    let review: SubjectAccessReview = serde_json::from_value(json!({
        "spec": {"user": sa, "nonResourceAttributes": {"path": "/metrics", "verb": "get"}}
    }))
    .expect("review");
    let answered = Api::<SubjectAccessReview>::all(sim.client())
        .create(&PostParams::default(), &review)
        .await
        .expect("answered");
    assert!(
        !answered.status.expect("status").allowed,
        "no groups given, none assumed"
    );
    let empty: SubjectAccessReview = serde_json::from_value(json!({"spec": {"user": sa}})).expect("review");
    let invalid = Api::<SubjectAccessReview>::all(sim.client())
        .create(&PostParams::default(), &empty)
        .await
        .expect_err("neither resource nor non-resource attributes");
    assert!(
        matches!(&invalid, kube::Error::Api(s) if s.code == 422),
        "{invalid:?}"
    );
}
