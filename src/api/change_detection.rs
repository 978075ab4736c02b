//! `spec.changeDetection` of a FerrVaultConnection (and a ClusterFerrVaultConnection): how the
//! operator learns that a value changed in FerrVault (issue 38 point 3).
//!
//! # Guarantees (enforced by the CRD schema, and again by the reconciler)
//! - `mode` is `Poll` or `Versions`; absent means `Poll`, today's behaviour exactly: nothing is
//!   defaulted into stored objects.
//! - `interval` is a Go duration (`30s`, `1m`) of at most [`MAX_DURATION`] bytes, at least
//!   [`MIN_CHANGE_INTERVAL`] (a CEL rule on `duration()`); absent means
//!   [`DEFAULT_CHANGE_INTERVAL`].

use std::time::Duration;

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{bounds::MAX_DURATION, secret::GO_DURATION_PATTERN};

/// The least `changeDetection.interval`: one `list` every 5 s is 12 of a token's 60 requests a
/// minute, the most a poller may take of a budget its reveals share.
pub const MIN_CHANGE_INTERVAL: Duration = Duration::from_secs(5);

/// `changeDetection.interval` when absent.
pub const DEFAULT_CHANGE_INTERVAL: Duration = Duration::from_secs(30);

/// The CEL rule bounding `interval` below (Kubernetes CEL parses Go durations).
pub(crate) const INTERVAL_FLOOR_RULE: &str =
    "!has(self.interval) || duration(self.interval) >= duration('5s')";

/// The message of [`INTERVAL_FLOOR_RULE`].
pub const INTERVAL_FLOOR_MESSAGE: &str = "changeDetection.interval must be at least 5s";

/// How a connection's FerrVaultSecrets learn of a change in FerrVault.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[x_kube(validation = Rule::new(INTERVAL_FLOOR_RULE).message(INTERVAL_FLOOR_MESSAGE))]
#[serde(rename_all = "camelCase")]
pub struct ChangeDetection {
    /// `Poll` (each FerrVaultSecret reveals on its own `refreshInterval`; the default) or
    /// `Versions` (one `GET /operator/secrets/list` per interval for the whole connection, and
    /// a reveal only for the FerrVaultSecrets whose selected versions moved).
    #[serde(default)]
    pub mode: ChangeDetectionMode,
    /// How often `Versions` asks `list`, as a Go duration, at least `5s`; unset means `30s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = GO_DURATION_PATTERN), length(max = MAX_DURATION))]
    pub interval: Option<String>,
}

/// The change-detection modes.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum ChangeDetectionMode {
    /// Every FerrVaultSecret reveals on its own `refreshInterval` (the behaviour without
    /// `changeDetection`).
    #[default]
    Poll,
    /// One `list` per interval per connection; reveals only where a selected version moved.
    Versions,
}
