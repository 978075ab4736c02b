//! A target controlled by another owner: in the attacker's namespace, a Secret a Deployment
//! controls (even one that carries the opt-in for the attacker's FerrVaultSecret: the opt-in
//! never overrides a controller), the target of another FerrVaultSecret, and a Secret controlled
//! by a kind whose CRD this cluster does not serve (an ExternalSecret). The attacker aims a
//! FerrVaultSecret at each through its own hostile FerrVault; none is written, and nothing is
//! revealed for them. (The last holds only because the Kubernetes simulator's garbage collector,
//! like the real one, keeps a dependent whose owner's kind it cannot resolve: one that deleted
//! it would leave the name free, and the operator would rightly create its own Secret there.)

use ferrvault_operator::api::names::ADOPTABLE_BY_ANNOTATION;
use kube::ResourceExt;
use serde_json::json;

use crate::harness::{
    ATTACKER, Answer, Launch, Listener, PLAYGROUND_VAULT, World, aimed_at, attacker_connection,
    attacker_syncs, finish, not_the_attackers, victim_syncs,
};

/// What the attacker's FerrVault reveals.
const PLANTED: &str = "planted-by-the-attacker";

#[tokio::test(flavor = "multi_thread")]
async fn a_target_controlled_by_another_owner_should_never_be_written() {
    let world = World::start().await;
    let vault = Listener::start(Answer::vault(&[("password", PLANTED)])).await;
    let operator = Launch::new().insecure_http().start(&world);
    let attacker = world.attacker();
    attacker_connection(&world, "hostile", vault.url()).await;

    // A Secret the Deployment `db` controls, handed over (by whoever may edit it) to `grab`.
    let db = world.deployment(ATTACKER, "db").await;
    let controlled = world
        .others_secret(
            ATTACKER,
            json!({
                "metadata": {
                    "name": "db-credentials",
                    "labels": { "app": "db" },
                    "annotations": { ADOPTABLE_BY_ANNOTATION: "grab" },
                    "ownerReferences": [{
                        "apiVersion": "apps/v1", "kind": "Deployment", "name": "db",
                        "uid": db.uid().expect("a stored Deployment has a UID"), "controller": true,
                    }],
                },
                "stringData": { "password": "owned-by-the-deployment" },
            }),
        )
        .await;
    // The target of the namespace's FerrVaultSecret `app`, synced from the real FerrVault.
    attacker_connection(&world, "fv", &world.fv.url()).await;
    attacker
        .ferrvault_secret(
            "app",
            json!({ "connectionRef": { "name": "fv" }, "vault": PLAYGROUND_VAULT }),
        )
        .await;
    attacker.wait_secret("app", "Synced").await;
    let of_app = world.secret(ATTACKER, "app").await;

    attacker
        .ferrvault_secret("grab", aimed_at("hostile", "db-credentials"))
        .await;
    attacker
        .ferrvault_secret("grab-app", aimed_at("hostile", "app"))
        .await;
    let refused = attacker.wait_secret("grab", "TargetControlledByOther").await;
    assert_eq!(
        (refused.status.as_str(), refused.message.as_str()),
        (
            "False",
            r#"Secret db-credentials is controlled by Deployment "db": not written"#
        )
    );
    let refused = attacker.wait_secret("grab-app", "TargetControlledByOther").await;
    assert_eq!(
        refused.message,
        r#"Secret app is controlled by FerrVaultSecret "app": not written"#
    );
    assert_eq!(vault.reveals(), 0, "a refused target costs no FerrVault request");

    // Positive control: the same hostile FerrVault does write a Secret nobody else has.
    let own = attacker_syncs(&world, "hostile", "mine").await;
    assert_eq!(own["password"], PLANTED.as_bytes());
    victim_syncs(&world, &world.fv.url()).await;
    world.assert_unchanged(&controlled).await;
    world.assert_unchanged(&of_app).await;
    vault.assert_nothing_of("the attacker's FerrVault", &not_the_attackers());
    finish(&world, &operator, &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_target_controlled_by_a_kind_not_served_here_should_never_be_written() {
    let world = World::start().await;
    let vault = Listener::start(Answer::vault(&[("password", PLANTED)])).await;
    let operator = Launch::new().insecure_http().start(&world);
    let attacker = world.attacker();
    attacker_connection(&world, "hostile", vault.url()).await;

    // external-secrets controls the Secrets it writes; its CRDs are not installed in this cluster.
    let controlled = world
        .others_secret(
            ATTACKER,
            json!({
                "metadata": {
                    "name": "synced-elsewhere",
                    "annotations": { ADOPTABLE_BY_ANNOTATION: "grab" },
                    "ownerReferences": [{
                        "apiVersion": "external-secrets.io/v1beta1", "kind": "ExternalSecret",
                        "name": "db", "uid": "6f1c2a4e-0000-4000-8000-00000000e5e5",
                        "controller": true, "blockOwnerDeletion": true,
                    }],
                },
                "stringData": { "password": "owned-by-external-secrets" },
            }),
        )
        .await;
    attacker
        .ferrvault_secret("grab", aimed_at("hostile", "synced-elsewhere"))
        .await;
    let refused = attacker.wait_secret("grab", "TargetControlledByOther").await;
    assert_eq!(
        refused.message,
        r#"Secret synced-elsewhere is controlled by ExternalSecret "db": not written"#
    );
    assert_eq!(vault.reveals(), 0, "a refused target costs no FerrVault request");

    // Positive control: the same hostile FerrVault does write a Secret nobody else has.
    let own = attacker_syncs(&world, "hostile", "mine").await;
    assert_eq!(own["password"], PLANTED.as_bytes());
    victim_syncs(&world, &world.fv.url()).await;
    world.assert_unchanged(&controlled).await;
    vault.assert_nothing_of("the attacker's FerrVault", &not_the_attackers());
    finish(&world, &operator, &[]).await;
}
