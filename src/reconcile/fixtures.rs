//! A FerrVaultConnection as the unit tests of the reconcile modules need it: valid, at a
//! generation, with or without a Ready condition, last probed at a given second.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use crate::api::{ConditionType, FerrVaultConnection, FerrVaultConnectionSpec, FerrVaultConnectionStatus};

/// `conn` at `generation`, Ready `ready` (none: not probed yet), `lastCheckedAt` at `checked`.
pub(super) fn connection(generation: i64, ready: Option<&str>, checked: i64) -> FerrVaultConnection {
    let mut c = FerrVaultConnection::new(
        "conn",
        FerrVaultConnectionSpec {
            mode: Default::default(),
            url: "http://127.0.0.1:1".into(),
            organization: None,
            token_secret_ref: None,
            oidc: None,
            ca_bundle_secret_ref: None,
        },
    );
    c.metadata.generation = Some(generation);
    c.status = Some(FerrVaultConnectionStatus {
        conditions: ready
            .map(|status| Condition {
                type_: ConditionType::Ready.as_str().into(),
                status: status.into(),
                reason: "Reachable".into(),
                message: String::new(),
                observed_generation: Some(generation),
                last_transition_time: Time(Timestamp::UNIX_EPOCH),
            })
            .into_iter()
            .collect(),
        last_checked_at: Some(Time(Timestamp::from_second(checked).unwrap())),
        ..FerrVaultConnectionStatus::default()
    });
    c
}
