//! Which listed custom resources are settled: a start's list queues those as refreshes (held
//! until every watch has listed, then run after any change), and the rest as changes, which
//! run at once ([`WatchSpec::listed_as_change`](controller_actors::WatchSpec::listed_as_change)).
//! Decided from the object alone: the stores a finer rule would read are still listing.

use kube::Resource;

use crate::{
    api::{FerrVaultConnection, FerrVaultSecret, Lenient},
    reconcile::rules::schedule::{freshness::reachable_here, spec_digest::synced_now},
};

/// A FerrVaultSecret needs a pass whatever the stores hold unless it synced here at its
/// generation, or at one differing only in `spec.suspend` (the status half of the freshness rule) and is not being deleted.
pub(super) fn secret_unsettled(cr: &Lenient<FerrVaultSecret>) -> bool {
    let settled = cr
        .valid()
        .is_some_and(|cr| cr.status.as_ref().is_some_and(|status| synced_now(cr, status)));
    !settled || cr.meta().deletion_timestamp.is_some()
}

/// A FerrVaultConnection needs a pass whatever the stores hold unless its last probe found it
/// reachable at its generation (the status half of the probe rule) and it is not being deleted.
pub(super) fn connection_unsettled(connection: &Lenient<FerrVaultConnection>) -> bool {
    let settled = connection.valid().is_some_and(|c| {
        c.status
            .as_ref()
            .is_some_and(|status| reachable_here(status, c.meta().generation))
    });
    !settled || connection.meta().deletion_timestamp.is_some()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

    use super::*;
    use crate::{
        api::{FerrVaultConnectionStatus, FerrVaultSecretStatus, Reason},
        reconcile::rules::status::secret_status::{SyncedState, after_failure, after_sync},
    };

    fn secret(generation: i64, status: Option<FerrVaultSecretStatus>) -> FerrVaultSecret {
        let mut cr: FerrVaultSecret = serde_json::from_value(serde_json::json!({
            "apiVersion": "ferrvault.com/v1alpha1", "kind": "FerrVaultSecret",
            "metadata": { "name": "app", "namespace": "ns", "generation": generation },
            "spec": { "connectionRef": { "name": "conn" }, "vault": "prod" },
        }))
        .expect("a valid FerrVaultSecret");
        cr.status = status;
        cr
    }

    fn synced_at(generation: i64) -> FerrVaultSecretStatus {
        let state = SyncedState {
            synced_keys: vec!["A".into()],
            owned_labels: vec![],
            owned_annotations: vec![],
            missing_keys: Default::default(),
            target: "app".into(),
            last_rollout_hash: None,
            rollout: None,
            target_resource_version: Some("7".into()),
            target_replaced_at: None,
            observed_inputs: String::new(),
            force_sync: Default::default(),
            source_version: None,
        };
        after_sync(
            &FerrVaultSecretStatus::default(),
            state,
            Some(generation),
            jiff::Timestamp::UNIX_EPOCH,
        )
    }

    #[test]
    fn only_a_secret_synced_at_its_generation_and_not_deleted_should_be_settled() {
        assert!(!secret_unsettled(&Lenient::Valid(secret(2, Some(synced_at(2))))));
        let failed = after_failure(
            &synced_at(2),
            Reason::ConnectionNotFound,
            "not found".into(),
            Some(2),
            jiff::Timestamp::UNIX_EPOCH,
        );
        let cases = [
            ("never synced", secret(2, None)),
            ("synced at an older generation", secret(2, Some(synced_at(1)))),
            ("failed since", secret(2, Some(failed))),
        ];
        for (what, cr) in cases {
            assert!(secret_unsettled(&Lenient::Valid(cr)), "{what}");
        }
        let mut deleting = secret(2, Some(synced_at(2)));
        deleting.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        assert!(secret_unsettled(&Lenient::Valid(deleting)), "being deleted");
    }

    fn connection(generation: i64, ready: Option<(&str, i64)>) -> Lenient<FerrVaultConnection> {
        let mut c: FerrVaultConnection = serde_json::from_value(serde_json::json!({
            "apiVersion": "ferrvault.com/v1alpha1", "kind": "FerrVaultConnection",
            "metadata": { "name": "conn", "namespace": "ns", "generation": generation },
            "spec": { "mode": "ferrvault", "url": "https://vault.example", "tokenSecretRef": { "name": "token", "key": "token" } },
        }))
        .expect("a valid FerrVaultConnection");
        c.status = ready.map(|(status, observed)| FerrVaultConnectionStatus {
            conditions: vec![Condition {
                type_: "Ready".into(),
                status: status.into(),
                observed_generation: Some(observed),
                reason: "Reachable".into(),
                message: String::new(),
                last_transition_time: Time(jiff::Timestamp::UNIX_EPOCH),
            }],
            ..FerrVaultConnectionStatus::default()
        });
        Lenient::Valid(c)
    }

    #[test]
    fn only_a_connection_found_reachable_at_its_generation_should_be_settled() {
        assert!(!connection_unsettled(&connection(3, Some(("True", 3)))));
        assert!(connection_unsettled(&connection(3, None)), "never probed");
        assert!(
            connection_unsettled(&connection(3, Some(("True", 2)))),
            "probed at an older generation"
        );
        assert!(
            connection_unsettled(&connection(3, Some(("False", 3)))),
            "found unreachable"
        );
    }
}
