//! The verdict as a table: state × policy × what the cluster shows → when the next sync is.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use kube::api::DynamicObject;
use serde_json::{Value, json};

use super::*;
use ferrvault_operator::rules::wave_factor;

const NOW: &str = "2025-06-01T12:00:00Z";

fn now() -> Timestamp {
    NOW.parse().expect("a timestamp")
}

fn ago(minutes: i64) -> String {
    (now() - SignedDuration::from_mins(minutes)).to_string()
}

/// A FerrVaultSecret at generation 1 that synced `synced_minutes_ago`, with `spec` and `extra`
/// merged in (JSON merge patch semantics, shallow per top-level key).
fn view(synced_minutes_ago: Option<i64>, spec: Value, extra: Value) -> SecretView {
    let mut object = json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "FerrVaultSecret",
        "metadata": { "name": "app", "namespace": "team", "generation": 1, "uid": "u-1" },
        "spec": { "connectionRef": { "name": "prod" }, "vault": "v", "refreshInterval": "1h" },
    });
    if let Some(minutes) = synced_minutes_ago {
        object["status"] = json!({
            "conditions": [{
                "type": "Ready", "status": "True", "reason": "Synced", "message": "1 key(s) synced",
                "observedGeneration": 1, "lastTransitionTime": ago(minutes),
            }],
            "lastSyncedAt": ago(minutes),
            "observedGeneration": 1,
            "targetResourceVersion": "10",
            "observedInputs": "connection=c/1/True token=5 ca=- key=abc",
        });
    }
    for (key, value) in spec.as_object().expect("a map") {
        object["spec"][key] = value.clone();
    }
    merge(&mut object, extra);
    let object: DynamicObject = serde_json::from_value(object).expect("an object");
    SecretView::read(object).expect("readable")
}

fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                merge(target.entry(key).or_insert(Value::Null), value);
            }
        }
        (target, patch) => *target = patch,
    }
}

fn due(view: &SecretView, seen: Option<&Seen>) -> Due {
    judge(view, seen, RuleSettings::default(), now()).due
}

fn next_in(view: &SecretView) -> Duration {
    match due(view, None) {
        Due::At(at) => Duration::try_from(at.duration_since(now())).expect("in the future"),
        other => panic!("expected a next refresh, got {other:?}"),
    }
}

#[test]
fn an_object_synced_here_should_be_due_at_its_interval_times_its_wave() {
    let left = next_in(&view(Some(10), json!({}), json!({})));
    let wave = wave_factor("team/prod//v");
    let expected = Duration::from_secs(3600).mul_f64(wave) - Duration::from_secs(600);
    assert!(
        left.abs_diff(expected) < Duration::from_secs(1),
        "{left:?} vs {expected:?}"
    );
}

#[test]
fn the_operators_floor_should_apply_to_a_short_interval() {
    let left = next_in(&view(Some(0), json!({ "refreshInterval": "5s" }), json!({})));
    assert!(
        left >= Duration::from_secs(27) && left <= Duration::from_secs(33),
        "{left:?}"
    );
    let verdict = judge(
        &view(Some(0), json!({ "refreshInterval": "5s" }), json!({})),
        None,
        RuleSettings {
            min_refresh_interval: Duration::from_secs(1),
        },
        now(),
    );
    assert_eq!(
        verdict.interval.map(|i| i.effective),
        Some(Duration::from_secs(5))
    );
}

