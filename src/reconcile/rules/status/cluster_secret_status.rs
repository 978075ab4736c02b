//! What a ClusterFerrVaultSecret's status says after a pass: how many selected namespaces hold the
//! current copy, the first [`MAX_FAILED_NAMESPACES`] that do not and why, the content hash, how
//! many reads a pass makes, and `Ready`.
//!
//! # Guarantees
//! - `Ready=True` (reason `Synced`) only when **every** selected namespace holds its copy (none
//!   selected counts as every one); otherwise `Ready=False` with the reason of the first failed
//!   namespace (sorted by name) and a message counting them, so one namespace's refusal is visible
//!   without reading the list.
//! - `failedNamespaces` holds at most [`MAX_FAILED_NAMESPACES`] entries, sorted, each message cut
//!   to [`MAX_MESSAGE_BYTES`]: the status is bounded whatever the cluster holds. The counts are
//!   exact.
//! - No value reaches a message: the messages name namespaces, Secrets, kinds and reasons only.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::{
    conditions::{ConditionUpdate, upsert_condition},
    refresh_control::without_suspension,
};
use crate::{
    api::{
        ClusterFerrVaultSecretStatus, ConditionStatus, FailedNamespace, MAX_FAILED_NAMESPACES, Reason,
        RevealScope,
    },
    reconcile::rules::bounds::bounded_text::{MAX_MESSAGE_BYTES, cut},
};

/// Where one selected namespace's copy stands after a pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CopyState {
    /// It holds the current copy (written or confirmed by this pass).
    Provisioned,
    /// It does not, for this reason.
    Failed {
        /// The fixed reason.
        reason: Reason,
        /// Why, without a value.
        message: String,
    },
}

/// What one pass found, for the status.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FanOut {
    /// Each selected namespace's copy, by namespace.
    pub(crate) copies: BTreeMap<String, CopyState>,
    /// The content hash of the copies written or confirmed (`None`: nothing was revealed and the
    /// last one holds).
    pub(crate) content_hash: Option<String>,
    /// How many reads the pass made (or would make).
    pub(crate) scope: RevealScope,
    /// Whether the pass revealed and wrote (then `lastSyncedAt` moves).
    pub(crate) synced: bool,
    /// The force-sync token the pass honoured.
    pub(crate) force_sync: Option<String>,
    /// The hash of the selected versions the pass's reveal returned (`None`: nothing was
    /// revealed, or the connection follows no versions; the last one holds).
    pub(crate) source_version: Option<String>,
}

impl FanOut {
    /// How many copies are provisioned and how many failed.
    pub(crate) fn counts(&self) -> (u32, u32) {
        let provisioned = self
            .copies
            .values()
            .filter(|c| **c == CopyState::Provisioned)
            .count();
        let total = self.copies.len();
        (saturating_u32(provisioned), saturating_u32(total - provisioned))
    }
}

/// The status after `pass`, from `previous`, for the object at `generation`, at `now`.
pub(crate) fn cluster_secret_status(
    previous: &ClusterFerrVaultSecretStatus,
    pass: &FanOut,
    generation: Option<i64>,
    now: Timestamp,
) -> ClusterFerrVaultSecretStatus {
    let (provisioned, failed_count) = pass.counts();
    let selected = provisioned + failed_count;
    let failed: Vec<FailedNamespace> = pass
        .copies
        .iter()
        .filter_map(|(namespace, state)| match state {
            CopyState::Provisioned => None,
            CopyState::Failed { reason, message } => Some(FailedNamespace {
                namespace: namespace.clone(),
                reason: reason.as_str().to_owned(),
                message: cut(message.clone(), MAX_MESSAGE_BYTES),
            }),
        })
        .take(MAX_FAILED_NAMESPACES)
        .collect();
    let ready = match failed.first() {
        None => ConditionUpdate::ready(
            ConditionStatus::True,
            Reason::Synced,
            format!("{provisioned} of {selected} selected namespaces hold the current copy"),
            generation,
        ),
        Some(first) => {
            let reason = first_reason(pass);
            ConditionUpdate::ready(
                ConditionStatus::False,
                reason,
                format!(
                    "{provisioned} of {selected} selected namespaces hold the current copy; {failed_count} failed, \
                     first {:?}: {}",
                    first.namespace, first.message
                ),
                generation,
            )
        }
    };
    let mut status = ClusterFerrVaultSecretStatus {
        conditions: previous.conditions.clone(),
        observed_generation: generation,
        selected,
        provisioned,
        failed_namespaces: failed,
        content_hash: pass
            .content_hash
            .clone()
            .or_else(|| previous.content_hash.clone()),
        reveal_scope: pass.scope,
        observed_force_sync: pass.force_sync.clone(),
        observed_source_version: pass
            .source_version
            .clone()
            .or_else(|| previous.observed_source_version.clone()),
        last_synced_at: if pass.synced {
            Some(Time(now))
        } else {
            previous.last_synced_at.clone()
        },
    };
    without_suspension(&mut status.conditions);
    upsert_condition(&mut status.conditions, ready, now);
    status
}

