//! What an attack may cost the shared operator, measured around the attack: it keeps running
//! (no exit, hence no restart), `/healthz` answers 200, its peak resident memory grows by at most
//! [`ATTACK_RSS_ALLOWANCE_MIB`] over the peak taken before the attack, and another tenant's new
//! FerrVaultSecret syncs within [`VICTIM_SYNC_WITHIN`] while the attack goes on.
//!
//! Use: [`victim_syncs`](super::victim_syncs), then [`Baseline::take`], then the attack, then
//! [`victim_keeps_syncing`] while the attacker's objects are being reconciled, then
//! [`Baseline::assert_held`] (and [`finish`](super::finish), which also scans for leaks).

use std::time::Duration;

use serde_json::json;

use super::{Operator, VICTIM_VAULT, World};

/// How much an attack may raise the operator's peak RSS (`VmHWM`) above its peak before it.
pub const ATTACK_RSS_ALLOWANCE_MIB: f64 = 32.0;

/// How soon another tenant's new FerrVaultSecret must be synced while an attack goes on.
pub const VICTIM_SYNC_WITHIN: Duration = Duration::from_secs(10);

/// The operator's peak RSS before an attack.
#[derive(Debug, Clone, Copy)]
pub struct Baseline {
    peak_mib: f64,
}

impl Baseline {
    /// The peak so far: take it once the operator is up and the victim synced, before the
    /// attacker creates anything.
    pub fn take(operator: &Operator) -> Baseline {
        Baseline {
            peak_mib: operator.peak_rss_mib(),
        }
    }

    /// The operator is still the process the test started, answers `/healthz` 200, and its peak
    /// RSS stayed within [`ATTACK_RSS_ALLOWANCE_MIB`] of the baseline.
    pub async fn assert_held(&self, operator: &mut Operator) {
        assert!(
            operator.is_running(),
            "the operator exited during the attack:\n{}",
            operator.log()
        );
        let (status, body) = operator.healthz().await;
        assert_eq!(status, 200, "/healthz after the attack:\n{body}");
        let peak = operator.peak_rss_mib();
        assert!(
            peak <= self.peak_mib + ATTACK_RSS_ALLOWANCE_MIB,
            "peak RSS {peak:.1} MiB after the attack, {:.1} MiB before: more than {ATTACK_RSS_ALLOWANCE_MIB} MiB \
             grown",
            self.peak_mib
        );
    }
}

/// The victim (set up by [`victim_syncs`](super::victim_syncs): connection `fv`) creates
/// FerrVaultSecret `name` during the attack; it must be Synced within [`VICTIM_SYNC_WITHIN`].
pub async fn victim_keeps_syncing(world: &World, name: &str) {
    let victim = world.victim();
    victim
        .ferrvault_secret(
            name,
            json!({
                "connectionRef": { "name": "fv" },
                "vault": VICTIM_VAULT,
                "selector": { "names": ["DB_URL"] },
            }),
        )
        .await;
    victim
        .wait_secret_within(name, ("Ready", "Synced"), VICTIM_SYNC_WITHIN)
        .await;
}
