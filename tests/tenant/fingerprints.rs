//! The credential fingerprint in `/metrics` (issue 34 point 8): whoever reads the metrics (a
//! shared Grafana, the scrapers) sees each credential's `credential` label. Were it a plain hash
//! of the URL and the token, a guess at a low-entropy token would be checked offline against it;
//! keyed with a key derived from the operator's content-hash key, it tells nothing without that
//! key, and stays the same label after a restart (the series continues).

use ferrvault_sim::testkit::poll_until;
use sha2::{Digest, Sha256};
use std::time::Duration;

use crate::harness::{Launch, Operator, VICTIM_TOKEN, VICTIM_VAULT, World, finish, victim_syncs};

/// The `credential` labels of `ferrvault_client_requests_total` in `operator`'s `/metrics`.
async fn credential_labels(operator: &Operator) -> Vec<String> {
    let (_, metrics) = operator.scrapes().await.remove(0);
    let mut labels: Vec<String> = metrics
        .lines()
        .filter(|line| line.starts_with("ferrvault_client_requests_total{"))
        .filter_map(|line| line.split("credential=\"").nth(1)?.split('"').next())
        .map(str::to_owned)
        .collect();
    labels.sort();
    labels.dedup();
    labels
}

/// The first 12 hex digits of the plain SHA-256 of `url`, `0x00`, `token`: what the label was.
fn plain_fingerprint(url: &str, token: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(url.as_bytes());
    hasher.update([0u8]);
    hasher.update(token.as_bytes());
    hex::encode(hasher.finalize())[..12].to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_metrics_fingerprint_should_be_keyed_and_survive_a_restart() {
    let world = World::start().await;
    let launch = || Launch::new().insecure_http().short_lease();
    let first = launch().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let labels = credential_labels(&first).await;
    assert_eq!(labels.len(), 1, "the victim's one credential: {labels:?}");
    let url = world.fv.url().trim_end_matches('/').to_owned();
    assert_ne!(
        labels[0],
        plain_fingerprint(&url, VICTIM_TOKEN),
        "not the plain hash a guess is checked against"
    );

    // Another process (a restart, a failover): the same label for the same credential.
    drop(first);
    let second = launch().start(&world);
    let victim = world.victim();
    victim.sync("after-restart", "fv", VICTIM_VAULT, None).await;
    victim.wait_secret("after-restart", "Synced").await;
    let again = poll_until("the new process revealed", Duration::from_secs(30), || async {
        let labels = credential_labels(&second).await;
        if labels.is_empty() {
            Err("no credential yet".to_owned())
        } else {
            Ok(labels)
        }
    })
    .await;
    assert_eq!(again, labels, "the same fingerprint in another process");
    finish(&world, &second, &[]).await;
}
