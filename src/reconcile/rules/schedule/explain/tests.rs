//! The rule as tables: policy × what changed → due (and why) or not (why, and when next).

use std::{collections::BTreeMap, time::Duration};

use jiff::Timestamp;

use super::*;
use crate::{
    api::{FerrVaultSecretSpec, names::FORCE_SYNC_ANNOTATION},
    reconcile::{
        fixtures,
        rules::schedule::spec_digest::spec_digest,
        rules::status::secret_status::{ForceSyncSeen, SyncedState, after_sync},
    },
};

const HOUR: Duration = Duration::from_secs(3600);
const INPUTS: &str = "connection=uid-1/1 token=10 ca=- key=abc";
/// The selection's versions as the sync at 0 s revealed them.
const SOURCE: &str = "v1";

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + seconds).unwrap()
}

/// The status a sync at 0 s leaves at generation 1, target version "7", forced with "1" (by the
/// object) and "c1" (by its connection).
fn synced() -> FerrVaultSecretStatus {
    let state = SyncedState {
        synced_keys: vec!["A".into()],
        missing_keys: Default::default(),
        target: "app".into(),
        last_rollout_hash: None,
        rollout: None,
        target_resource_version: Some("7".into()),
        target_replaced_at: None,
        observed_inputs: INPUTS.into(),
        force_sync: ForceSyncSeen {
            own: Some("1".into()),
            connection: Some("c1".into()),
        },
        owned_labels: vec![],
        owned_annotations: vec![],
        source_version: Some(SOURCE.into()),
    };
    after_sync(&FerrVaultSecretStatus::default(), state, Some(1), at(0))
}

/// What changed since that sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Nothing,
    RefreshElapsed,
    ForceNew,
    ForceSame,
    UnrelatedAnnotation,
    ConnectionForced,
    SuspendedAndForced,
    ConnectionSuspended,
    Spec,
    Inputs,
    TargetEdited,
    TargetDeleted,
    /// A selected version moved in the connection's `list`.
    SourceMoved,
    /// The connection does not follow versions (or its `list` has not answered).
    SourceUnknown,
}

use Change::*;

/// The rule's answer for `policy` after `change`.
fn answer(policy: RefreshPolicy, change: Change) -> Explanation {
    let mut cr = fixtures::secret(1, Some(policy));
    let mut annotations = BTreeMap::from([(FORCE_SYNC_ANNOTATION.to_owned(), "1".to_owned())]);
    let mut connection = ConnectionSeen {
        suspended: false,
        forced: Some("c1"),
    };
    let (mut inputs, mut target, mut now) = (INPUTS, Some("7"), at(600));
    let mut source = Some(SOURCE);
    match change {
        Nothing | ForceSame => {}
        RefreshElapsed => now = at(3600),
        ForceNew => drop(annotations.insert(FORCE_SYNC_ANNOTATION.to_owned(), "2".to_owned())),
        UnrelatedAnnotation => drop(annotations.insert("argocd.argoproj.io/sync-wave".into(), "5".into())),
        ConnectionForced => connection.forced = Some("c2"),
        SuspendedAndForced => {
            cr.spec.suspend = Some(true);
            annotations.insert(FORCE_SYNC_ANNOTATION.to_owned(), "2".to_owned());
        }
        ConnectionSuspended => connection.suspended = true,
        Spec => cr.metadata.generation = Some(2),
        Inputs => inputs = "connection=uid-1/2 token=10 ca=- key=abc",
        TargetEdited => target = Some("8"),
        TargetDeleted => target = None,
        SourceMoved => source = Some("v2"),
        SourceUnknown => source = None,
    }
    cr.metadata.annotations = Some(annotations);
    let seen = Seen {
        inputs,
        target_version: target,
        source_version: source,
    };
    let schedule = Schedule {
        interval: HOUR,
        wave: 1.0,
    };
    explain(&cr, &synced(), connection, seen, schedule, now)
}

fn due(trigger: Trigger) -> Explanation {
    Explanation::Due(trigger)
}

