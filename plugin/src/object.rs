//! A FerrVaultSecret as the plugin reads it: typed where it matches the operator's types
//! ([`Lenient`]), and the controls of issue 36 (force-sync, suspend, refresh policy) read raw
//! from the object, so they show as soon as the cluster's operator and CRD have them.
//!
//! # Guarantees
//! - One object stored past the CRD schema reads as invalid on its own; the others still read.
//! - Strings kept from the object for display are bounded ([`MAX_SHOWN`] characters), whatever
//!   the object holds.

use ferrvault_operator::{
    api::{ConditionType, FerrVaultSecret, FerrVaultSecretStatus, Lenient},
    rules::find_condition,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use kube::api::DynamicObject;
use serde::Deserialize;
use serde_json::Value;

use crate::error::PluginError;

/// The annotation that forces a sync: a pass is due while its value differs from
/// `status.observedForceSync` (issue 36 point 1).
// NOTE: the operator's `api::names` gets this constant with the force-sync feature; use it then.
pub const FORCE_SYNC_ANNOTATION: &str = "ferrvault.com/force-sync";

/// The most characters of a string read from an object that the plugin keeps to show.
pub const MAX_SHOWN: usize = 256;

/// `spec.refreshPolicy` (issue 36 point 3); absent means [`RefreshPolicy::Periodic`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefreshPolicy {
    /// Refreshes every `refreshInterval`, and on every change.
    Periodic,
    /// Syncs on spec, input and target changes only: no timer.
    OnChange,
    /// Creates a missing target once, never overwrites it: no timer.
    CreatedOnce,
    /// A value this plugin does not know (a newer operator's, or stored past the schema).
    Other(String),
}

impl RefreshPolicy {
    /// The spelling in the spec.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Periodic => "Periodic",
            Self::OnChange => "OnChange",
            Self::CreatedOnce => "CreatedOnce",
            Self::Other(other) => other,
        }
    }

    /// Whether the policy refreshes on a timer.
    pub fn has_timer(&self) -> bool {
        match self {
            Self::Periodic => true,
            Self::OnChange | Self::CreatedOnce | Self::Other(_) => false,
        }
    }

    fn read(value: Option<&str>) -> Self {
        match value {
            None | Some("Periodic") => Self::Periodic,
            Some("OnChange") => Self::OnChange,
            Some("CreatedOnce") => Self::CreatedOnce,
            Some(other) => Self::Other(bounded(other)),
        }
    }
}

/// The controls of issue 36, read raw from the object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Controls {
    /// `spec.suspend`.
    pub suspend: bool,
    /// `spec.refreshPolicy`.
    pub refresh_policy: RefreshPolicy,
    /// The [`FORCE_SYNC_ANNOTATION`]'s value.
    pub force_sync: Option<String>,
    /// `status.observedForceSync`: the value the last pass that synced saw.
    pub observed_force_sync: Option<String>,
}

impl Controls {
    /// The controls of `object` (the whole object as JSON).
    pub fn read(object: &Value) -> Self {
        let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str);
        let annotations = object.pointer("/metadata/annotations");
        Self {
            suspend: object.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true),
            refresh_policy: RefreshPolicy::read(text("/spec/refreshPolicy")),
            force_sync: annotations
                .and_then(|a| a.get(FORCE_SYNC_ANNOTATION))
                .and_then(Value::as_str)
                .map(bounded),
            observed_force_sync: text("/status/observedForceSync").map(bounded),
        }
    }

    /// Whether a force-sync is asked for and no pass has synced for it yet.
    pub fn force_sync_pending(&self) -> bool {
        self.force_sync.is_some() && self.force_sync != self.observed_force_sync
    }
}

/// A FerrVaultSecret as read.
#[derive(Debug, Clone)]
pub struct SecretView {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// The object, typed when it matches the operator's types.
    pub object: Lenient<FerrVaultSecret>,
    /// The controls of issue 36.
    pub controls: Controls,
}

