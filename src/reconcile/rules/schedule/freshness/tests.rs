use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::reconcile::{
    fixtures,
    rules::{
        schedule::explain::{ConnectionSeen, Explanation, Seen, explain},
        status::{
            conditions::{ConditionUpdate, upsert_condition},
            secret_status::{RolloutState, SyncedState, after_failure, after_sync},
        },
    },
};

/// What the stores show, as these tests vary it.
#[derive(Clone, Copy)]
struct Observed<'a> {
    generation: Option<i64>,
    inputs: &'a str,
    target_version: Option<&'a str>,
}

/// The rule's answer under `Periodic`, as these tests compare it.
#[derive(Debug, PartialEq)]
enum Freshness {
    Due,
    UpToDate(Option<Duration>),
}

/// The rule of the module, through [`explain`] under `Periodic` (the default policy).
fn freshness(
    status: &FerrVaultSecretStatus,
    observed: Observed<'_>,
    schedule: Schedule,
    now: Timestamp,
) -> Freshness {
    let mut cr = fixtures::secret(0, None);
    cr.metadata.generation = observed.generation;
    let seen = Seen {
        inputs: observed.inputs,
        target_version: observed.target_version,
        source_version: None,
    };
    match explain(&cr, status, ConnectionSeen::default(), seen, schedule, now) {
        Explanation::Due(_) => Freshness::Due,
        Explanation::NotDue { next_in, .. } => Freshness::UpToDate(next_in),
    }
}

const HOUR: Duration = Duration::from_secs(3600);
const INPUTS: &str = "connection=uid-1/1 token=10 ca=- key=abc";

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + seconds).unwrap()
}

fn schedule() -> Schedule {
    Schedule {
        interval: HOUR,
        wave: 1.0,
    }
}

/// The status a sync at `synced` seconds leaves, at generation 1, target version "7".
fn synced(synced: i64, rollout: Option<RolloutState>) -> FerrVaultSecretStatus {
    let state = SyncedState {
        synced_keys: vec!["A".into()],
        owned_labels: vec![],
        owned_annotations: vec![],
        missing_keys: Default::default(),
        target: "app".into(),
        last_rollout_hash: None,
        rollout,
        target_resource_version: Some("7".into()),
        target_replaced_at: None,
        observed_inputs: INPUTS.into(),
        force_sync: Default::default(),
        source_version: None,
    };
    after_sync(&FerrVaultSecretStatus::default(), state, Some(1), at(synced))
}

fn observed<'a>(generation: i64, inputs: &'a str, target: Option<&'a str>) -> Observed<'a> {
    Observed {
        generation: Some(generation),
        inputs,
        target_version: target,
    }
}

#[test]
fn a_synced_object_with_nothing_changed_should_wait_for_the_rest_of_its_interval() {
    let status = synced(0, None);
    assert_eq!(
        freshness(&status, observed(1, INPUTS, Some("7")), schedule(), at(600)),
        Freshness::UpToDate(Some(Duration::from_secs(3000)))
    );
}

#[test]
fn every_change_the_rule_names_should_make_the_pass_sync() {
    let status = synced(0, None);
    let now = at(600);
    let cases = [
        ("a new generation", observed(2, INPUTS, Some("7"))),
        (
            "a rotated token",
            observed(1, "connection=uid-1/1 token=11 ca=- key=abc", Some("7")),
        ),
        ("a target edited", observed(1, INPUTS, Some("8"))),
        ("a target deleted", observed(1, INPUTS, None)),
    ];
    for (what, observed) in cases {
        assert_eq!(
            freshness(&status, observed, schedule(), now),
            Freshness::Due,
            "{what}"
        );
    }
    assert_eq!(
        freshness(&status, observed(1, INPUTS, Some("7")), schedule(), at(3600)),
        Freshness::Due,
        "the refresh is due"
    );
    assert_eq!(
        freshness(
            &status,
            observed(1, INPUTS, Some("7")),
            schedule(),
            at(3600) - Duration::from_millis(500)
        ),
        Freshness::Due,
        "due within the requeue floor"
    );
}

