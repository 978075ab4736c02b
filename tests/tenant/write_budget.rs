//! A tenant choosing how often the operator writes under its identity: many FerrVaultSecrets
//! with `refreshInterval: 1s` against the attacker's own FerrVault, whose values change every
//! second, so every refresh rewrites the target, the status and an Event. Two protections hold
//! it (`docs/security.md`, "Write budget"):
//! - `--min-refresh-interval`: the interval is admitted but clamped, the object says so
//!   (`RefreshIntervalClamped=True/BelowMinimum`) and the refresh metric shows the interval used;
//! - the namespace's write budget: over any window the API server's audit shows the operator's
//!   writes for the attacker's namespace within `burst + qps × window` plus the passes admitted
//!   before the budget ran dry, while another tenant keeps syncing within 10 s.
//!
//! The operator runs with a small budget and floor so the attack spends them within seconds;
//! without the budget the same attack writes several times the bound in the window.

use std::time::Duration;

use ferrvault_sim::testkit::poll_until;
use jiff::Timestamp;
use serde_json::json;

use crate::harness::{
    ATTACKER, Answer, Launch, Listener, PLAYGROUND_VAULT, World, attacker_connection,
    bounds::{Baseline, victim_keeps_syncing},
    finish, not_the_attackers, victim_syncs,
};

/// The attacker's FerrVaultSecrets, all on one hostile connection.
const OBJECTS: usize = 30;
/// The operator's `--min-refresh-interval` in this test.
const FLOOR: &str = "2s";
/// Each namespace's write budget in this test: `--namespace-write-qps`, `--namespace-write-burst`.
const QPS: f64 = 5.0;
const BURST: u32 = 20;
/// The measured window.
const WINDOW: Duration = Duration::from_secs(10);
/// Writes of passes admitted before the budget ran dry: each worker of the FerrVaultSecret
/// controller (`--max-concurrent-reconciles`, 4) finishing one pass of at most 4 writes (target,
/// pending-rollout or final status, status, an Event).
const ADMITTED_PASSES_WRITES: f64 = 4.0 * 4.0;