/// The reason of the first failed namespace (sorted by name).
fn first_reason(pass: &FanOut) -> Reason {
    pass.copies
        .values()
        .find_map(|state| match state {
            CopyState::Failed { reason, .. } => Some(*reason),
            CopyState::Provisioned => None,
        })
        .unwrap_or(Reason::Synced)
}

fn saturating_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ConditionType;
    use crate::reconcile::rules::status::conditions::find_condition;

    fn pass(copies: impl IntoIterator<Item = (String, CopyState)>) -> FanOut {
        FanOut {
            copies: copies.into_iter().collect(),
            content_hash: Some("h".into()),
            scope: RevealScope::Shared,
            synced: true,
            force_sync: None,
            source_version: None,
        }
    }

    fn failed(reason: Reason) -> CopyState {
        CopyState::Failed {
            reason,
            message: "why".into(),
        }
    }

    #[test]
    fn a_cluster_secret_should_be_ready_only_when_every_selected_namespace_holds_its_copy() {
        let now = Timestamp::UNIX_EPOCH;
        let all = pass([
            ("a".into(), CopyState::Provisioned),
            ("b".into(), CopyState::Provisioned),
        ]);
        let status = cluster_secret_status(&ClusterFerrVaultSecretStatus::default(), &all, Some(2), now);
        let ready = find_condition(&status.conditions, ConditionType::Ready).expect("Ready");
        assert_eq!((ready.status.as_str(), ready.reason.as_str()), ("True", "Synced"));
        assert_eq!((status.selected, status.provisioned), (2, 2));
        let one_failed = pass([
            ("a".into(), CopyState::Provisioned),
            ("b".into(), failed(Reason::TargetNotOwned)),
        ]);
        let status = cluster_secret_status(&status, &one_failed, Some(2), now);
        let ready = find_condition(&status.conditions, ConditionType::Ready).expect("Ready");
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("False", "TargetNotOwned")
        );
        assert_eq!((status.selected, status.provisioned), (2, 1));
        assert_eq!(status.failed_namespaces[0].namespace, "b");
        let none = pass([]);
        let status = cluster_secret_status(&status, &none, Some(2), now);
        let ready = find_condition(&status.conditions, ConditionType::Ready).expect("Ready");
        assert_eq!(ready.status, "True", "nothing selected: nothing missing");
    }

    #[test]
    fn a_cluster_secret_status_should_list_at_most_twenty_failed_namespaces_sorted_and_count_all() {
        let many = pass((0..1000).map(|i| (format!("ns-{i:04}"), failed(Reason::ConnectionNotAllowed))));
        let status = cluster_secret_status(
            &ClusterFerrVaultSecretStatus::default(),
            &many,
            None,
            Timestamp::UNIX_EPOCH,
        );
        assert_eq!(status.failed_namespaces.len(), MAX_FAILED_NAMESPACES);
        assert_eq!(status.failed_namespaces[0].namespace, "ns-0000");
        assert_eq!(status.failed_namespaces[19].namespace, "ns-0019");
        assert_eq!((status.selected, status.provisioned), (1000, 0));
    }

    #[test]
    fn a_pass_that_revealed_nothing_should_keep_the_recorded_source_version() {
        let now = Timestamp::UNIX_EPOCH;
        let mut revealed = pass([("a".into(), CopyState::Provisioned)]);
        revealed.source_version = Some("v1".into());
        let status = cluster_secret_status(&ClusterFerrVaultSecretStatus::default(), &revealed, None, now);
        assert_eq!(status.observed_source_version.as_deref(), Some("v1"));
        let quiet = pass([("a".into(), CopyState::Provisioned)]);
        let status = cluster_secret_status(&status, &quiet, None, now);
        assert_eq!(
            status.observed_source_version.as_deref(),
            Some("v1"),
            "nothing revealed: the last versions hold"
        );
        let mut moved = pass([("a".into(), CopyState::Provisioned)]);
        moved.source_version = Some("v2".into());
        let status = cluster_secret_status(&status, &moved, None, now);
        assert_eq!(status.observed_source_version.as_deref(), Some("v2"));
    }
}
