//! A pre-existing Secret nobody controls, without the opt-in: a FerrVaultSecret naming it as its
//! target must not take it over (no spec field can), so the attacker's hostile FerrVault cannot
//! overwrite a Secret someone put there by hand. With the opt-in on the Secret
//! (`ferrvault.com/adoptable-by: <FerrVaultSecret>`, set by whoever may edit the Secret) it is
//! taken over at once and syncs, keeping its labels.

use ferrvault_operator::api::names::ADOPTABLE_BY_ANNOTATION;
use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api, ResourceExt,
    api::{Patch, PatchParams},
};
use serde_json::json;

use crate::harness::{
    ATTACKER, Answer, Launch, Listener, World, aimed_at, attacker_connection, finish, not_the_attackers,
    victim_syncs,
};

/// What the attacker's FerrVault reveals.
const PLANTED: &str = "planted-by-the-attacker";

#[tokio::test(flavor = "multi_thread")]
async fn an_unowned_target_should_be_taken_over_only_once_it_opts_in() {
    let world = World::start().await;
    let vault = Listener::start(Answer::vault(&[("password", PLANTED)])).await;
    let operator = Launch::new().insecure_http().start(&world);
    let attacker = world.attacker();
    attacker_connection(&world, "hostile", vault.url()).await;
    let shared = world
        .others_secret(
            ATTACKER,
            json!({
                "metadata": { "name": "shared", "labels": { "team": "shop" } },
                "stringData": { "password": "set-by-hand" },
            }),
        )
        .await;

    attacker
        .ferrvault_secret("app", aimed_at("hostile", "shared"))
        .await;
    let refused = attacker.wait_secret("app", "TargetNotOwned").await;
    assert_eq!(
        (refused.status.as_str(), refused.message.as_str()),
        (
            "False",
            "Secret shared exists and is not controlled by this FerrVaultSecret: not written; to hand it \
             over, annotate the Secret with ferrvault.com/adoptable-by=app"
        )
    );
    assert_eq!(vault.reveals(), 0, "a refused target costs no FerrVault request");
    victim_syncs(&world, &world.fv.url()).await;
    world.assert_unchanged(&shared).await;

    // Positive control: the Secret's owner hands it over; it syncs at once.
    let hand_over = json!({"metadata": {"annotations": { ADOPTABLE_BY_ANNOTATION: "app" }}});
    Api::<Secret>::namespaced(world.admin.clone(), ATTACKER)
        .patch("shared", &PatchParams::default(), &Patch::Merge(&hand_over))
        .await
        .expect("the owner annotates its Secret");
    attacker.wait_secret("app", "Synced").await;
    let adopted = world.secret(ATTACKER, "shared").await;
    let controller = adopted
        .owner_references()
        .iter()
        .find(|o| o.controller == Some(true))
        .expect("a controller now");
    assert_eq!(
        (controller.kind.as_str(), controller.name.as_str()),
        ("FerrVaultSecret", "app")
    );
    assert_eq!(
        attacker.target("shared").await.expect("the target")["password"],
        PLANTED.as_bytes()
    );
    assert_eq!(adopted.labels(), shared.labels(), "labels kept");
    vault.assert_nothing_of("the attacker's FerrVault", &not_the_attackers());
    finish(&world, &operator, &[]).await;
}
