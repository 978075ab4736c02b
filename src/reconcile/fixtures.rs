//! A FerrVaultConnection as the unit tests of the reconcile modules need it: valid, at a
//! generation, with or without a Ready condition, last probed at a given second; and a
//! FerrVaultSecret at a generation under a refresh policy.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use crate::api::{
    ConditionType, ConnectionRef, FerrVaultConnection, FerrVaultConnectionSpec, FerrVaultConnectionStatus,
    FerrVaultSecret, FerrVaultSecretSpec, RefreshPolicy,
};

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
            client_cert_secret_ref: None,
            pin_sha256: None,
            suspend: None,
            change_detection: None,
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

/// `app` in `default` reading vault `prod` through `conn`, at `generation`, every hour, under
/// `policy` (unset: `None`), without status.
pub(super) fn secret(generation: i64, policy: Option<RefreshPolicy>) -> FerrVaultSecret {
    let mut cr = FerrVaultSecret::new(
        "app",
        FerrVaultSecretSpec {
            connection_ref: ConnectionRef::namespaced("conn"),
            project: None,
            vault: "prod".into(),
            selector: None,
            target: None,
            refresh_interval: "1h".into(),
            rollout_restart: Vec::new(),
            transforms: Vec::new(),
            suspend: None,
            refresh_policy: policy,
        },
    );
    cr.metadata.namespace = Some("default".into());
    cr.metadata.generation = Some(generation);
    cr
}