fn quiet(why: Quiet) -> Explanation {
    Explanation::NotDue { why, next_in: None }
}

#[test]
fn explain_should_answer_every_policy_and_change_as_the_table_says() {
    let not_due_yet = Explanation::NotDue {
        why: Quiet::RefreshNotDue,
        next_in: Some(Duration::from_secs(3000)),
    };
    let suspended = quiet(Quiet::Suspended);
    let connection_suspended = quiet(Quiet::ConnectionSuspended);
    let kept = quiet(Quiet::TargetKept);
    let on_change = quiet(Quiet::OnChange);
    #[rustfmt::skip]
    let table = [
        // change,              Periodic,                  OnChange,                 CreatedOnce
        (Nothing,               not_due_yet,               on_change,                kept),
        (RefreshElapsed,        due(Trigger::Refresh),     on_change,                kept),
        (ForceNew,              due(Trigger::Force),       due(Trigger::Force),      due(Trigger::Force)),
        (ForceSame,             not_due_yet,               on_change,                kept),
        (UnrelatedAnnotation,   not_due_yet,               on_change,                kept),
        (ConnectionForced,      due(Trigger::Force),       due(Trigger::Force),      due(Trigger::Force)),
        (SuspendedAndForced,    suspended,                 suspended,                suspended),
        (ConnectionSuspended,   connection_suspended,      connection_suspended,     connection_suspended),
        (Spec,                  due(Trigger::Spec),        due(Trigger::Spec),       due(Trigger::Spec)),
        (Inputs,                due(Trigger::Inputs),      due(Trigger::Inputs),     kept),
        (TargetEdited,          due(Trigger::Drift),       due(Trigger::Drift),      kept),
        (TargetDeleted,         due(Trigger::Drift),       due(Trigger::Drift),      due(Trigger::Drift)),
        (SourceMoved,           due(Trigger::Source),      due(Trigger::Source),     kept),
        (SourceUnknown,         not_due_yet,               on_change,                kept),
    ];
    for (change, periodic, on_change, created_once) in table {
        for (policy, expected) in [
            (RefreshPolicy::Periodic, periodic),
            (RefreshPolicy::OnChange, on_change),
            (RefreshPolicy::CreatedOnce, created_once),
        ] {
            assert_eq!(answer(policy, change), expected, "{policy:?} after {change:?}");
        }
    }
}

#[test]
fn explain_should_give_the_next_due_time_or_none_when_only_a_change_makes_a_pass_due() {
    let now = at(600);
    let next = answer(RefreshPolicy::Periodic, Nothing).next_due_at(now);
    assert_eq!(next, Some(at(3600)));
    assert_eq!(
        answer(RefreshPolicy::Periodic, ForceNew).next_due_at(now),
        Some(now)
    );
    for policy in [RefreshPolicy::OnChange, RefreshPolicy::CreatedOnce] {
        assert_eq!(answer(policy, Nothing).next_due_at(now), None, "{policy:?}");
    }
}

#[test]
fn force_sync_should_work_with_refresh_disabled() {
    let mut cr = fixtures::secret(1, None);
    let seen = Seen {
        inputs: INPUTS,
        target_version: Some("7"),
        source_version: None,
    };
    let disabled = Schedule {
        interval: Duration::ZERO,
        wave: 1.0,
    };
    let connection = ConnectionSeen {
        suspended: false,
        forced: Some("c1"),
    };
    cr.metadata.annotations = Some(BTreeMap::from([(
        FORCE_SYNC_ANNOTATION.to_owned(),
        "1".to_owned(),
    )]));
    assert_eq!(
        explain(&cr, &synced(), connection, seen, disabled, at(99_999)),
        quiet(Quiet::RefreshDisabled)
    );
    cr.metadata.annotations = Some(BTreeMap::from([(
        FORCE_SYNC_ANNOTATION.to_owned(),
        "2".to_owned(),
    )]));
    assert_eq!(
        explain(&cr, &synced(), connection, seen, disabled, at(99_999)),
        due(Trigger::Force)
    );
}

