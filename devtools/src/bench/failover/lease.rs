//! Reading the Lease the replicas compete for: who holds it, when it was renewed, and waiting
//! for a leader, a renewal or a takeover.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use tokio::time::Instant;

use crate::bench::driver::DriverProcess;

/// The Lease the replicas compete for (the `--leader-elect-id` default).
pub const LEASE_NAME: &str = "ferrvault-operator.ferrvault.com";
/// Its namespace.
pub const LEASE_NS: &str = "default";

/// A replica: its pod name (the identity prefix) and process.
pub struct Replica {
    /// The pod name.
    pub name: String,
    /// The process.
    pub process: DriverProcess,
}

/// The Lease's holder and last renewal, if held.
pub async fn lease_state(leases: &Api<Lease>) -> Option<(String, Option<String>)> {
    let spec = leases.get_opt(LEASE_NAME).await.ok()??.spec?;
    let holder = spec.holder_identity.filter(|h| !h.is_empty())?;
    let renewed = spec.renew_time.map(|t| format!("{:?}", t.0));
    Some((holder, renewed))
}

/// Which replica holds `holder` (identities are `<pod name>_<uuid>`).
pub fn replica_of(replicas: &[Replica], holder: &str) -> Option<usize> {
    replicas.iter().position(|r| {
        holder
            .strip_prefix(&r.name)
            .is_some_and(|rest| rest.starts_with('_'))
    })
}

/// Waits for a live replica to hold the Lease: its index and identity.
pub async fn wait_for_leader(
    leases: &Api<Lease>,
    replicas: &[Replica],
    within: Duration,
) -> Result<(usize, String), String> {
    let deadline = Instant::now() + within;
    loop {
        if let Some((h, _)) = lease_state(leases).await
            && let Some(i) = replica_of(replicas, &h)
        {
            return Ok((i, h));
        }
        if Instant::now() >= deadline {
            return Err(format!("no replica held the Lease within {within:?}"));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits (up to `within`) until the Lease's renew time changes: the leader just renewed.
pub async fn wait_for_renewal(leases: &Api<Lease>, within: Duration) {
    let deadline = Instant::now() + within;
    let first = lease_state(leases).await.and_then(|s| s.1);
    while Instant::now() < deadline {
        if lease_state(leases).await.and_then(|s| s.1) != first {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Waits until a live replica other than `old` holds the Lease; `false` at `deadline`.
pub async fn wait_for_takeover(
    leases: &Api<Lease>,
    replicas: &[Replica],
    old: &str,
    deadline: Instant,
) -> bool {
    while Instant::now() < deadline {
        if let Some((h, _)) = lease_state(leases).await
            && h != old
            && replica_of(replicas, &h).is_some()
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}
