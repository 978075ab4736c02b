//! A hostile FerrVault answering `GET /operator/me` (issue 38, point 5): the tenant controls
//! `spec.url`, so its server decides what the operator's token check reads. Answers of 256 MiB,
//! 30,000 unclosed brackets, and a body that trickles one byte every 200 ms: the operator reads
//! no `me` answer past 64 KiB, reports the unusable ones on the connection's `TokenHealthy`
//! condition (`ResponseTooLarge`, `Unreachable`), gives up on the slow one at its per-attempt
//! timeout, and its memory stays within the bounds yardstick while another tenant keeps syncing.

use ferrvault_operator::api::FerrVaultConnection;
use ferrvault_sim::testkit::poll_until;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::Api;

use crate::harness::{
    ATTACKER, Answer, Launch, Listener, World, attacker_connection,
    bounds::{Baseline, victim_keeps_syncing},
    finish,
    listener::Generated,
    tenant::SHOWS_WITHIN,
    victim_syncs,
};

/// How many connections each hostile answer is served to at once.
const HOSTILE: usize = 4;

/// The attacker's connection `name`'s `TokenHealthy` condition once `me` was reported unusable
/// (`ResponseTooLarge` or `Unreachable`).
async fn token_condition(world: &World, name: &str) -> Condition {
    let api = Api::<FerrVaultConnection>::namespaced(world.admin.clone(), ATTACKER);
    poll_until(
        &format!("{ATTACKER}/{name} TokenHealthy unusable"),
        SHOWS_WITHIN,
        || async {
            let status = api
                .get_status(name)
                .await
                .map_err(|e| e.to_string())?
                .status
                .unwrap_or_default();
            status
                .conditions
                .iter()
                .find(|c| {
                    c.type_ == "TokenHealthy"
                        && ["ResponseTooLarge", "Unreachable"].contains(&c.reason.as_str())
                })
                .cloned()
                .ok_or_else(|| format!("{:?}", status.conditions))
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_huge_malformed_or_slow_me_should_be_reported_while_the_operator_stays_bounded() {
    let world = World::start().await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);

    let huge = Listener::start(Answer::Me(Generated::zeros(256 << 20))).await;
    let malformed = Listener::start(Answer::Me(Generated::nested(30_000))).await;
    let slow = Listener::start(Answer::SlowMe).await;
    for i in 0..HOSTILE {
        attacker_connection(&world, &format!("huge-{i}"), huge.url()).await;
        attacker_connection(&world, &format!("malformed-{i}"), malformed.url()).await;
        attacker_connection(&world, &format!("slow-{i}"), slow.url()).await;
    }

    victim_keeps_syncing(&world, "during-attack").await;
    // The yardstick is held once every hostile answer was read, before the reasons are checked:
    // a missing bound then fails on memory rather than on a reason never shown.
    for i in 0..HOSTILE {
        for name in [format!("huge-{i}"), format!("malformed-{i}")] {
            token_condition(&world, &name).await;
        }
    }
    baseline.assert_held(&mut operator).await;
    let attacker = world.attacker();
    for i in 0..HOSTILE {
        let too_large = token_condition(&world, &format!("huge-{i}")).await;
        assert_eq!(
            (too_large.status.as_str(), too_large.reason.as_str()),
            ("Unknown", "ResponseTooLarge")
        );
        assert!(
            too_large.message.contains("a body over 65536 bytes"),
            "names the bound: {}",
            too_large.message
        );
        let malformed = token_condition(&world, &format!("malformed-{i}")).await;
        assert_eq!(malformed.reason, "Unreachable");
        assert!(
            malformed.message.contains("could not be decoded") && !malformed.message.contains("[[[["),
            "says why, quoting nothing of the answer: {}",
            malformed.message
        );
        // The probe answered: Ready is the probe's, whatever `me` did.
        attacker.wait_connection(&format!("slow-{i}"), "Reachable").await;
    }
    finish(&world, &operator, &[]).await;
}