#[test]
fn the_verdict_should_follow_policy_and_state() {
    let cases: Vec<(&str, SecretView, Due)> = vec![
        (
            "0s",
            view(Some(10), json!({ "refreshInterval": "0s" }), json!({})),
            Due::Never,
        ),
        (
            "OnChange",
            view(Some(10), json!({ "refreshPolicy": "OnChange" }), json!({})),
            Due::Never,
        ),
        (
            "CreatedOnce",
            view(Some(10), json!({ "refreshPolicy": "CreatedOnce" }), json!({})),
            Due::Never,
        ),
        (
            "suspended",
            view(Some(10), json!({ "suspend": true }), json!({})),
            Due::Suspended,
        ),
        (
            "suspended, even when forced",
            view(
                Some(10),
                json!({ "suspend": true }),
                json!({ "metadata": { "annotations": { "ferrvault.com/force-sync": "x" } } }),
            ),
            Due::Suspended,
        ),
        (
            "refresh past",
            view(Some(120), json!({}), json!({})),
            Due::Now(vec![Because::RefreshDue]),
        ),
        (
            "never synced",
            view(None, json!({}), json!({})),
            Due::Now(vec![Because::NeverSynced]),
        ),
        (
            "forced under CreatedOnce",
            view(
                Some(10),
                json!({ "refreshPolicy": "CreatedOnce" }),
                json!({ "metadata": { "annotations": { "ferrvault.com/force-sync": "x" } } }),
            ),
            Due::Now(vec![Because::ForceSync("x".to_owned())]),
        ),
        (
            "forced value already observed",
            view(
                Some(10),
                json!({ "refreshInterval": "0s" }),
                json!({
                    "metadata": { "annotations": { "ferrvault.com/force-sync": "x" } },
                    "status": { "observedForceSync": "x" },
                }),
            ),
            Due::Never,
        ),
        (
            "failed",
            view(
                Some(10),
                json!({}),
                json!({ "status": { "conditions": [{
                    "type": "Ready", "status": "False", "reason": "VaultNotFound", "message": "m",
                    "observedGeneration": 1, "lastTransitionTime": NOW,
                }] } }),
            ),
            Due::Now(vec![Because::NotSyncedHere]),
        ),
        (
            "edited since",
            view(Some(10), json!({}), json!({ "metadata": { "generation": 2 } })),
            Due::Now(vec![Because::NotSyncedHere]),
        ),
    ];
    for (case, view, expected) in cases {
        let got = due(&view, None);
        match (&expected, &got) {
            (Due::Now(e), Due::Now(g)) if matches!(e.first(), Some(Because::InvalidInterval(_))) => {
                assert!(
                    matches!(g.as_slice(), [Because::InvalidInterval(_)]),
                    "{case}: {got:?}"
                );
            }
            _ => assert_eq!(got, expected, "{case}"),
        }
    }
}

#[test]
fn what_the_cluster_shows_should_make_a_sync_due_and_say_why() {
    let synced = view(Some(10), json!({}), json!({}));
    let recorded = "connection=c/1/True token=5 ca=- key=abc";
    let same = Seen {
        inputs: Some((recorded.to_owned(), Vec::new())),
        target_version: Some(Some("10".to_owned())),
    };
    assert!(matches!(due(&synced, Some(&same)), Due::At(_)));
    let edited = Seen {
        target_version: Some(Some("11".to_owned())),
        ..same.clone()
    };
    assert_eq!(
        due(&synced, Some(&edited)),
        Due::Now(vec![Because::TargetChanged {
            recorded: Some("10".to_owned()),
            now: Some("11".to_owned())
        }])
    );
    let deleted = Seen {
        target_version: Some(None),
        ..same.clone()
    };
    assert!(matches!(
        due(&synced, Some(&deleted)).clone(),
        Due::Now(b) if matches!(b.as_slice(), [Because::TargetChanged { now: None, .. }])
    ));
    let (rotated, changes) =
        crate::inputs::compare("connection=c/1/True token=6 ca=- key=000", Some(recorded));
    let rotated = Seen {
        inputs: Some((rotated, changes.clone())),
        ..same
    };
    assert_eq!(
        due(&synced, Some(&rotated)),
        Due::Now(vec![Because::InputsChanged(changes)])
    );
}

#[test]
fn an_object_stored_past_the_schema_should_be_due_as_invalid() {
    let object: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "FerrVaultSecret",
        "metadata": { "name": "bad", "namespace": "team" },
        "spec": { "connectionRef": { "name": "prod" }, "vault": 42 },
    }))
    .expect("an object");
    let view = SecretView::read(object).expect("readable");
    assert!(matches!(due(&view, None), Due::Now(b) if matches!(b.as_slice(), [Because::InvalidSpec(_)])));
}
