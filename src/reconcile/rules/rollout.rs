//! When workloads must be restarted, and the patch that restarts them (reference §3.5).
//!
//! # Guarantees
//! - A new target Secret restarts nothing; nor does an existing, unchanged one after an upgrade
//!   (its current content becomes the baseline).
//! - A content change restarts each workload once: the per-CR pod-template annotation records
//!   the hash it was restarted for, so a retry only touches the workloads that missed it and an
//!   unchanged Secret never restarts anything again (no restart loop).
//! - A failed restart stays due until it succeeds, even though the Secret already holds the new
//!   content: the pending hash is recorded in status *before* the Secret is written.
//! - The rollout floor: a workload is restarted by the operator at most once per floor
//!   ([`ROLLOUT_FLOOR`] by default), measured from its `ferrvault.com/restarted-at`, however
//!   often its content changes (a hostile FerrVault behind a tenant's `spec.url` can change
//!   values every second). A restart due sooner is deferred to the end of the floor, not dropped.
//! - Stamps no longer ours go with the next restart the operator makes anyway, never with one of
//!   their own (issue 34 point 8): a per-CR annotation whose FerrVaultSecret is gone, or no longer
//!   lists the workload, is removed by the same patch that restarts the workload for another
//!   FerrVaultSecret ([`stale_stamps`]). Removing an annotation from a pod template is itself a
//!   rollout, so removing it on its own would restart the workload for nothing; on a deletion it
//!   would restart it while its Secret is being garbage-collected, and its new pods would not
//!   start. A stale stamp is inert meanwhile: a keyed hash (it tells nothing of the values),
//!   read by nothing but these rules.

use std::{
    collections::{BTreeMap, HashSet},
    time::Duration,
};

use jiff::Timestamp;
use serde_json::{Map, Value, json};

use crate::api::{
    RolloutTarget, WorkloadKind,
    names::{RESTARTED_AT_ANNOTATION, WORKLOAD_CONTENT_HASH_PREFIX, workload_content_hash_annotation},
};

/// The default rollout floor: the least time between two restarts of one workload by the
/// operator. Five minutes lets a real rotation through at once and bounds a storm of content
/// changes to twelve restarts an hour per workload.
pub(crate) const ROLLOUT_FLOOR: Duration = Duration::from_secs(5 * 60);

/// When the workload may next be restarted: `None` now, else the end of the floor. `last_restart`
/// is its `ferrvault.com/restarted-at` ([`last_restart`]). A time in the future counts as now, so a
/// skewed clock or an edited annotation can delay a restart by one floor at most per pass, and
/// never allows one sooner.
pub(crate) fn restart_deferred_until(
    last_restart: Option<Timestamp>,
    now: Timestamp,
    floor: Duration,
) -> Option<Timestamp> {
    let until = last_restart?
        .min(now)
        .checked_add(floor)
        .unwrap_or(Timestamp::MAX);
    (until > now).then_some(until)
}

/// When the operator last restarted a workload: its pod template's `ferrvault.com/restarted-at`,
/// if it parses.
pub(crate) fn last_restart(pod_template_annotations: Option<&BTreeMap<String, String>>) -> Option<Timestamp> {
    pod_template_annotations?
        .get(RESTARTED_AT_ANNOTATION)?
        .parse()
        .ok()
}

/// Whether the rollout targets must be restarted for `current`.
///
/// The baseline is `last_rolled_out` (`status.lastRolloutHash`), or `previous` (the target's
/// content-hash annotation before this write) when there is none; empty strings count as absent.
/// Due iff a baseline exists and differs from `current`.
pub(crate) fn rollout_due(last_rolled_out: Option<&str>, previous: Option<&str>, current: &str) -> bool {
    present(last_rolled_out)
        .or(present(previous))
        .is_some_and(|baseline| baseline != current)
}

