//! The rollout floor against a hostile FerrVault: the tenant controls `spec.url`, so its
//! FerrVault can change every value every second and, without a floor, restart the workload on
//! every refresh. For about 15 seconds of such changes the target Secret follows (that is its job)
//! while the workload is restarted once: the floor is documented as 5 minutes
//! (`docs/security.md`, "Rollout floor"), and the deferral shows as `RolloutDeferred`.

use std::{collections::BTreeSet, sync::Mutex, time::Duration};

use ferrvault_operator::api::names::RESTARTED_AT_ANNOTATION;
use ferrvault_sim::testkit::poll_until;
use serde_json::json;

use crate::harness::{
    ATTACKER, Answer, Launch, Listener, PLAYGROUND_VAULT, World, attacker_connection, finish,
    not_the_attackers, victim_syncs,
};

/// Distinct contents the target must go through: one per second, about 15 seconds.
const CHANGES: usize = 15;

#[tokio::test(flavor = "multi_thread")]
async fn values_changing_every_second_should_restart_the_workload_once_while_the_secret_follows() {
    let world = World::start().await;
    let vault = Listener::start(Answer::rotating_vault(&[("password", "rotated")])).await;
    let operator = Launch::new().insecure_http().start(&world);
    let attacker = world.attacker();
    attacker_connection(&world, "hostile", vault.url()).await;
    world.deployment(ATTACKER, "web").await;
    attacker
        .ferrvault_secret(
            "app",
            json!({
                "connectionRef": { "name": "hostile" },
                "vault": PLAYGROUND_VAULT,
                "refreshInterval": "1s",
                "rolloutRestart": [{ "kind": "Deployment", "name": "web" }],
            }),
        )
        .await;

    let seen = Mutex::new(BTreeSet::new());
    poll_until(
        &format!("the target holding {CHANGES} successive values"),
        Duration::from_secs(4 * CHANGES as u64),
        || async {
            if let Some(data) = attacker.target("app").await {
                seen.lock().expect("seen lock").insert(data);
            }
            let count = seen.lock().expect("seen lock").len();
            if count >= CHANGES {
                Ok(())
            } else {
                Err(format!("{count} so far"))
            }
        },
    )
    .await;

    let restarts: Vec<String> = world
        .kube
        .audit()
        .into_iter()
        .filter(|e| {
            e.identity == world.operator_identity
                && e.resource == "deployments"
                && e.name == "web"
                && e.verb == "patch"
                && (200..300).contains(&e.code)
        })
        .map(|e| e.time)
        .collect();
    assert_eq!(
        restarts.len(),
        1,
        "one restart for {CHANGES} contents (the first change restarts at once): {restarts:?}"
    );
    let deferred = attacker
        .wait_secret_condition("app", "RolloutRestarted", "RolloutDeferred")
        .await;
    assert!(
        deferred.status == "False"
            && deferred
                .message
                .ends_with("a workload is restarted at most once per 5m0s"),
        "{deferred:?}"
    );
    let web = world.deployment_now(ATTACKER, "web").await;
    let template = web.spec.and_then(|s| s.template.metadata);
    assert!(
        template
            .and_then(|m| m.annotations)
            .is_some_and(|a| a.contains_key(RESTARTED_AT_ANNOTATION)),
        "the one restart is on the pod template"
    );
    attacker.wait_secret("app", "Synced").await;

    victim_syncs(&world, &world.fv.url()).await;
    vault.assert_nothing_of("the attacker's FerrVault", &not_the_attackers());
    finish(&world, &operator, &[]).await;
}
