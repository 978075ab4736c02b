//! A hostile FerrVault answering `GET /operator/me` (issue 38, point 5): the tenant controls
//! `spec.url`, so its server decides what the operator's token check reads. Answers of 256 MiB,
//! 30,000 unclosed brackets, and a body that trickles one byte every 200 ms: the operator reads
//! no `me` answer past 64 KiB, reports the unusable ones on the connection's `TokenHealthy`
//! condition (`ResponseTooLarge`, `Unreachable`), gives up on the slow one at its per-attempt
//! timeout, and its memory stays within the bounds yardstick while another tenant keeps syncing.

use crate::harness::{
    Answer, Launch, Listener, World, attacker_connection,
    bounds::{Baseline, victim_keeps_syncing},
    finish,
    listener::Generated,
    victim_syncs,
};

/// How many connections each hostile answer is served to at once.
const HOSTILE: usize = 4;

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
    let attacker = world.attacker();
    for i in 0..HOSTILE {
        let too_large = attacker
            .wait_connection_condition(
                &format!("huge-{i}"),
                ("TokenHealthy", "ResponseTooLarge"),
                "GET /operator/me failed",
            )
            .await;
        assert_eq!(too_large.status, "Unknown");
        assert!(
            too_large.message.contains("a body over 65536 bytes"),
            "names the bound: {}",
            too_large.message
        );
        let malformed = attacker
            .wait_connection_condition(
                &format!("malformed-{i}"),
                ("TokenHealthy", "Unreachable"),
                "could not be decoded",
            )
            .await;
        assert!(
            !malformed.message.contains("[[[["),
            "quotes nothing of the answer: {}",
            malformed.message
        );
        // The probe answered: Ready is the probe's, whatever `me` did.
        attacker.wait_connection(&format!("slow-{i}"), "Reachable").await;
    }
    baseline.assert_held(&mut operator).await;
    finish(&world, &operator, &[]).await;
}
