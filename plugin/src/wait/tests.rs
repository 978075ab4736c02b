//! When a forced sync is settled, as a table.

use jiff::Timestamp;
use kube::api::DynamicObject;
use serde_json::json;

use super::*;

const VALUE: &str = "2025-06-01T12:00:00.5Z";

fn requested() -> Timestamp {
    VALUE.parse().expect("a timestamp")
}

fn view(
    annotation: Option<&str>,
    observed: Option<&str>,
    ready: Option<(&str, &str)>,
    suspend: bool,
) -> SecretView {
    let mut object = json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "FerrVaultSecret",
        "metadata": { "name": "app", "namespace": "team", "annotations": {} },
        "spec": { "connectionRef": { "name": "prod" }, "vault": "v", "suspend": suspend },
        "status": { "observedForceSync": observed },
    });
    if let Some(value) = annotation {
        object["metadata"]["annotations"]["ferrvault.com/force-sync"] = json!(value);
    }
    if let Some((status, transitioned)) = ready {
        object["status"]["conditions"] = json!([{
            "type": "Ready", "status": status, "reason": "R", "message": "m",
            "lastTransitionTime": transitioned,
        }]);
    }
    SecretView::read(serde_json::from_value::<DynamicObject>(object).expect("an object")).expect("readable")
}

#[test]
fn a_forced_sync_should_settle_only_on_what_the_operator_shows() {
    const BEFORE: &str = "2025-06-01T11:00:00Z";
    const SAME_SECOND: &str = "2025-06-01T12:00:00Z";
    let cases = [
        (
            "not observed yet",
            view(Some(VALUE), None, Some(("True", BEFORE)), false),
            None,
        ),
        (
            "observed, Ready",
            view(Some(VALUE), Some(VALUE), Some(("True", BEFORE)), false),
            Some(Outcome::Synced),
        ),
        (
            "observed, failed",
            view(Some(VALUE), Some(VALUE), Some(("False", BEFORE)), false),
            Some(Outcome::Failed),
        ),
        (
            "turned False since",
            view(Some(VALUE), None, Some(("False", SAME_SECOND)), false),
            Some(Outcome::Failed),
        ),
        (
            "False from before",
            view(Some(VALUE), None, Some(("False", BEFORE)), false),
            None,
        ),
        ("no Ready yet", view(Some(VALUE), None, None, false), None),
        (
            "superseded",
            view(Some("later"), None, Some(("True", BEFORE)), false),
            Some(Outcome::Failed),
        ),
        (
            "suspended meanwhile",
            view(Some(VALUE), None, Some(("True", BEFORE)), true),
            Some(Outcome::Suspended),
        ),
    ];
    for (case, view, expected) in cases {
        assert_eq!(
            settle(Some(&view), VALUE, requested()).map(|(o, _)| o),
            expected,
            "{case}"
        );
    }
    assert_eq!(
        settle(None, VALUE, requested()).map(|(o, _)| o),
        Some(Outcome::Gone)
    );
}
