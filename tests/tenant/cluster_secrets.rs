//! A ClusterFerrVaultSecret fans one FerrVault read out to the namespaces it selects, counted by
//! the simulators: a hundred namespaces cost one reveal per refresh (ferrvault mode); a namespace
//! labelled into the selection gets its copy within one second; a Secret another owner holds fails
//! its namespace only and is never touched; the connection's `revocation: Delete` and the cluster
//! secret's deletion remove the copies, `deletionPolicy: Retain` keeps them unlabelled; suspended,
//! it reads and writes nothing. And a namespaced Role cannot give a tenant the kind.

use std::time::{Duration, Instant};

use ferrvault_operator::api::{ClusterFerrVaultSecret, names::CLUSTER_SECRET_UID_LABEL};
use ferrvault_sim::testkit::poll_until;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::{
    Api,
    api::{ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

use crate::{
    cluster_connections::{
        PLATFORM, SERVED, cluster_connections, forbidden, label_namespace, platform_connection,
        platform_connection_revoking, platform_reveals, through_platform,
    },
    harness::{
        ATTACKER, Launch, Operator, VICTIM, VICTIM_DB_URL, World,
        bounds::{Baseline, victim_keeps_syncing},
        finish,
        rbac::tenant_user,
        tenant::SHOWS_WITHIN,
        victim_syncs,
    },
};

/// The label a cluster secret selects its namespaces by (the connection allows by [`SERVED`]).
pub(crate) const COPIES: &str = "platform.example/copies";
/// The copies' name in every namespace.
pub(crate) const TARGET: &str = "shared-db";
/// How long a namespace labelled into the selection may wait for its copy (issue 37).
const NEW_NAMESPACE_WITHIN: Duration = Duration::from_secs(1);

/// The cluster kind's API, through `client`.
pub(crate) fn cluster_secrets(client: kube::Client) -> Api<DynamicObject> {
    Api::all_with(client, &ApiResource::erase::<ClusterFerrVaultSecret>(&()))
}

/// The admin's ClusterFerrVaultSecret `name`: the victim's vault through the platform's cluster
/// connection into [`TARGET`], in the namespaces labelled [`COPIES`]`=yes`, `extra` merged into its
/// `secretSpec`.
pub(crate) async fn cluster_secret(world: &World, name: &str, extra: Value) {
    let mut secret_spec = through_platform();
    secret_spec["target"] = json!({ "name": TARGET });
    json_patch::merge(&mut secret_spec, &extra);
    let object: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "ClusterFerrVaultSecret",
        "metadata": { "name": name },
        "spec": {
            "secretSpec": secret_spec,
            "namespaces": { "selector": { "matchLabels": { COPIES: "yes" } } },
        },
    }))
    .expect("a ClusterFerrVaultSecret");
    cluster_secrets(world.admin.clone())
        .create(&PostParams::default(), &object)
        .await
        .expect("the admin creates the cluster secret");
}

/// The start the fan-out tests share: the world and the operator, the victim syncing, the memory
/// baseline taken, and the platform's cluster connection allowing the namespaces labelled
/// [`SERVED`]`=yes`.
pub(crate) async fn serving_world() -> (World, Operator, Baseline) {
    let world = World::start().await;
    let operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);
    platform_connection(
        &world,
        json!({ "selector": { "matchLabels": { SERVED: "yes" } } }),
    )
    .await;
    (world, operator, baseline)
}

