//! Proof of issue 3's single-flight reveals, against the FerrVault simulator: 100 concurrent
//! reveals of one vault with mixed key selectors cost exactly one request, and every caller
//! receives exactly its own keys and its own `missing`.

use std::{collections::BTreeSet, sync::Arc, time::Duration};

use ferrvault_operator::ferrvault::{
    ClientConfig, Credential, Endpoint, FerrVault, KeySelector, RevealRequest, RevealScope,
};
use ferrvault_sim::ferrvault::{FerrVaultSim, SimConfig};
use tokio::time::Instant;

const TOKEN: &str = "fvsat_single-flight-proof";
const LABEL: &str = "app-sat";
const KEYS: [&str; 6] = ["A", "B", "C", "D", "E", "F"];

/// Caller `i`'s selector: everything for every 10th caller, else a mix of existing and absent
/// keys that differs from caller to caller.
fn selector(i: usize) -> KeySelector {
    if i.is_multiple_of(10) {
        return KeySelector::All;
    }
    let mut names: BTreeSet<String> = KEYS
        .iter()
        .enumerate()
        .filter(|(k, _)| (i >> k) & 1 == 1)
        .map(|(_, n)| (*n).to_owned())
        .collect();
    if i.is_multiple_of(3) {
        names.insert(format!("ABSENT_{i}"));
    }
    if names.is_empty() {
        names.insert("A".into());
    }
    KeySelector::Names(names)
}

/// A simulator holding vault `app` (every key of [`KEYS`]) readable with [`TOKEN`], and a
/// client (whose reveals wait `coalesce_window` for others to join), endpoint and credential for
/// it.
async fn app_vault(coalesce_window: Duration) -> (FerrVaultSim, FerrVault, Endpoint, Credential) {
    let config = SimConfig::default()
        .vault("app", KEYS.iter().map(|k| (*k, format!("value-of-{k}"))))
        .service_account_token(TOKEN, "app")
        .token_label(TOKEN, LABEL);
    let sim = FerrVaultSim::start(config).await.unwrap();
    let client = FerrVault::new(ClientConfig {
        coalesce_window,
        ..crate::plain_http_config()
    });
    let endpoint = Endpoint::parse(&sim.url()).unwrap();
    let credential = Credential::new(TOKEN).unwrap();
    (sim, client, endpoint, credential)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_reveals_of_one_vault_should_cost_one_request_and_each_get_their_own_keys() {
    // Concurrent here means within one window of the barrier: on two cores at load 10, the 100
    // callers it releases took more than the default 25ms to all reach the client (2 requests).
    let (sim, client, endpoint, credential) = app_vault(Duration::from_millis(500)).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let barrier = Arc::new(tokio::sync::Barrier::new(100));
    let mut tasks = Vec::new();
    for i in 0..100 {
        let (client, endpoint, credential, barrier) = (
            client.clone(),
            endpoint.clone(),
            credential.clone(),
            barrier.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let request = RevealRequest {
                scope: RevealScope::FerrVault,
                vault: "app".into(),
                keys: selector(i),
            };
            barrier.wait().await;
            (i, client.reveal(&endpoint, &credential, request, deadline).await)
        }));
    }
    for task in tasks {
        let (i, revealed) = task.await.unwrap();
        let revealed = revealed.unwrap_or_else(|e| panic!("caller {i} failed: {e}"));
        let (want_keys, want_missing): (Vec<String>, Vec<String>) = match selector(i) {
            KeySelector::All => (KEYS.iter().map(|k| (*k).to_owned()).collect(), vec![]),
            KeySelector::Names(names) => names.into_iter().partition(|n| KEYS.contains(&n.as_str())),
        };
        assert_eq!(
            revealed.secrets.keys().cloned().collect::<Vec<_>>(),
            want_keys,
            "caller {i}'s keys"
        );
        assert_eq!(revealed.missing.names(), want_missing, "caller {i}'s missing");
        for (name, value) in &revealed.secrets {
            assert_eq!(value.expose(), format!("value-of-{name}"));
        }
    }
    let stats = sim.stats().token(LABEL);
    assert_eq!(stats.requests, 1, "exactly one request reached the simulator");
    assert_eq!(
        client.reveals_in_progress(),
        0,
        "nothing is kept after the request"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_named_callers_of_one_wave_should_cost_one_request_even_when_they_come_one_by_one() {
    let (sim, client, endpoint, credential) = app_vault(crate::plain_http_config().coalesce_window).await;
    let reveal = |caller: String, i: usize| {
        let (client, endpoint, credential) = (client.clone(), endpoint.clone(), credential.clone());
        async move {
            let request = RevealRequest {
                scope: RevealScope::FerrVault,
                vault: "app".into(),
                keys: selector(i),
            };
            let deadline = Instant::now() + Duration::from_secs(30);
            client
                .reveal_in_wave(&caller, &endpoint, &credential, request, deadline)
                .await
                .unwrap_or_else(|e| panic!("caller {i} failed: {e}"))
        }
    };
    // Caller 0 wants everything; the others come one after another, as the worker pool runs them.
    for i in (0..29).map(|i| i * 10) {
        let revealed = reveal(format!("cr-{i}"), i).await;
        assert_eq!(revealed.secrets.len(), KEYS.len(), "caller {i}");
    }
    assert_eq!(sim.stats().token(LABEL).requests, 1, "one request for 29 callers");
    assert_eq!(client.wave_answers_kept(), 1, "kept for the rest of the wave");
    reveal("cr-0".into(), 0).await;
    assert_eq!(
        sim.stats().token(LABEL).requests,
        2,
        "a caller's own next reveal reaches FerrVault"
    );
}
