//! A target controlled by another owner: in the attacker's namespace, a Secret a Deployment
//! controls (even one that carries the opt-in for the attacker's FerrVaultSecret: the opt-in
//! never overrides a controller) and the target of another FerrVaultSecret. The attacker aims a
//! FerrVaultSecret at each through its own hostile FerrVault; neither is written, and nothing is
//! revealed for them.

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
