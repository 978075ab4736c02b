//! The tenant is a real, restricted identity: whatever its Role does not grant, the API server
//! refuses (403), so the attacks of this suite, through the operator, are its only path. And the
//! operator itself runs under the chart's rendered RBAC: every test's [`finish`] fails on a
//! request of the operator that RBAC refused.

use ferrvault_operator::{
    CONTENT_HASH_KEY_SECRET,
    api::{FerrVaultSecret, names::ADOPTABLE_BY_ANNOTATION},
};
use k8s_openapi::api::{
    apps::v1::Deployment,
    coordination::v1::Lease,
    core::v1::{Pod, Secret},
};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::harness::{ATTACKER, Launch, VICTIM, World, finish, rbac::OPERATOR_NAMESPACE, victim_syncs};

/// Fails unless `result` is the API server's 403 Forbidden; `what` names the attempt.
fn forbidden<T>(what: &str, result: Result<T, kube::Error>) {
    match result {
        Err(kube::Error::Api(status)) if status.code == 403 => {}
        Err(other) => panic!("{what}: expected 403 Forbidden, got {other}"),
        Ok(_) => panic!("{what}: allowed, but the tenant's Role does not grant it"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tenant_should_be_refused_everything_its_role_does_not_grant() {
    let world = World::start().await;
    let operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let victims_target = Api::<Secret>::namespaced(world.admin.clone(), VICTIM)
        .get("db")
        .await
        .expect("the victim's target");
    let attacker = world.attacker().client();
    let in_victim: Api<Secret> = Api::namespaced(attacker.clone(), VICTIM);
    let hand_over = json!({"metadata": {"annotations": { ADOPTABLE_BY_ANNOTATION: "loot" }}});

    // Another tenant's namespace: not a read, not a write.
    forbidden("get the victim's token Secret", in_victim.get("token").await);
    forbidden(
        "patch the victim's target Secret",
        in_victim
            .patch("db", &PatchParams::default(), &Patch::Merge(&hand_over))
            .await,
    );
    forbidden(
        "replace the victim's target Secret",
        in_victim
            .replace("db", &PostParams::default(), &victims_target)
            .await,
    );
    forbidden(
        "list Secrets in every namespace",
        Api::<Secret>::all(attacker.clone())
            .list(&ListParams::default())
            .await,
    );
    // Its own namespace, beyond its three kinds: no status writes (the operator trusts what it
    // wrote there), no Pods (mounting someone's token), no workloads.
    what_the_role_grants_works(&world).await;
    let own_secrets: Api<FerrVaultSecret> = Api::namespaced(attacker.clone(), ATTACKER);
    let fake_status = json!({"status": {"lastRolloutHash": "forged"}});
    forbidden(
        "patch its FerrVaultSecret's status",
        own_secrets
            .patch_status("mine", &PatchParams::default(), &Patch::Merge(&fake_status))
            .await,
    );
    let mut object = own_secrets.get("mine").await.expect("its own FerrVaultSecret");
    object.status = serde_json::from_value(fake_status["status"].clone()).ok();
    forbidden(
        "replace its FerrVaultSecret's status",
        own_secrets
            .replace_status("mine", &PostParams::default(), &object)
            .await,
    );
    let pod: Pod = serde_json::from_value(json!({
        "metadata": { "name": "borrow" },
        "spec": { "containers": [{ "name": "c", "image": "example.com/c:1" }] },
    }))
    .expect("a Pod");
    forbidden(
        "create a Pod",
        Api::<Pod>::namespaced(attacker.clone(), ATTACKER)
            .create(&PostParams::default(), &pod)
            .await,
    );
    forbidden(
        "list Deployments",
        Api::<Deployment>::namespaced(attacker.clone(), ATTACKER)
            .list(&ListParams::default())
            .await,
    );
    // The operator's namespace: its content-hash key and its Lease.
    forbidden(
        "get the operator's content-hash key",
        Api::<Secret>::namespaced(attacker.clone(), OPERATOR_NAMESPACE)
            .get(CONTENT_HASH_KEY_SECRET)
            .await,
    );
    forbidden(
        "list the operator's Leases",
        Api::<Lease>::namespaced(attacker.clone(), OPERATOR_NAMESPACE)
            .list(&ListParams::default())
            .await,
    );

    world.assert_unchanged(&victims_target).await;
    finish(&world, &operator, &[]).await;
}

/// Positive control: what the Role grants works through the same client (a Secret and a
/// FerrVaultSecret `mine` in the attacker's namespace, read back and listed).
async fn what_the_role_grants_works(world: &World) {
    let attacker = world.attacker();
    attacker.put_secret("notes", &[("note", "hello")]).await;
    attacker
        .ferrvault_secret(
            "mine",
            json!({ "connectionRef": { "name": "none" }, "vault": "playground" }),
        )
        .await;
    assert_eq!(
        attacker.target("notes").await.map(|data| data["note"].clone()),
        Some(b"hello".to_vec()),
        "the tenant reads its own Secret"
    );
}