#[test]
fn a_failure_a_pending_rollout_or_an_old_status_should_make_the_pass_sync() {
    let now = at(600);
    let observed = observed(1, INPUTS, Some("7"));
    let failed = after_failure(
        &synced(0, None),
        Reason::Unreachable,
        "down".into(),
        Some(1),
        at(1),
    );
    assert_eq!(
        freshness(&failed, observed, schedule(), now),
        Freshness::Due,
        "failed"
    );
    let deferred = synced(0, Some(RolloutState::Deferred("later".into())));
    assert_eq!(
        freshness(&deferred, observed, schedule(), now),
        Freshness::Due,
        "deferred restart"
    );
    let up_to_date = synced(0, Some(RolloutState::UpToDate));
    assert_ne!(freshness(&up_to_date, observed, schedule(), now), Freshness::Due);
    let mut before_the_upgrade = synced(0, None);
    before_the_upgrade.observed_inputs = None;
    before_the_upgrade.target_resource_version = None;
    assert_eq!(
        freshness(&before_the_upgrade, observed, schedule(), now),
        Freshness::Due,
        "a status written before these fields existed"
    );
    let mut stale_condition = synced(0, None);
    upsert_condition(
        &mut stale_condition.conditions,
        ConditionUpdate::ready(ConditionStatus::True, Reason::Synced, "ok".into(), Some(0)),
        at(0),
    );
    assert_eq!(
        freshness(&stale_condition, observed, schedule(), now),
        Freshness::Due
    );
}

#[test]
fn disabled_refreshes_should_wait_for_a_change_only() {
    let status = synced(0, None);
    let never = Schedule {
        interval: Duration::ZERO,
        wave: 1.0,
    };
    assert_eq!(
        freshness(&status, observed(1, INPUTS, Some("7")), never, at(10 * 3600)),
        Freshness::UpToDate(None)
    );
    assert_eq!(never.after_sync(), None);
}

#[test]
fn a_last_sync_in_the_future_should_defer_by_one_interval_at_most() {
    let mut status = synced(0, None);
    status.last_synced_at = Some(Time(at(100 * 3600)));
    assert_eq!(
        freshness(&status, observed(1, INPUTS, Some("7")), schedule(), at(0)),
        Freshness::UpToDate(Some(HOUR))
    );
}

#[test]
fn the_wave_factor_should_be_fixed_per_group_within_the_spread_and_differ_between_groups() {
    let factors: Vec<f64> = (0..200)
        .map(|i| wave_factor(&format!("ns/conn/vault-{i}")))
        .collect();
    assert!(
        factors
            .iter()
            .all(|f| (1.0 - WAVE_SPREAD..1.0 + WAVE_SPREAD).contains(f)),
        "{factors:?}"
    );
    assert_eq!(wave_factor("ns/conn/vault-1"), factors[1], "stable");
    let low = factors.iter().filter(|f| **f < 1.0).count();
    assert!(
        (60..140).contains(&low),
        "spread over both halves: {low} of 200 below 1"
    );
    let schedule = Schedule {
        interval: HOUR,
        wave: factors[3],
    };
    assert_eq!(schedule.after_sync(), Some(HOUR.mul_f64(factors[3])));
    assert_eq!(
        Schedule {
            interval: Duration::from_millis(10),
            wave: 0.9
        }
        .after_sync(),
        Some(MIN_REQUEUE),
        "never below the requeue floor"
    );
}

fn probed(checked: i64, inputs: &str) -> FerrVaultConnectionStatus {
    let mut status = FerrVaultConnectionStatus {
        last_checked_at: Some(Time(at(checked))),
        observed_inputs: Some(inputs.into()),
        ..FerrVaultConnectionStatus::default()
    };
    upsert_condition(
        &mut status.conditions,
        ConditionUpdate::ready(ConditionStatus::True, Reason::Reachable, "ok".into(), Some(1)),
        at(checked),
    );
    status
}

#[test]
fn a_reachable_connection_should_not_be_probed_before_its_interval_unless_its_secrets_changed() {
    let every = Duration::from_secs(600);
    let status = probed(0, "token=10 ca=-");
    assert_eq!(
        probe_not_due(&status, Some(1), "token=10 ca=-", every, at(100)),
        Some(Duration::from_secs(500))
    );
    assert_eq!(
        probe_not_due(&status, Some(1), "token=11 ca=-", every, at(100)),
        None,
        "token rotated"
    );
    assert_eq!(
        probe_not_due(&status, Some(2), "token=10 ca=-", every, at(100)),
        None,
        "spec edited"
    );
    assert_eq!(
        probe_not_due(&status, Some(1), "token=10 ca=-", every, at(600)),
        None,
        "due"
    );
    let mut unreachable = status.clone();
    upsert_condition(
        &mut unreachable.conditions,
        ConditionUpdate::ready(
            ConditionStatus::False,
            Reason::Unreachable,
            "down".into(),
            Some(1),
        ),
        at(0),
    );
    assert_eq!(
        probe_not_due(&unreachable, Some(1), "token=10 ca=-", every, at(100)),
        None,
        "a failure is retried"
    );
}
