//! What the operator's flags say about leader election, and this replica's identity in it.

use crate::lease_rules::Timings;

/// What the operator's flags say about leader election.
#[derive(Clone, Debug)]
pub struct LeaderElectionConfig {
    /// `--leader-elect`: compete for the Lease; when `false` this replica leads at once.
    pub enabled: bool,
    /// The Lease's namespace.
    pub lease_namespace: String,
    /// The Lease's name.
    pub lease_name: String,
    /// Our identity in the Lease (see [`identity`]).
    pub identity: String,
    /// The `fieldManager` of our Lease writes, so the Lease's managedFields name the operator
    /// (kube-rs sends no User-Agent: without it the API server records `unknown`).
    pub field_manager: String,
    /// Lease duration, renew deadline, retry period.
    pub timings: Timings,
}

/// A unique candidate identity: the pod name plus a per-process uid, like client-go's
/// `hostname_uuid`, so a restarted pod with the same name is a new candidate.
pub fn identity(pod_name: &str) -> String {
    format!("{pod_name}_{}", uuid::Uuid::new_v4())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_should_start_with_the_pod_name_and_differ_per_process() {
        let (a, b) = (identity("operator-0"), identity("operator-0"));
        assert!(a.starts_with("operator-0_"), "{a}");
        assert_ne!(a, b, "a restarted pod with the same name is a new candidate");
    }
}
