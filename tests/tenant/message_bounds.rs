//! Text a tenant chooses, quoted back by the operator (issue 34 point 8): a Secret in the
//! attacker's namespace whose ownerReference names a controller of a 512 KiB kind and a 256 KiB
//! name (the API server checks neither's length), and forty FerrVaultSecrets aimed at it. Each is
//! refused (`TargetControlledByOther`) with a message quoting that controller. Unbounded, each
//! message is 768 KiB in a status, a log line and an Event, held in the operator's store of
//! FerrVaultSecrets; bounded, each is at most 1 KiB, cut while it is formatted, and every log line
//! stays short.

use k8s_openapi::api::core::v1::Secret;
use kube::{Api, api::PostParams};
use serde_json::json;

use crate::harness::{
    ATTACKER, Answer, Launch, Listener, World, aimed_at, attacker_connection,
    bounds::{Baseline, victim_keeps_syncing},
    finish, victim_syncs,
};

/// How many FerrVaultSecrets quote the controller.
const QUOTERS: usize = 40;

/// The most bytes a condition message has.
const MESSAGE_BOUND: usize = 1024;

/// A log line carries a message and a handful of fields, each at most 1 KiB.
const LOG_LINE_BOUND: usize = 8 * 1024;

#[tokio::test(flavor = "multi_thread")]
async fn a_controller_with_a_huge_kind_and_name_should_cost_a_bounded_message() {
    let world = World::start().await;
    let vault = Listener::start(Answer::vault(&[("password", "unused")])).await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);

    let attacker = world.attacker();
    attacker_connection(&world, "hostile", vault.url()).await;
    let (kind, name) = ("K".repeat(512 * 1024), "n".repeat(256 * 1024));
    let bloated: Secret = serde_json::from_value(json!({
        "metadata": {
            "name": "bloated",
            "ownerReferences": [{
                "apiVersion": "example.com/v1", "kind": kind, "name": name,
                "uid": "0a0a0a0a-0000-4000-8000-000000000001", "controller": true,
            }],
        },
        "stringData": { "password": "kept" },
    }))
    .expect("a Secret");
    Api::<Secret>::namespaced(attacker.client(), ATTACKER)
        .create(&PostParams::default(), &bloated)
        .await
        .expect("the attacker may create Secrets in its namespace");
    for i in 0..QUOTERS {
        attacker
            .ferrvault_secret(&format!("quote-{i}"), aimed_at("hostile", "bloated"))
            .await;
    }

    victim_keeps_syncing(&world, "during-attack").await;
    for i in 0..QUOTERS {
        let refused = attacker
            .wait_secret(&format!("quote-{i}"), "TargetControlledByOther")
            .await;
        assert!(
            refused.message.len() <= MESSAGE_BOUND,
            "a {}-byte message",
            refused.message.len()
        );
        assert!(
            refused
                .message
                .starts_with("Secret bloated is controlled by KKKK")
                && refused.message.ends_with(" bytes in all]"),
            "cut with its length: {}",
            &refused.message[..refused.message.len().min(200)]
        );
    }
    assert_eq!(vault.reveals(), 0, "a refused target costs no FerrVault request");
    baseline.assert_held(&mut operator).await;
    let statuses = attacker.statuses().await;
    assert!(
        statuses.len() < QUOTERS * 4 * 1024,
        "the attacker's statuses hold {} bytes",
        statuses.len()
    );
    let log = operator.log();
    let longest = log.lines().map(str::len).max().unwrap_or_default();
    assert!(longest <= LOG_LINE_BOUND, "a {longest}-byte log line");
    finish(&world, &operator, &[]).await;
}
