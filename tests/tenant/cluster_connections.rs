//! A ClusterFerrVaultConnection lends the platform team's credential to the namespaces its
//! `allowedNamespaces` lets in, and to no other. The attacker names it from its own namespace
//! (not allowed): refused `ConnectionNotAllowed`, and FerrVault never sees the platform's token
//! for it. A namespace relabelled out of the selection is refused at the relabel event (its
//! refresh is an hour away), its copy kept (`revocation: Keep`) or deleted (`revocation:
//! Delete`, only the copy it controls). And no namespaced Role can give
//! a tenant the cluster kinds, nor the right to relabel its own namespace into a selection.
//! Suspended by its admin (`spec.suspend`), it reads nothing for any user (they show
//! `Suspended=True/ConnectionSuspended`), and resuming it re-syncs none of them.

use std::time::Duration;

use ferrvault_operator::api::{ClusterFerrVaultConnection, FerrVaultSecret};
use ferrvault_sim::testkit::poll_until;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::{
    Api,
    api::{ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

use crate::harness::{
    ATTACKER, Launch, PLATFORM_TOKEN, VICTIM, VICTIM_DB_URL, VICTIM_VAULT, World,
    bounds::{Baseline, victim_keeps_syncing},
    finish,
    rbac::{OPERATOR_NAMESPACE, tenant_user},
    tenant::{SHOWS_WITHIN, Tenant},
    victim_syncs,
};

/// The cluster connection's name.
pub(crate) const PLATFORM: &str = "platform";
/// The label an admin sets on namespaces the platform serves.
pub(crate) const SERVED: &str = "platform.example/served";
/// How long a refusal may take to show once the event that causes it happened: far below the
/// FerrVaultSecrets' one-hour refresh, so only the event can have caused it.
const REFUSED_WITHIN: Duration = Duration::from_secs(10);

/// The cluster kinds' API, through `client`.
pub(crate) fn cluster_connections(client: kube::Client) -> Api<DynamicObject> {
    Api::all_with(client, &ApiResource::erase::<ClusterFerrVaultConnection>(&()))
}

/// The admin's cluster connection [`PLATFORM`] to FerrVault with [`PLATFORM_TOKEN`] (a Secret in
/// the operator's namespace), letting in `allowed`, with `revocation: Keep` (the default).
pub(crate) async fn platform_connection(world: &World, allowed: Value) {
    platform_connection_revoking(world, allowed, "Keep").await;
}

/// [`platform_connection`] with `revocation`.
pub(crate) async fn platform_connection_revoking(world: &World, allowed: Value, revocation: &str) {
    platform_connection_with(world, allowed, json!({ "revocation": revocation })).await;
}

/// [`platform_connection`] with `extra` merged into its spec.
pub(crate) async fn platform_connection_with(world: &World, allowed: Value, extra: Value) {
    let token: Secret = serde_json::from_value(json!({
        "metadata": { "name": "platform-token" },
        "stringData": { "token": PLATFORM_TOKEN },
    }))
    .expect("a Secret");
    Api::<Secret>::namespaced(world.admin.clone(), OPERATOR_NAMESPACE)
        .create(&PostParams::default(), &token)
        .await
        .expect("the platform's token Secret");
    let mut spec = json!({
        "url": world.fv.url(),
        "tokenSecretRef": { "namespace": OPERATOR_NAMESPACE, "name": "platform-token", "key": "token" },
        "allowedNamespaces": allowed,
    });
    json_patch::merge(&mut spec, &extra);
    let connection: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "ClusterFerrVaultConnection",
        "metadata": { "name": PLATFORM },
        "spec": spec,
    }))
    .expect("a ClusterFerrVaultConnection");
    cluster_connections(world.admin.clone())
        .create(&PostParams::default(), &connection)
        .await
        .expect("the admin creates the cluster connection");
}