/// `hash` unless it is absent or empty (the Go operator used "" for "none").
fn present(hash: Option<&str>) -> Option<&str> {
    hash.filter(|h| !h.is_empty())
}

/// The hash to record as `status.lastRolloutHash` *before* writing the target Secret, if any.
///
/// Applies when rollout targets exist, nothing is recorded yet, and the content is about to change
/// from `previous` to `current`. Recording `previous` first means a crash or timeout between the
/// Secret write and the restarts still leaves the rollout due on the next pass.
pub(crate) fn pending_rollout_hash(
    has_rollout_targets: bool,
    last_rolled_out: Option<&str>,
    previous: Option<&str>,
    current: &str,
) -> Option<String> {
    let nothing_recorded = present(last_rolled_out).is_none();
    let previous = present(previous).filter(|p| *p != current)?;
    (has_rollout_targets && nothing_recorded).then(|| previous.to_owned())
}

/// `status.lastRolloutHash` after a pass (reference `rolloutIfDue`): `None` (cleared) without
/// rollout targets; the recorded hash, unchanged, when a due restart failed or was deferred (so
/// it stays due and is retried); `current` otherwise (restarted, or nothing was due).
pub(crate) fn last_rollout_hash_after(
    has_rollout_targets: bool,
    restart_pending: bool,
    recorded: Option<&str>,
    current: &str,
) -> Option<String> {
    match (has_rollout_targets, restart_pending) {
        (false, _) => None,
        (true, true) => present(recorded).map(str::to_owned),
        (true, false) => Some(current.to_owned()),
    }
}

/// Whether one workload still needs the restart for `current`: its pod-template annotation
/// `ferrvault.com/content-hash.<cr_uid>` does not already record `current`. Other
/// FerrVaultSecrets' annotations on the same workload are ignored.
pub(crate) fn workload_needs_restart(
    pod_template_annotations: Option<&BTreeMap<String, String>>,
    cr_uid: &str,
    current: &str,
) -> bool {
    let recorded = pod_template_annotations.and_then(|a| a.get(&workload_content_hash_annotation(cr_uid)));
    recorded.map(String::as_str) != Some(current)
}

/// Whether one workload must still restart after its immutable target was replaced at
/// `replaced_at` (`immutableChange: Replace`; the kubelet does not refresh an immutable Secret
/// in running pods): the operator has not restarted it since ([`last_restart`]), whatever its
/// content-hash stamp says. `None` (nothing replaced, or every workload restarted since) asks
/// nothing. A retry after the rollout floor deferred some workloads thus restarts only those.
pub(crate) fn needs_restart_since_replace(
    pod_template_annotations: Option<&BTreeMap<String, String>>,
    replaced_at: Option<Timestamp>,
) -> bool {
    replaced_at.is_some_and(|at| last_restart(pod_template_annotations).is_none_or(|last| last < at))
}

/// Which FerrVaultSecrets of one namespace restart which workloads, as the FerrVaultSecret store
/// holds them: whose per-CR stamps are still theirs.
#[derive(Debug, Clone, Default)]
pub(crate) struct RolloutListers {
    /// (UID, kind, name) of every rollout target of every readable FerrVaultSecret.
    listed: HashSet<(String, WorkloadKind, String)>,
    /// UIDs of FerrVaultSecrets whose spec cannot be read: they may list any workload.
    unreadable: HashSet<String>,
    /// The namespace's FerrVaultSecrets are not known (not watched, not listed yet): every
    /// stamp counts as someone's.
    unknown: bool,
}

impl RolloutListers {
    /// Listers nothing is known of: no stamp is ever taken for stale.
    pub(crate) fn unknown() -> Self {
        Self {
            unknown: true,
            ..Self::default()
        }
    }

    /// Records that the FerrVaultSecret `uid` restarts `targets`.
    pub(crate) fn add(&mut self, uid: &str, targets: &[RolloutTarget]) {
        self.listed
            .extend(targets.iter().map(|t| (uid.to_owned(), t.kind, t.name.clone())));
    }