impl SecretView {
    /// Reads `object`, as listed or got untyped.
    ///
    /// # Errors
    /// [`PluginError::Object`] when even its metadata is unusable.
    pub fn read(object: DynamicObject) -> Result<Self, PluginError> {
        let value = serde_json::to_value(&object).map_err(|e| PluginError::Object(e.to_string()))?;
        let controls = Controls::read(&value);
        let object = Lenient::<FerrVaultSecret>::deserialize(value)
            .map_err(|e| PluginError::Object(format!("a FerrVaultSecret is unreadable: {e}")))?;
        let metadata = match &object {
            Lenient::Valid(valid) => &valid.metadata,
            Lenient::Invalid(invalid) => &invalid.metadata,
        };
        Ok(Self {
            namespace: metadata.namespace.clone().unwrap_or_default(),
            name: metadata.name.clone().unwrap_or_default(),
            controls,
            object,
        })
    }

    /// Its metadata.
    pub fn metadata(&self) -> &ObjectMeta {
        match &self.object {
            Lenient::Valid(valid) => &valid.metadata,
            Lenient::Invalid(invalid) => &invalid.metadata,
        }
    }

    /// The typed object, when it matches the operator's types.
    pub fn valid(&self) -> Option<&FerrVaultSecret> {
        self.object.valid()
    }

    /// Its status (empty when it has none).
    pub fn status(&self) -> FerrVaultSecretStatus {
        match &self.object {
            Lenient::Valid(valid) => valid.status.clone().unwrap_or_default(),
            Lenient::Invalid(invalid) => FerrVaultSecretStatus {
                conditions: invalid.conditions.clone(),
                ..FerrVaultSecretStatus::default()
            },
        }
    }

    /// Its `Ready` condition.
    pub fn ready(&self) -> Option<Condition> {
        find_condition(&self.status().conditions, ConditionType::Ready).cloned()
    }
}

/// `text` cut to [`MAX_SHOWN`] characters.
fn bounded(text: &str) -> String {
    text.chars().take(MAX_SHOWN).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn controls_should_read_the_issue_36_fields_raw_and_default_to_periodic() {
        let object = json!({
            "metadata": { "annotations": { FORCE_SYNC_ANNOTATION: "now", "other": "x" } },
            "spec": { "suspend": true, "refreshPolicy": "CreatedOnce" },
            "status": { "observedForceSync": "before" },
        });
        let controls = Controls::read(&object);
        assert!(controls.suspend && controls.force_sync_pending());
        assert_eq!(controls.refresh_policy, RefreshPolicy::CreatedOnce);
        let plain = Controls::read(&json!({ "spec": {} }));
        assert_eq!(plain.refresh_policy, RefreshPolicy::Periodic);
        assert!(!plain.suspend && !plain.force_sync_pending());
    }

    #[test]
    fn a_force_sync_should_be_pending_only_until_its_value_is_observed() {
        let with = |force: Option<&str>, observed: Option<&str>| Controls {
            suspend: false,
            refresh_policy: RefreshPolicy::Periodic,
            force_sync: force.map(str::to_owned),
            observed_force_sync: observed.map(str::to_owned),
        };
        for (force, observed, pending) in [
            (None, None, false),
            (None, Some("a"), false),
            (Some("a"), None, true),
            (Some("a"), Some("b"), true),
            (Some("a"), Some("a"), false),
        ] {
            assert_eq!(
                with(force, observed).force_sync_pending(),
                pending,
                "{force:?} {observed:?}"
            );
        }
    }

    #[test]
    fn strings_read_from_an_object_should_be_bounded() {
        let long = "x".repeat(10 * MAX_SHOWN);
        let controls = Controls::read(&json!({ "spec": { "refreshPolicy": long } }));
        assert_eq!(controls.refresh_policy.as_str().len(), MAX_SHOWN);
    }
}
