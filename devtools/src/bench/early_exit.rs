//! The early exit every kube-rs operator writes at the top of its reconcile: an object that is
//! Ready at its current generation, whose refresh is not yet due, needs no work; requeue it for
//! when the refresh is due. Pure, on the object the Controller hands over from its store.

use std::time::Duration;

use jiff::Timestamp;
use kube::ResourceExt;

use ferrvault_operator::{
    api::{FerrVaultSecret, names::SECRET_FINALIZER},
    rules::resolve_refresh_interval,
};

/// What the early exit decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Nothing to do now; look again after this long (`None`: only on a change).
    Skip(Option<Duration>),
    /// Run the reconciler.
    Run,
}

/// Whether `cr` needs a reconcile at `now`, with `default_refresh` for an empty interval.
pub fn decide(cr: &FerrVaultSecret, default_refresh: Duration, now: Timestamp) -> Decision {
    let ready_at_generation = cr.status.as_ref().is_some_and(|status| {
        status.observed_generation.is_some()
            && status.observed_generation == cr.metadata.generation
            && status
                .conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True")
    });
    let settled =
        cr.metadata.deletion_timestamp.is_none() && cr.finalizers().iter().any(|f| f == SECRET_FINALIZER);
    if !(ready_at_generation && settled) {
        return Decision::Run;
    }
    let Ok(refresh) = resolve_refresh_interval(&cr.spec.refresh_interval, default_refresh) else {
        return Decision::Run;
    };
    if refresh.is_zero() {
        return Decision::Skip(None);
    }
    let Some(synced) = cr.status.as_ref().and_then(|s| s.last_synced_at.as_ref()) else {
        return Decision::Run;
    };
    let since = now.duration_since(synced.0).as_secs_f64().max(0.0);
    let remaining = refresh.as_secs_f64() - since;
    if remaining > 0.0 {
        Decision::Skip(Some(Duration::from_secs_f64(remaining)))
    } else {
        Decision::Run
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrvault_operator::api::FerrVaultSecretStatus;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

    const HOUR: Duration = Duration::from_secs(3600);

    fn ready(generation: i64, observed: i64, synced: Timestamp, refresh: &str) -> FerrVaultSecret {
        let mut cr: FerrVaultSecret = serde_json::from_value(serde_json::json!({
            "apiVersion": "ferrvault.com/v1alpha1",
            "kind": "FerrVaultSecret",
            "metadata": { "name": "s", "generation": generation, "finalizers": [SECRET_FINALIZER] },
            "spec": { "connectionRef": { "name": "c" }, "vault": "v", "refreshInterval": refresh },
        }))
        .unwrap();
        cr.status = Some(FerrVaultSecretStatus {
            conditions: vec![Condition {
                type_: "Ready".into(),
                status: "True".into(),
                reason: "Synced".into(),
                message: String::new(),
                last_transition_time: Time(synced),
                observed_generation: Some(observed),
            }],
            last_synced_at: Some(Time(synced)),
            observed_generation: Some(observed),
            ..FerrVaultSecretStatus::default()
        });
        cr
    }

    #[test]
    fn a_ready_object_whose_refresh_is_not_due_should_be_skipped_until_it_is() {
        let now = Timestamp::now();
        let synced = now - jiff::SignedDuration::from_secs(600);
        let Decision::Skip(Some(after)) = decide(&ready(2, 2, synced, "1h"), HOUR, now) else {
            panic!("should skip");
        };
        assert!((after.as_secs_f64() - 3000.0).abs() < 1.0, "{after:?}");
        assert_eq!(
            decide(&ready(2, 2, synced, "0s"), HOUR, now),
            Decision::Skip(None)
        );
    }

    #[test]
    fn a_changed_due_unready_deleting_or_new_object_should_run() {
        let now = Timestamp::now();
        let synced = now - jiff::SignedDuration::from_secs(7200);
        assert_eq!(decide(&ready(2, 2, synced, "1h"), HOUR, now), Decision::Run);
        let recent = now - jiff::SignedDuration::from_secs(1);
        assert_eq!(decide(&ready(3, 2, recent, "1h"), HOUR, now), Decision::Run);
        let mut not_ready = ready(2, 2, recent, "1h");
        not_ready.status.as_mut().unwrap().conditions[0].status = "False".into();
        assert_eq!(decide(&not_ready, HOUR, now), Decision::Run);
        let mut deleting = ready(2, 2, recent, "1h");
        deleting.metadata.deletion_timestamp = Some(Time(now));
        assert_eq!(decide(&deleting, HOUR, now), Decision::Run);
        let mut fresh = ready(1, 1, recent, "1h");
        fresh.status = None;
        assert_eq!(decide(&fresh, HOUR, now), Decision::Run);
        assert_eq!(decide(&ready(2, 2, recent, "often"), HOUR, now), Decision::Run);
    }
}