    /// Records a FerrVaultSecret `uid` whose spec cannot be read.
    pub(crate) fn add_unreadable(&mut self, uid: &str) {
        self.unreadable.insert(uid.to_owned());
    }

    /// Whether the FerrVaultSecret `uid` may still restart workload `kind`/`name`.
    pub(crate) fn lists(&self, uid: &str, kind: WorkloadKind, name: &str) -> bool {
        self.unknown
            || self.unreadable.contains(uid)
            || self.listed.contains(&(uid.to_owned(), kind, name.to_owned()))
    }
}

/// The per-CR content-hash annotations on workload `kind`/`name`'s pod template that are no
/// longer anyone's: not `restarting`'s (the FerrVaultSecret restarting it now), and of a
/// FerrVaultSecret that is gone or no longer lists this workload, per `listers`. `listers` is
/// only asked when the workload carries another FerrVaultSecret's stamp (most carry one only).
pub(crate) fn stale_stamps(
    pod_template_annotations: Option<&BTreeMap<String, String>>,
    (kind, name): (WorkloadKind, &str),
    restarting: &str,
    listers: impl FnOnce() -> RolloutListers,
) -> Vec<String> {
    let others: Vec<(&String, &str)> = pod_template_annotations
        .into_iter()
        .flat_map(BTreeMap::keys)
        .filter_map(|key| Some((key, key.strip_prefix(WORKLOAD_CONTENT_HASH_PREFIX)?)))
        .filter(|(_, uid)| *uid != restarting)
        .collect();
    if others.is_empty() {
        return Vec::new();
    }
    let listers = listers();
    others
        .into_iter()
        .filter(|(_, uid)| !listers.lists(uid, kind, name))
        .map(|(key, _)| key.clone())
        .collect()
}