/// Creates namespace `name` labelled both [`SERVED`] (allowed by the connection) and [`COPIES`]
/// (selected by the cluster secrets) as `yes`.
pub(crate) async fn served_namespace(world: &World, name: &str) {
    let namespace: Namespace = serde_json::from_value(json!({
        "metadata": { "name": name, "labels": { SERVED: "yes", COPIES: "yes" } },
    }))
    .expect("a Namespace");
    Api::<Namespace>::all(world.admin.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .expect("the admin creates the namespace");
}

/// Sets label [`COPIES`] of an existing namespace (the cluster secrets select it).
pub(crate) async fn select_namespace(world: &World, namespace: &str) {
    let patch = json!({ "metadata": { "labels": { COPIES: "yes" } } });
    Api::<Namespace>::all(world.admin.clone())
        .patch(namespace, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("the admin labels the namespace");
}

/// Waits until the platform connection's status counts `allowed` namespaces: the operator's
/// Namespace store has seen them all, so a cluster secret created now selects them in its first
/// pass (one created earlier may start with part of them and read again for the rest).
pub(crate) async fn wait_allowed(world: &World, allowed: u64) {
    let api = cluster_connections(world.admin.clone());
    poll_until("the namespaces seen by the operator", SHOWS_WITHIN, || async {
        let status = api.get(PLATFORM).await.map_err(|e| e.to_string())?.data["status"].clone();
        if status["allowedNamespaces"] == allowed {
            Ok(())
        } else {
            Err(status.to_string())
        }
    })
    .await;
}

/// Cluster secret `name`'s status once `check` accepts it (within [`SHOWS_WITHIN`]).
pub(crate) async fn wait_status(
    world: &World,
    name: &str,
    what: &str,
    check: impl Fn(&Value) -> bool,
) -> Value {
    let api = cluster_secrets(world.admin.clone());
    poll_until(what, SHOWS_WITHIN, || async {
        let status = api.get(name).await.map_err(|e| e.to_string())?.data["status"].clone();
        if check(&status) {
            Ok(status)
        } else {
            Err(status.to_string())
        }
    })
    .await
}

/// The `Ready` condition's `(status, reason)` in `status`.
pub(crate) fn ready(status: &Value) -> (String, String) {
    let conditions = status["conditions"].as_array().cloned().unwrap_or_default();
    let ready = conditions
        .iter()
        .find(|c| c["type"] == "Ready")
        .cloned()
        .unwrap_or_default();
    (
        ready["status"].as_str().unwrap_or_default().to_owned(),
        ready["reason"].as_str().unwrap_or_default().to_owned(),
    )
}

/// The copy in `namespace`, if any.
pub(crate) async fn copy(world: &World, namespace: &str) -> Option<Secret> {
    Api::<Secret>::namespaced(world.admin.clone(), namespace)
        .get_opt(TARGET)
        .await
        .expect("read the copy")
}

#[tokio::test(flavor = "multi_thread")]
async fn one_cluster_secret_should_provision_a_hundred_namespaces_with_one_ferrvault_reveal_per_refresh() {
    let (world, mut operator, baseline) = serving_world().await;
    let namespaces: Vec<String> = (0..100).map(|i| format!("fan-{i:03}")).collect();
    for namespace in &namespaces {
        served_namespace(&world, namespace).await;
    }
    wait_allowed(&world, 100).await;
    let before = platform_reveals(&world);
    cluster_secret(&world, "shared", json!({})).await;
    let status = wait_status(&world, "shared", "a hundred copies", |s| s["provisioned"] == 100).await;
    assert_eq!(ready(&status), ("True".to_owned(), "Synced".to_owned()));
    assert_eq!(
        (status["selected"].clone(), status["revealScope"].clone()),
        (json!(100), json!("Shared"))
    );
    assert_eq!(
        platform_reveals(&world) - before,
        1,
        "one reveal for a hundred namespaces"
    );
    let uid = cluster_secrets(world.admin.clone())
        .get("shared")
        .await
        .expect("the cluster secret")
        .metadata
        .uid
        .expect("a UID");
    for namespace in &namespaces {
        let copy = copy(&world, namespace).await.expect("a copy in every namespace");
        assert_eq!(
            copy.data.expect("data")["DB_URL"].0,
            VICTIM_DB_URL.as_bytes(),
            "{namespace}"
        );
        assert_eq!(
            copy.metadata.labels.expect("labels")[CLUSTER_SECRET_UID_LABEL],
            uid
        );
        assert_eq!(
            copy.metadata.owner_references, None,
            "no owner reference across namespaces"
        );
    }

    // A refresh (forced): one more reveal for all of them.
    let force = json!({ "metadata": { "annotations": { "ferrvault.com/force-sync": "1" } } });
    cluster_secrets(world.admin.clone())
        .patch("shared", &PatchParams::default(), &Patch::Merge(&force))
        .await
        .expect("the admin forces a sync");
    wait_status(&world, "shared", "the forced sync", |s| {
        s["observedForceSync"] == "1"
    })
    .await;
    assert_eq!(platform_reveals(&world) - before, 2, "one reveal per refresh");

    // A namespace labelled into the selection: its copy within a second.
    label_namespace(&world, VICTIM, Some("yes")).await;
    let labelled = Instant::now();
    select_namespace(&world, VICTIM).await;
    poll_until("the new namespace's copy", NEW_NAMESPACE_WITHIN, || async {
        copy(&world, VICTIM)
            .await
            .map(|_| ())
            .ok_or_else(|| "no copy yet".to_owned())
    })
    .await;
    assert!(
        labelled.elapsed() < NEW_NAMESPACE_WITHIN,
        "{:?}",
        labelled.elapsed()
    );
    wait_status(&world, "shared", "101 copies", |s| s["provisioned"] == 101).await;
    assert_eq!(
        world.fv.token_stats("platform").rate_limited,
        0,
        "one limiter, no 429"
    );
    victim_keeps_syncing(&world, "during-fan-out").await;
    baseline.assert_held(&mut operator).await;
    finish(&world, &operator, &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_another_owner_holds_should_fail_only_its_namespace_and_stay_untouched() {
    let (world, mut operator, baseline) = serving_world().await;
    served_namespace(&world, "fan-a").await;
    served_namespace(&world, "fan-b").await;
    // The victim's own Secret of the copies' name, in a namespace the selection reaches.
    world
        .victim()
        .put_secret(TARGET, &[("mine", "TENANTCHECK-own")])
        .await;
    let own = world.secret(VICTIM, TARGET).await;
    label_namespace(&world, VICTIM, Some("yes")).await;
    select_namespace(&world, VICTIM).await;
    // And the attacker's namespace: selected, not allowed by the connection.
    select_namespace(&world, ATTACKER).await;
    cluster_secret(&world, "shared", json!({})).await;
    let status = wait_status(&world, "shared", "two copies and two failures", |s| {
        s["provisioned"] == 2 && s["failedNamespaces"].as_array().is_some_and(|f| f.len() == 2)
    })
    .await;
    assert_eq!(status["selected"], 4);
    let failed: Vec<(String, String)> = status["failedNamespaces"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|f| {
            (
                f["namespace"].as_str().unwrap().to_owned(),
                f["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        failed,
        [
            (ATTACKER.to_owned(), "ConnectionNotAllowed".to_owned()),
            (VICTIM.to_owned(), "TargetNotOwned".to_owned()),
        ]
    );
    assert_eq!(
        ready(&status),
        ("False".to_owned(), "ConnectionNotAllowed".to_owned())
    );
    assert!(copy(&world, "fan-a").await.is_some() && copy(&world, "fan-b").await.is_some());
    assert!(
        copy(&world, ATTACKER).await.is_none(),
        "nothing written where not allowed"
    );
    world.assert_unchanged(&own).await;
    victim_keeps_syncing(&world, "during-conflict").await;
    baseline.assert_held(&mut operator).await;
    finish(&world, &operator, &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn copies_should_go_with_revocation_delete_and_deletion_and_stay_unlabelled_with_retain() {
    let world = World::start().await;
    let operator = Launch::new().insecure_http().start(&world);
    let served = json!({ "selector": { "matchLabels": { SERVED: "yes" } } });
    platform_connection_revoking(&world, served, "Delete").await;
    for namespace in ["fan-a", "fan-b", "fan-c"] {
        served_namespace(&world, namespace).await;
    }
    // Suspended first: nothing read, nothing written.
    let before = platform_reveals(&world);
    cluster_secret(&world, "paused", json!({ "suspend": true })).await;
    wait_status(&world, "paused", "Suspended", |s| {
        s["conditions"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["type"] == "Suspended"))
    })
    .await;
    assert_eq!(
        platform_reveals(&world),
        before,
        "a suspended cluster secret reads nothing"
    );
    cluster_secrets(world.admin.clone())
        .delete("paused", &DeleteParams::default())
        .await
        .expect("delete the paused one");
    cluster_secret(&world, "shared", json!({})).await;
    wait_status(&world, "shared", "three copies", |s| s["provisioned"] == 3).await;

    // Revoked by the connection: that namespace's copy deleted at that event.
    label_namespace(&world, "fan-a", None).await;
    poll_until("the revoked copy is deleted", SHOWS_WITHIN, || async {
        match copy(&world, "fan-a").await {
            None => Ok(()),
            Some(_) => Err("still there".to_owned()),
        }
    })
    .await;
    // Deleted: every copy goes.
    cluster_secrets(world.admin.clone())
        .delete("shared", &DeleteParams::default())
        .await
        .expect("delete the cluster secret");
    poll_until("every copy is deleted", SHOWS_WITHIN, || async {
        for namespace in ["fan-b", "fan-c"] {
            if copy(&world, namespace).await.is_some() {
                return Err(format!("{namespace} still holds its copy"));
            }
        }
        Ok(())
    })
    .await;

    // Retain: the copies stay, no longer labelled as anyone's.
    cluster_secret(
        &world,
        "kept",
        json!({ "target": { "name": TARGET, "deletionPolicy": "Retain" } }),
    )
    .await;
    wait_status(&world, "kept", "two copies", |s| s["provisioned"] == 2).await;
    cluster_secrets(world.admin.clone())
        .delete("kept", &DeleteParams::default())
        .await
        .expect("delete the retaining cluster secret");
    poll_until("the retained copies are unlabelled", SHOWS_WITHIN, || async {
        for namespace in ["fan-b", "fan-c"] {
            let copy = copy(&world, namespace)
                .await
                .ok_or(format!("{namespace} lost its copy"))?;
            let labelled = copy
                .metadata
                .labels
                .is_some_and(|l| l.contains_key(CLUSTER_SECRET_UID_LABEL));
            if labelled {
                return Err(format!("{namespace} still labelled"));
            }
        }
        Ok(())
    })
    .await;
    finish(&world, &operator, &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_namespaced_role_should_never_give_a_tenant_the_cluster_secret_kind() {
    let world = World::start().await;
    let operator = Launch::new().insecure_http().start(&world);
    let grab = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": { "name": "grab-secrets", "namespace": ATTACKER },
        "rules": [
            { "apiGroups": ["ferrvault.com"], "resources": ["clusterferrvaultsecrets"], "verbs": ["*"] },
        ],
    });
    let binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": { "name": "grab-secrets", "namespace": ATTACKER },
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "grab-secrets" },
        "subjects": [{ "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": tenant_user(ATTACKER) }],
    });
    for object in [grab, binding] {
        let object: DynamicObject = serde_json::from_value(object).expect("an RBAC object");
        let kind = object.types.clone().expect("types").kind;
        let resource = ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "rbac.authorization.k8s.io",
            "v1",
            &kind,
        ));
        Api::<DynamicObject>::namespaced_with(world.admin.clone(), ATTACKER, &resource)
            .create(&PostParams::default(), &object)
            .await
            .expect("the admin creates the tenant's Role");
    }
    cluster_secret(&world, "shared", json!({})).await;
    let theirs = cluster_secrets(world.attacker().client());
    let own: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "ClusterFerrVaultSecret",
        "metadata": { "name": "loot" },
        "spec": {
            "secretSpec": through_platform(),
            "namespaces": { "names": [ATTACKER] },
        },
    }))
    .expect("a ClusterFerrVaultSecret");
    forbidden(
        "create a cluster secret",
        theirs.create(&PostParams::default(), &own).await,
    );
    forbidden("read the platform's cluster secret", theirs.get("shared").await);
    let widen = json!({ "spec": { "namespaces": { "names": [ATTACKER] } } });
    forbidden(
        "widen the cluster secret's namespaces",
        theirs
            .patch("shared", &PatchParams::default(), &Patch::Merge(&widen))
            .await,
    );
    forbidden(
        "delete the cluster secret",
        theirs.delete("shared", &Default::default()).await,
    );
    finish(&world, &operator, &[]).await;
}