/// A FerrVaultSecret spec reading the victim's vault through the cluster connection.
pub(crate) fn through_platform() -> Value {
    json!({
        "connectionRef": { "kind": "ClusterFerrVaultConnection", "name": PLATFORM },
        "vault": VICTIM_VAULT,
        "refreshInterval": "1h",
    })
}

/// Sets (or, with `None`, removes) label [`SERVED`] on `namespace`, as the admin.
pub(crate) async fn label_namespace(world: &World, namespace: &str, value: Option<&str>) {
    let patch = json!({ "metadata": { "labels": { SERVED: value } } });
    Api::<Namespace>::all(world.admin.clone())
        .patch(namespace, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("the admin labels the namespace");
}

/// FerrVault requests made with the platform's token so far.
pub(crate) fn platform_requests(world: &World) -> u64 {
    world.fv.token_stats("platform").requests
}

/// Reveals made with the platform's token so far (requests naming a vault): unlike
/// [`platform_requests`], never the connection's own probe or `me`, whose timing is the probe's.
pub(crate) fn platform_reveals(world: &World) -> u64 {
    world.fv.token_stats("platform").vaults.values().sum()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_namespace_the_cluster_connection_does_not_allow_should_be_refused_with_no_ferrvault_request() {
    let world = World::start().await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);
    platform_connection(&world, json!({ "names": [VICTIM, OPERATOR_NAMESPACE] })).await;

    // Positive control: the allowed namespace syncs through the platform's credential.
    let victim = world.victim();
    victim.ferrvault_secret("via-platform", through_platform()).await;
    victim.wait_secret("via-platform", "Synced").await;
    assert_eq!(
        victim.target("via-platform").await.expect("the copy")["DB_URL"],
        VICTIM_DB_URL.as_bytes()
    );
    let before = platform_requests(&world);
    assert!(
        before >= 1,
        "the allowed namespace read through the platform's token"
    );

    // The attack: the attacker names the same cluster connection from its own namespace.
    let attacker = world.attacker();
    attacker.ferrvault_secret("loot", through_platform()).await;
    victim_keeps_syncing(&world, "during-attack").await;
    let refused = attacker.wait_secret("loot", "ConnectionNotAllowed").await;
    assert_eq!(
        (refused.status.as_str(), refused.message.as_str()),
        (
            "False",
            r#"namespace "tenant-evil" is not in the allowedNamespaces of ClusterFerrVaultConnection "platform": nothing was read or written"#
        )
    );
    assert_eq!(
        platform_requests(&world),
        before,
        "a refused namespace costs no FerrVault request"
    );
    assert_eq!(attacker.target("loot").await, None, "nothing was written");
    // A cluster connection that does not exist is a clear reason too.
    let mut missing = through_platform();
    missing["connectionRef"]["name"] = json!("nobody");
    attacker.ferrvault_secret("missing", missing).await;
    attacker.wait_secret("missing", "ConnectionNotFound").await;
    // Even from the allowed credentials namespace, its token Secret is never a target.
    let token = world.secret(OPERATOR_NAMESPACE, "platform-token").await;
    let platform = Tenant::new(world.admin.clone(), OPERATOR_NAMESPACE);
    let mut overwrite = through_platform();
    overwrite["target"] = json!({ "name": "platform-token" });
    platform.ferrvault_secret("overwrite", overwrite).await;
    let refused = platform
        .wait_secret("overwrite", "TargetIsConnectionSecret")
        .await;
    assert!(
        refused
            .message
            .contains(r#"token Secret of FerrVaultConnection "ClusterFerrVaultConnection/platform""#),
        "{}",
        refused.message
    );
    world.assert_unchanged(&token).await;
    // The platform team sees who it refuses: in the connection's status and its gauge.
    let admin_view = cluster_connections(world.admin.clone());
    poll_until("the cluster connection's status counts", SHOWS_WITHIN, || async {
        let status = admin_view.get(PLATFORM).await.map_err(|e| e.to_string())?.data["status"].clone();
        let expected = json!({
            "allowedNamespaces": 2,
            "referencingNamespaces": 3,
            "refusedNamespaces": 1,
            "refusedReferences": ["tenant-evil/loot"],
        });
        let counted = [
            "allowedNamespaces",
            "referencingNamespaces",
            "refusedNamespaces",
            "refusedReferences",
        ]
        .iter()
        .all(|field| status[field] == expected[field]);
        if counted { Ok(()) } else { Err(status.to_string()) }
    })
    .await;
    let gauge = r#"ferrvault_connection_refused_references{connection="platform"} 1"#;
    let scrapes = operator.scrapes().await;
    assert!(
        scrapes.iter().any(|(_, text)| text.contains(gauge)),
        "{gauge} in /metrics"
    );
    baseline.assert_held(&mut operator).await;
    finish(&world, &operator, &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_namespace_relabelled_out_should_be_refused_at_that_event_and_keep_its_copy() {
    let world = World::start().await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);
    label_namespace(&world, VICTIM, Some("yes")).await;
    platform_connection(
        &world,
        json!({ "selector": { "matchLabels": { SERVED: "yes" } } }),
    )
    .await;
    let victim = world.victim();
    victim.ferrvault_secret("via-platform", through_platform()).await;
    victim.wait_secret("via-platform", "Synced").await;
    // The attacker's namespace does not carry the label, and its tenant cannot set it.
    let attacker = world.attacker();
    attacker.ferrvault_secret("loot", through_platform()).await;
    attacker.wait_secret("loot", "ConnectionNotAllowed").await;
    let before = platform_requests(&world);

    label_namespace(&world, VICTIM, None).await;
    let refused = victim
        .wait_secret_within("via-platform", ("Ready", "ConnectionNotAllowed"), REFUSED_WITHIN)
        .await;
    assert_eq!(refused.status, "False");
    assert_eq!(
        platform_requests(&world),
        before,
        "no FerrVault request once refused"
    );
    assert_eq!(
        victim
            .target("via-platform")
            .await
            .expect("revocation: Keep keeps the copy")["DB_URL"],
        VICTIM_DB_URL.as_bytes()
    );
    // Relabelled in again: it syncs at that event too.
    label_namespace(&world, VICTIM, Some("yes")).await;
    victim
        .wait_secret_within("via-platform", ("Ready", "Synced"), REFUSED_WITHIN)
        .await;
    victim_keeps_syncing(&world, "after-relabel").await;
    baseline.assert_held(&mut operator).await;
    finish(&world, &operator, &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn revocation_delete_should_remove_the_copy_of_a_namespace_relabelled_out_and_only_its_own() {
    let world = World::start().await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);
    label_namespace(&world, VICTIM, Some("yes")).await;
    let served = json!({ "selector": { "matchLabels": { SERVED: "yes" } } });
    platform_connection_revoking(&world, served, "Delete").await;
    let victim = world.victim();
    victim.ferrvault_secret("via-platform", through_platform()).await;
    victim.wait_secret("via-platform", "Synced").await;
    assert!(victim.target("via-platform").await.is_some(), "the copy");
    // A Secret of the namespace's own, that the operator never controlled.
    victim.put_secret("unrelated", &[("k", "v")]).await;

    label_namespace(&world, VICTIM, None).await;
    victim
        .wait_secret_within("via-platform", ("Ready", "ConnectionNotAllowed"), REFUSED_WITHIN)
        .await;
    poll_until("the copy is deleted", REFUSED_WITHIN, || async {
        match victim.target("via-platform").await {
            None => Ok(()),
            Some(_) => Err("still there".to_owned()),
        }
    })
    .await;
    assert!(
        victim.target("unrelated").await.is_some(),
        "only its own copy goes"
    );
    assert!(
        victim.target("db").await.is_some(),
        "the victim's other target stays"
    );
    victim_keeps_syncing(&world, "after-revocation").await;
    baseline.assert_held(&mut operator).await;
    finish(&world, &operator, &[]).await;
}

/// Fails unless `result` is the API server's 403 Forbidden; `what` names the attempt.
pub(crate) fn forbidden<T>(what: &str, result: Result<T, kube::Error>) {
    match result {
        Err(kube::Error::Api(status)) if status.code == 403 => {}
        Err(other) => panic!("{what}: expected 403 Forbidden, got {other}"),
        Ok(_) => panic!("{what}: allowed, but no namespaced Role can grant it"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_namespaced_role_should_never_give_a_tenant_the_cluster_kinds_or_its_namespaces_labels() {
    let world = World::start().await;
    let operator = Launch::new().insecure_http().start(&world);
    platform_connection(&world, json!({ "names": [VICTIM] })).await;
    // The most a namespace admin can write: a Role in its namespace naming the cluster kinds and
    // namespaces with every verb, bound to the tenant.
    let grab = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": { "name": "grab", "namespace": ATTACKER },
        "rules": [
            { "apiGroups": ["ferrvault.com"], "resources": ["clusterferrvaultconnections"], "verbs": ["*"] },
            { "apiGroups": [""], "resources": ["namespaces"], "verbs": ["*"] },
        ],
    });
    let binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": { "name": "grab", "namespace": ATTACKER },
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "grab" },
        "subjects": [{ "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": tenant_user(ATTACKER) }],
    });
    for object in [grab, binding] {
        let object: DynamicObject = serde_json::from_value(object).expect("an RBAC object");
        let gvk = object.types.clone().expect("types");
        let resource = ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "rbac.authorization.k8s.io",
            "v1",
            &gvk.kind,
        ));
        Api::<DynamicObject>::namespaced_with(world.admin.clone(), ATTACKER, &resource)
            .create(&PostParams::default(), &object)
            .await
            .expect("the admin creates the tenant's Role");
    }
    let tenant = world.attacker().client();
    let theirs = cluster_connections(tenant.clone());
    let own: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "ClusterFerrVaultConnection",
        "metadata": { "name": "mine" },
        "spec": { "url": world.fv.url(), "allowedNamespaces": { "names": ["*"] } },
    }))
    .expect("a ClusterFerrVaultConnection");
    forbidden(
        "create a cluster connection",
        theirs.create(&PostParams::default(), &own).await,
    );
    forbidden("read the platform's connection", theirs.get(PLATFORM).await);
    let widen = json!({ "spec": { "allowedNamespaces": { "names": ["*"] } } });
    forbidden(
        "widen the platform's allowedNamespaces",
        theirs
            .patch(PLATFORM, &PatchParams::default(), &Patch::Merge(&widen))
            .await,
    );
    forbidden(
        "delete the platform's connection",
        theirs.delete(PLATFORM, &Default::default()).await,
    );
    let join = json!({ "metadata": { "labels": { SERVED: "yes" } } });
    forbidden(
        "label its own namespace into a selection",
        Api::<Namespace>::all(tenant)
            .patch(ATTACKER, &PatchParams::default(), &Patch::Merge(&join))
            .await,
    );
    let stored = cluster_connections(world.admin.clone())
        .get(PLATFORM)
        .await
        .expect("the platform's connection");
    assert_eq!(
        stored.data["spec"]["allowedNamespaces"],
        json!({ "names": [VICTIM] })
    );
    finish(&world, &operator, &[]).await;
}