#[tokio::test(flavor = "multi_thread")]
async fn one_second_refreshes_of_rotating_values_should_be_clamped_and_stay_within_the_write_budget() {
    let world = World::start().await;
    let vault = Listener::start(Answer::rotating_vault(&[("password", "rotated")])).await;
    let mut operator = Launch::new()
        .insecure_http()
        .min_refresh_interval(FLOOR)
        .namespace_write_budget(QPS, BURST)
        .start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);

    let attacker = world.attacker();
    attacker_connection(&world, "hostile", vault.url()).await;
    for n in 0..OBJECTS {
        let spec = json!({
            "connectionRef": { "name": "hostile" },
            "vault": PLAYGROUND_VAULT,
            "refreshInterval": "1s",
        });
        attacker.ferrvault_secret(&format!("evil-{n}"), spec).await;
    }
    let clamped = attacker
        .wait_secret_condition("evil-0", "RefreshIntervalClamped", "BelowMinimum")
        .await;
    assert_eq!(
        (clamped.status.as_str(), clamped.message.as_str()),
        (
            "True",
            "refreshInterval 1s is below the operator's minimum of 2s; refreshing every 2s"
        ),
        "{clamped:?}"
    );
    // Each object's first pass adds the finalizer (a write that follows the tenant's create one
    // for one, charged but not held back): the window starts after them.
    poll_until(
        "every attacker object's first pass",
        Duration::from_secs(30),
        || async {
            let first_passes = writes(&world, Timestamp::MIN)
                .into_iter()
                .filter(|w| w.resource == "ferrvaultsecrets" && w.subresource.is_empty())
                .map(|w| w.name)
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            if first_passes >= OBJECTS {
                Ok(())
            } else {
                Err(format!("{first_passes} of {OBJECTS}"))
            }
        },
    )
    .await;
    let start = Timestamp::now();

    victim_keeps_syncing(&world, "during-attack").await;
    let end = start + WINDOW;
    poll_until(
        "the attack still writing after the window",
        Duration::from_secs(60),
        || async {
            let last = writes(&world, start).last().map(|w| w.at);
            last.filter(|at| *at >= end)
                .map(drop)
                .ok_or(format!("last write at {last:?}"))
        },
    )
    .await;

    let in_window: Vec<Write> = writes(&world, start).into_iter().filter(|w| w.at < end).collect();
    let bound = f64::from(BURST) + QPS * WINDOW.as_secs_f64() + ADMITTED_PASSES_WRITES;
    assert!(
        in_window.len() as f64 <= bound,
        "{} writes for the attacker's namespace in {WINDOW:?}, over the budget's {bound}: {:#?}",
        in_window.len(),
        in_window.iter().map(Write::describe).collect::<Vec<_>>()
    );
    // The finalizers and first passes left the bucket in debt, repaid within the window.
    assert!(!in_window.is_empty(), "the attacker is throttled, not starved");
    let metrics = metrics(&operator).await;
    let throttled = sample(
        &metrics,
        "ferrvault_write_budget_throttled_total",
        &["controller=\"ferrvaultsecret\""],
    );
    assert!(throttled > 0.0, "the budget held passes back: {throttled}");
    eprintln!(
        "{} writes for the attacker's namespace in {WINDOW:?} (bound {bound}); {throttled} passes held back",
        in_window.len()
    );
    let interval = sample(
        &metrics,
        "ferrvault_secret_refresh_interval_seconds",
        &[&format!("namespace=\"{ATTACKER}\""), "name=\"evil-0\""],
    );
    assert_eq!(interval, 2.0, "the refresh metric shows the interval used");

    baseline.assert_held(&mut operator).await;
    vault.assert_nothing_of("the attacker's FerrVault", &not_the_attackers());
    finish(&world, &operator, &[]).await;
}

/// One write the operator made for the attacker's namespace, as the API server audited it.
#[derive(Debug)]
struct Write {
    at: Timestamp,
    verb: String,
    resource: String,
    subresource: String,
    name: String,
}

impl Write {
    fn describe(&self) -> String {
        format!(
            "{} {} {}/{} {}",
            self.at, self.verb, self.resource, self.subresource, self.name
        )
    }
}

/// The operator's writes (create, update, patch, delete) in the attacker's namespace audited at
/// or after `since`, in order.
fn writes(world: &World, since: Timestamp) -> Vec<Write> {
    world
        .kube
        .audit()
        .into_iter()
        .filter(|e| {
            e.identity == world.operator_identity
                && e.namespace == ATTACKER
                && matches!(e.verb.as_str(), "create" | "update" | "patch" | "delete")
        })
        .map(|e| Write {
            at: e.time.parse().expect("audit times are RFC 3339"),
            verb: e.verb,
            resource: e.resource,
            subresource: e.subresource,
            name: e.name,
        })
        .filter(|w| w.at >= since)
        .collect()
}

/// `/metrics` of `operator`.
async fn metrics(operator: &crate::harness::Operator) -> String {
    operator
        .scrapes()
        .await
        .into_iter()
        .find(|(url, _)| url.ends_with("/metrics"))
        .map(|(_, body)| body)
        .expect("a /metrics scrape")
}

/// The value of the sample of `family` whose labels include every one of `labels`; 0 without
/// one.
fn sample(metrics: &str, family: &str, labels: &[&str]) -> f64 {
    metrics
        .lines()
        .filter_map(|line| line.strip_prefix(family)?.strip_prefix('{'))
        .filter_map(|rest| rest.split_once("} "))
        .find(|(set, _)| labels.iter().all(|label| set.split(',').any(|l| l == *label)))
        .and_then(|(_, value)| value.trim().parse().ok())
        .unwrap_or(0.0)
}