/// The JSON merge patch that restarts a Deployment, StatefulSet or DaemonSet: it sets
/// `ferrvault.com/restarted-at` (RFC 3339, UTC, nanoseconds) and the per-CR content-hash
/// annotation on the pod template, removes the `stale` stamps ([`stale_stamps`]) in the same
/// rollout, and touches nothing else. Needs only `patch` RBAC.
pub(crate) fn restart_patch(cr_uid: &str, content_hash: &str, now: Timestamp, stale: &[String]) -> Value {
    let mut annotations: Map<String, Value> = stale.iter().map(|key| (key.clone(), Value::Null)).collect();
    annotations.insert(RESTARTED_AT_ANNOTATION.to_owned(), now.to_string().into());
    annotations.insert(workload_content_hash_annotation(cr_uid), content_hash.into());
    json!({ "spec": { "template": { "metadata": { "annotations": annotations } } } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollout_due_should_follow_the_reference_table() {
        // (last rolled out, previous, current, due)
        let cases = [
            (None, None, "h1", false),             // new Secret: nothing to restart
            (None, Some("h1"), "h1", false),       // upgrade, unchanged content becomes the baseline
            (None, Some("h1"), "h2", true),        // content changed
            (Some("h1"), Some("h2"), "h2", true),  // failed restart retried after the write
            (Some("h2"), Some("h2"), "h2", false), // done
            (Some(""), Some(""), "h1", false),     // empty strings are absent
        ];
        for (last, previous, current, due) in cases {
            assert_eq!(
                rollout_due(last, previous, current),
                due,
                "{last:?} {previous:?} {current}"
            );
        }
    }

    #[test]
    fn pending_rollout_should_be_recorded_only_before_a_content_change_with_targets() {
        assert_eq!(
            pending_rollout_hash(true, None, Some("h1"), "h2"),
            Some("h1".into())
        );
        assert_eq!(
            pending_rollout_hash(true, Some(""), Some("h1"), "h2"),
            Some("h1".into())
        );
        assert_eq!(pending_rollout_hash(false, None, Some("h1"), "h2"), None);
        assert_eq!(pending_rollout_hash(true, Some("h0"), Some("h1"), "h2"), None);
        assert_eq!(pending_rollout_hash(true, None, None, "h2"), None);
        assert_eq!(pending_rollout_hash(true, None, Some("h2"), "h2"), None);
    }

    #[test]
    fn last_rollout_hash_should_advance_only_when_the_restart_succeeded() {
        assert_eq!(last_rollout_hash_after(false, false, Some("h1"), "h2"), None);
        assert_eq!(
            last_rollout_hash_after(true, true, Some("h1"), "h2"),
            Some("h1".into())
        );
        assert_eq!(
            last_rollout_hash_after(true, false, Some("h1"), "h2"),
            Some("h2".into())
        );
        // A failure followed by a retry: still due until the restart succeeds.
        let after_failure = last_rollout_hash_after(true, true, Some("h1"), "h2");
        assert!(rollout_due(after_failure.as_deref(), Some("h2"), "h2"));
    }

    #[test]
    fn a_workload_should_restart_at_most_once_per_floor() {
        let floor = Duration::from_secs(300);
        let at = |s: &str| -> Timestamp { s.parse().unwrap() };
        let now = at("2026-12-01T10:00:00Z");
        assert_eq!(restart_deferred_until(None, now, floor), None, "never restarted");
        assert_eq!(
            restart_deferred_until(Some(at("2026-12-01T09:55:00Z")), now, floor),
            None,
            "a floor ago"
        );
        assert_eq!(
            restart_deferred_until(Some(at("2026-12-01T09:58:00Z")), now, floor),
            Some(at("2026-12-01T10:03:00Z")),
            "deferred to the end of the floor"
        );
        assert_eq!(
            restart_deferred_until(Some(at("2027-01-01T00:00:00Z")), now, floor),
            Some(at("2026-12-01T10:05:00Z")),
            "a future time counts as now"
        );
    }

    #[test]
    fn the_last_restart_should_come_from_the_restarted_at_annotation() {
        let annotations =
            |value: &str| BTreeMap::from([(RESTARTED_AT_ANNOTATION.to_owned(), value.to_owned())]);
        assert_eq!(
            last_restart(Some(&annotations("2026-11-30T03:00:00.123456789Z"))),
            Some("2026-11-30T03:00:00.123456789Z".parse().unwrap())
        );
        assert_eq!(last_restart(Some(&annotations("yesterday"))), None);
        assert_eq!(last_restart(None), None);
    }

    #[test]
    fn only_workloads_that_missed_the_rollout_should_be_restarted_again() {
        let annotated = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let done = annotated(&[("ferrvault.com/content-hash.uid-a", "h2")]);
        let missed = annotated(&[("ferrvault.com/content-hash.uid-a", "h1")]);
        let other_cr = annotated(&[("ferrvault.com/content-hash.uid-b", "h2")]);
        assert!(workload_needs_restart(None, "uid-a", "h2"));
        assert!(workload_needs_restart(Some(&missed), "uid-a", "h2"));
        assert!(workload_needs_restart(Some(&other_cr), "uid-a", "h2"));
        assert!(!workload_needs_restart(Some(&done), "uid-a", "h2"));
    }

    #[test]
    fn a_replaced_target_should_restart_only_workloads_not_restarted_since() {
        let restarted = |at: &str| -> BTreeMap<String, String> {
            [(RESTARTED_AT_ANNOTATION.to_owned(), at.to_owned())].into()
        };
        let replaced: Timestamp = "2026-11-30T03:00:00Z".parse().unwrap();
        // (case, the workload's annotations, the replacement, expected)
        let before = restarted("2026-11-30T02:59:59Z");
        let after = restarted("2026-11-30T03:00:01Z");
        let unreadable = restarted("yesterday");
        let table = [
            ("nothing replaced", Some(&before), None, false),
            ("never restarted", None, Some(replaced), true),
            (
                "restarted before the replace",
                Some(&before),
                Some(replaced),
                true,
            ),
            (
                "restarted since (an earlier pass)",
                Some(&after),
                Some(replaced),
                false,
            ),
            (
                "restarted at an unreadable time",
                Some(&unreadable),
                Some(replaced),
                true,
            ),
            ("nothing replaced, never restarted", None, None, false),
        ];
        for (case, annotations, replaced_at, expected) in table {
            assert_eq!(
                needs_restart_since_replace(annotations, replaced_at),
                expected,
                "{case}"
            );
        }
    }

    #[test]
    fn only_stamps_of_gone_or_unlisting_ferrvault_secrets_should_be_stale() {
        let annotations: BTreeMap<String, String> = [
            ("ferrvault.com/content-hash.uid-restarting", "h"),
            ("ferrvault.com/content-hash.uid-listing", "h"),
            ("ferrvault.com/content-hash.uid-other-workload", "h"),
            ("ferrvault.com/content-hash.uid-gone", "h"),
            ("ferrvault.com/content-hash.uid-unreadable", "h"),
            ("ferrvault.com/restarted-at", "2026-11-30T03:00:00Z"),
            ("team.example/owner", "shop"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .into();
        let web = |name: &str| RolloutTarget {
            kind: WorkloadKind::Deployment,
            name: name.into(),
        };
        let mut listers = RolloutListers::default();
        listers.add("uid-listing", &[web("web")]);
        listers.add("uid-other-workload", &[web("api")]);
        listers.add_unreadable("uid-unreadable");
        let workload = (WorkloadKind::Deployment, "web");
        assert_eq!(
            stale_stamps(Some(&annotations), workload, "uid-restarting", || listers.clone()),
            [
                "ferrvault.com/content-hash.uid-gone",
                "ferrvault.com/content-hash.uid-other-workload"
            ]
        );
        assert!(
            stale_stamps(
                Some(&annotations),
                workload,
                "uid-restarting",
                RolloutListers::unknown
            )
            .is_empty(),
            "nothing is stale while the namespace's FerrVaultSecrets are unknown"
        );
        let only_ours = BTreeMap::from([(
            "ferrvault.com/content-hash.uid-restarting".to_owned(),
            "h".to_owned(),
        )]);
        let unasked = || -> RolloutListers { panic!("no other stamp: the store is not read") };
        assert!(stale_stamps(Some(&only_ours), workload, "uid-restarting", unasked).is_empty());
        assert!(stale_stamps(None, workload, "uid-restarting", unasked).is_empty());
    }

    #[test]
    fn restart_patch_should_remove_the_stale_stamps_in_the_same_rollout() {
        let now: Timestamp = "2026-11-30T03:00:00.123456789Z".parse().unwrap();
        let patch = restart_patch(
            "uid-a",
            "abc",
            now,
            &["ferrvault.com/content-hash.uid-gone".into()],
        );
        assert_eq!(
            patch,
            json!({"spec": {"template": {"metadata": {"annotations": {
                "ferrvault.com/restarted-at": "2026-11-30T03:00:00.123456789Z",
                "ferrvault.com/content-hash.uid-a": "abc",
                "ferrvault.com/content-hash.uid-gone": null,
            }}}}})
        );
    }

    #[test]
    fn restart_patch_should_set_only_the_two_pod_template_annotations() {
        let now: Timestamp = "2026-11-30T03:00:00.123456789Z".parse().unwrap();
        let patch = restart_patch("0b6f7e2c-0000-4000-8000-000000000001", "abc", now, &[]);
        assert_eq!(
            patch,
            json!({"spec": {"template": {"metadata": {"annotations": {
                "ferrvault.com/restarted-at": "2026-11-30T03:00:00.123456789Z",
                "ferrvault.com/content-hash.0b6f7e2c-0000-4000-8000-000000000001": "abc",
            }}}}})
        );
    }
}
