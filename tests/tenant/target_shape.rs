//! Shaping the target (issue 36 points 5-6) from a tenant's side:
//!
//! - `target.metadata` forging the operator's or Kubernetes' own annotations on its target: the
//!   adoption opt-in (`ferrvault.com/adoptable-by`, which would hand the Secret to another
//!   FerrVaultSecret), a content hash, a ServiceAccount-token marker. Refused at admission by the
//!   CRD's CEL rule; written into storage past the schema, refused by the reconciler
//!   (`InvalidSpec`) before anything is revealed. (Not a memory lever: the schema bounds the
//!   maps, the API server an object; the yardstick is kept to show the refusals cost nothing.)
//! - `creationPolicy: Merge` into Secrets it may not write: one another controller owns (even
//!   opted in), one that never opted in, one that does not exist. None is written or created;
//!   nothing is revealed for them.
//!
//! Each runs with the bounds yardstick ([`Baseline`], [`victim_keeps_syncing`]) and a positive
//! control through the same hostile FerrVault.

use ferrvault_operator::api::{names::ADOPTABLE_BY_ANNOTATION, target_shape::RESERVED_MESSAGE};
use kube::ResourceExt;
use serde_json::{Value, json};

use crate::harness::{
    ATTACKER, Answer, Launch, Listener, PLAYGROUND_VAULT, World, attacker_connection,
    bounds::{Baseline, victim_keeps_syncing},
    finish, not_the_attackers, victim_syncs,
};

/// What the attacker's FerrVault reveals.
const PLANTED: &str = "planted-by-the-attacker";

/// A FerrVaultSecret spec through the attacker's hostile connection with `target`.
fn hostile_spec(target: Value) -> Value {
    json!({
        "connectionRef": { "name": "hostile" },
        "vault": PLAYGROUND_VAULT,
        "target": target,
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn forged_target_annotations_should_be_refused_at_admission_and_by_the_reconciler() {
    let world = World::start().await;
    let vault = Listener::start(Answer::vault(&[("password", PLANTED)])).await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);
    let attacker = world.attacker();
    attacker_connection(&world, "hostile", vault.url()).await;

    for (name, key) in [
        ("adopt", ADOPTABLE_BY_ANNOTATION),
        ("hash", "ferrvault.com/content-hash"),
        ("token", "kubernetes.io/service-account.name"),
        ("k8s", "k8s.io/anything"),
    ] {
        let evil = hostile_spec(json!({ "metadata": { "annotations": { key: "victim" } } }));
        let refusal = attacker
            .try_ferrvault_secret(name, evil.clone())
            .await
            .expect_err("refused at admission");
        assert!(
            matches!(&refusal, kube::Error::Api(status)
                if status.code == 422 && status.message.contains(RESERVED_MESSAGE)),
            "{key}: refused by the CRD's CEL rule: {refusal}"
        );
        // As an object stored before the schema had the rule: straight into storage.
        world.store_unadmitted(ATTACKER, name, evil);
    }
    victim_keeps_syncing(&world, "during-attack").await;
    for name in ["adopt", "hash", "token", "k8s"] {
        let refused = attacker.wait_secret(name, "InvalidSpec").await;
        assert_eq!(
            refused.message,
            format!(
                "spec.target.metadata.annotations: {RESERVED_MESSAGE}; fix the object (it bypassed the CRD \
                 schema)"
            )
        );
        assert_eq!(attacker.target(name).await, None, "nothing written");
    }
    assert_eq!(vault.reveals(), 0, "nothing is revealed for a refused spec");
    baseline.assert_held(&mut operator).await;

    // Positive control: the recommended labels and an annotation of the tenant's own prefix.
    let fits = hostile_spec(json!({ "metadata": {
        "labels": { "app.kubernetes.io/name": "shop" },
        "annotations": { "example.com/rotation": "weekly" },
    } }));
    attacker.ferrvault_secret("fits", fits).await;
    attacker.wait_secret("fits", "Synced").await;
    let written = world.secret(ATTACKER, "fits").await;
    assert_eq!(written.labels()["app.kubernetes.io/name"], "shop");
    assert_eq!(written.annotations()["example.com/rotation"], "weekly");
    vault.assert_nothing_of("the attacker's FerrVault", &not_the_attackers());
    finish(&world, &operator, &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn merge_should_never_write_a_secret_that_did_not_opt_in_or_that_another_controller_owns() {
    let world = World::start().await;
    let vault = Listener::start(Answer::vault(&[("password", PLANTED)])).await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);
    let attacker = world.attacker();
    attacker_connection(&world, "hostile", vault.url()).await;

    // A Secret the Deployment `db` controls, opted in (by whoever may edit it) for `grab`.
    let db = world.deployment(ATTACKER, "db").await;
    let controlled = world
        .others_secret(
            ATTACKER,
            json!({
                "metadata": {
                    "name": "db-credentials",
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
    // A Secret put there by hand, never opted in.
    let by_hand = world
        .others_secret(
            ATTACKER,
            json!({
                "metadata": { "name": "by-hand" },
                "stringData": { "password": "set-by-hand" },
            }),
        )
        .await;
    let merge_into = |target: &str| hostile_spec(json!({ "name": target, "creationPolicy": "Merge" }));
    attacker
        .ferrvault_secret("grab", merge_into("db-credentials"))
        .await;
    attacker.ferrvault_secret("take", merge_into("by-hand")).await;
    attacker.ferrvault_secret("make", merge_into("nowhere")).await;
    victim_keeps_syncing(&world, "during-attack").await;
    attacker.wait_secret("grab", "TargetControlledByOther").await;
    attacker.wait_secret("take", "TargetNotOwned").await;
    let missing = attacker.wait_secret("make", "TargetMissing").await;
    assert_eq!(
        missing.message,
        format!(
            "Secret nowhere does not exist: creationPolicy Merge writes only into an existing Secret \
             annotated {ADOPTABLE_BY_ANNOTATION}=make"
        )
    );
    assert_eq!(vault.reveals(), 0, "a refused target costs no FerrVault request");
    assert_eq!(attacker.target("nowhere").await, None, "Merge never creates");
    baseline.assert_held(&mut operator).await;

    // Positive control: a Secret opted in for `share`, nobody's controller: our key merged in,
    // the key already there kept.
    world
        .others_secret(
            ATTACKER,
            json!({
                "metadata": { "name": "shared", "annotations": { ADOPTABLE_BY_ANNOTATION: "share" } },
                "stringData": { "mine": "kept" },
            }),
        )
        .await;
    attacker.ferrvault_secret("share", merge_into("shared")).await;
    attacker.wait_secret("share", "Synced").await;
    let shared = attacker.target("shared").await.expect("the target exists");
    assert_eq!(shared["mine"], b"kept");
    assert_eq!(shared["password"], PLANTED.as_bytes());
    world.assert_unchanged(&controlled).await;
    world.assert_unchanged(&by_hand).await;
    vault.assert_nothing_of("the attacker's FerrVault", &not_the_attackers());
    finish(&world, &operator, &[]).await;
}