/// `observedInputs` (what its last sync read besides FerrVault, the cluster connection's input
/// generation among them) and whether a `Suspended` condition is present, of the victim's
/// FerrVaultSecret `name`, as the admin reads it.
async fn sync_state(world: &World, name: &str) -> (Option<String>, bool) {
    let object = victim_secrets(world)
        .get(name)
        .await
        .expect("read the victim's FerrVaultSecret");
    let status = object.status.unwrap_or_default();
    let suspended = status.conditions.iter().any(|c| c.type_ == "Suspended");
    (status.observed_inputs, suspended)
}

/// The victim's FerrVaultSecrets, as the admin reads them.
fn victim_secrets(world: &World) -> Api<FerrVaultSecret> {
    Api::namespaced(world.admin.clone(), VICTIM)
}

/// Merges `spec` into the cluster connection, as the admin.
async fn edit_platform(world: &World, spec: Value) {
    cluster_connections(world.admin.clone())
        .patch(
            PLATFORM,
            &PatchParams::default(),
            &Patch::Merge(&json!({ "spec": spec })),
        )
        .await
        .expect("the admin edits the cluster connection");
}

/// Waits until `check` holds for the sync state of each of `names`.
async fn wait_sync_states(
    world: &World,
    what: &str,
    names: &[&str],
    check: impl Fn(&str, &(Option<String>, bool)) -> bool,
) {
    let check = &check;
    poll_until(what, SHOWS_WITHIN, || async move {
        for name in names {
            let state = sync_state(world, name).await;
            if !check(name, &state) {
                return Err(format!("{name}: observedInputs, suspended: {state:?}"));
            }
        }
        Ok(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_suspended_cluster_connection_should_stop_its_users_and_resuming_it_should_resync_none() {
    const USERS: [&str; 2] = ["via-platform", "via-platform-2"];
    let world = World::start().await;
    let operator = Launch::new().insecure_http().start(&world);
    platform_connection(&world, json!({ "names": [VICTIM] })).await;
    let victim = world.victim();
    for name in USERS {
        victim.ferrvault_secret(name, through_platform()).await;
    }
    let mut synced = Vec::new();
    for name in USERS {
        victim.wait_secret(name, "Synced").await;
        synced.push(sync_state(&world, name).await.0);
    }

    // Suspended by the admin: its users say so, and nothing is read for them, not even for a new
    // one (deleted again while suspended: its cleanup still runs).
    edit_platform(&world, json!({ "suspend": true })).await;
    for name in USERS {
        victim
            .wait_secret_condition(name, "Suspended", "ConnectionSuspended")
            .await;
    }
    let before = platform_requests(&world);
    victim
        .ferrvault_secret("while-suspended", through_platform())
        .await;
    victim
        .wait_secret_condition("while-suspended", "Suspended", "ConnectionSuspended")
        .await;
    assert!(
        victim.target("while-suspended").await.is_none(),
        "nothing written"
    );
    victim_secrets(&world)
        .delete("while-suspended", &DeleteParams::default())
        .await
        .expect("delete it");
    poll_until("the new one deleted while suspended", SHOWS_WITHIN, || async {
        match victim_secrets(&world).get_opt("while-suspended").await {
            Ok(None) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    assert_eq!(
        platform_requests(&world),
        before,
        "no FerrVault request while suspended"
    );

    // Resumed: the passes that drop the Suspended condition sync none of the users (a sync of
    // either would read FerrVault, and record the connection's new generation if it counted).
    edit_platform(&world, json!({ "suspend": false })).await;
    wait_sync_states(&world, "the users resumed", &USERS, |_, (_, suspended)| {
        !suspended
    })
    .await;
    assert_eq!(
        platform_requests(&world),
        before,
        "no FerrVault request on resume"
    );
    for (name, inputs) in USERS.iter().zip(&synced) {
        assert_eq!(
            &sync_state(&world, name).await.0,
            inputs,
            "{name}'s inputs unchanged"
        );
    }

    // A real edit of what they read (organization) re-syncs each of them.
    edit_platform(&world, json!({ "organization": "acme" })).await;
    wait_sync_states(
        &world,
        "the users re-synced after the edit",
        &USERS,
        |name, (inputs, _)| {
            let index = USERS.iter().position(|n| *n == name).expect("a user");
            *inputs != synced[index]
        },
    )
    .await;
    assert!(platform_requests(&world) > before, "the edit read FerrVault");
    finish(&world, &operator, &[]).await;
}