#[test]
fn a_new_created_once_object_should_not_be_forced_by_its_connections_past_force_sync() {
    let cr = fixtures::secret(1, Some(RefreshPolicy::CreatedOnce));
    let fresh = FerrVaultSecretStatus::default();
    let connection = ConnectionSeen {
        suspended: false,
        forced: Some("c9"),
    };
    assert!(!is_forced(&cr, &fresh, connection));
    let seen = Seen {
        inputs: INPUTS,
        target_version: Some("3"),
        source_version: None,
    };
    let schedule = Schedule {
        interval: HOUR,
        wave: 1.0,
    };
    assert_eq!(
        explain(&cr, &fresh, connection, seen, schedule, at(0)),
        due(Trigger::Spec),
        "its first pass records the kept target; it reveals nothing"
    );
    let missing = Seen {
        target_version: None,
        ..seen
    };
    assert_eq!(
        explain(&cr, &fresh, connection, missing, schedule, at(0)),
        due(Trigger::Spec),
        "a missing target is created"
    );
}

#[test]
fn a_retried_failure_should_count_as_a_refresh_and_a_new_generation_as_a_spec_change() {
    let cr = fixtures::secret(1, None);
    let mut failed = synced();
    crate::reconcile::rules::status::conditions::upsert_condition(
        &mut failed.conditions,
        crate::reconcile::rules::status::conditions::ConditionUpdate::ready(
            ConditionStatus::False,
            crate::api::Reason::Unreachable,
            "down".into(),
            Some(1),
        ),
        at(1),
    );
    assert_eq!(
        explain_early(&cr, &failed, ConnectionSeen::default()),
        Some(due(Trigger::Refresh))
    );
    let edited = fixtures::secret(2, None);
    assert_eq!(
        explain_early(&edited, &failed, ConnectionSeen::default()),
        Some(due(Trigger::Spec))
    );
}

#[test]
fn explain_should_not_count_a_generation_that_changed_only_suspend_as_a_spec_change() {
    let cr = fixtures::secret(1, None);
    let mut status = synced();
    status.observed_spec_digest = Some(spec_digest(&cr.spec));
    let connection = ConnectionSeen {
        suspended: false,
        forced: Some("c1"),
    };
    let seen = Seen {
        inputs: INPUTS,
        target_version: Some("7"),
        source_version: None,
    };
    let schedule = Schedule {
        interval: HOUR,
        wave: 1.0,
    };
    let answer_for = |cr: &FerrVaultSecret, status: &FerrVaultSecretStatus| {
        explain(cr, status, connection, seen, schedule, at(600))
    };
    // Suspended (generation 2), then resumed (generation 3).
    let mut resumed = cr.clone();
    resumed.metadata.generation = Some(3);
    resumed.spec.suspend = Some(false);
    let not_due_yet = Explanation::NotDue {
        why: Quiet::RefreshNotDue,
        next_in: Some(Duration::from_secs(3000)),
    };
    #[rustfmt::skip]
    let table = [
        // what changed besides the generation,     digest recorded,  answer
        ("suspend only",                            true,             resumed.clone(),  not_due_yet),
        ("suspend only, synced before the digest",  false,            resumed.clone(),  due(Trigger::Spec)),
        ("suspend and the vault",                   true,             FerrVaultSecret { spec: FerrVaultSecretSpec { vault: "other".into(), ..resumed.spec.clone() }, ..resumed.clone() }, due(Trigger::Spec)),
        ("suspend and the interval",                true,             FerrVaultSecret { spec: FerrVaultSecretSpec { refresh_interval: "2h".into(), ..resumed.spec.clone() }, ..resumed }, due(Trigger::Spec)),
    ];
    for (what, recorded, cr, expected) in table {
        let mut status = status.clone();
        if !recorded {
            status.observed_spec_digest = None;
        }
        assert_eq!(answer_for(&cr, &status), expected, "{what}");
    }
}
