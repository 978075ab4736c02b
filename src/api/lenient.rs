//! [`Lenient`]: reads a custom resource that may not match its typed struct.
//!
//! An API server with a stale or missing CRD schema stores whatever it is sent, for example
//! `spec.vault: 42`. Read typed, one such object fails the whole list of its kind (so nothing
//! of that kind is reconciled) and kube-rs logs the list body. Read as `Lenient<K>`, it becomes
//! [`Lenient::Invalid`] on its own: its metadata (name, finalizers, generation …) and a
//! description of what is wrong, so the reconciler can report it and still remove a finalizer.
//!
//! # Guarantees
//! - A well-formed object reads exactly as `K` would ([`Lenient::Valid`]).
//! - [`SpecProblem`] names the JSON path and what was expected, never the offending value:
//!   serde messages quote values (`invalid type: string "abc"`), so the message is rebuilt from
//!   its fixed parts and anything unrecognised is replaced by a generic description.
//! - An object whose `metadata` itself is unusable still fails to deserialize, as with `K`.

use std::{borrow::Cow, fmt};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{Resource, api::ObjectMeta};
use serde::{Deserialize, Deserializer, de::DeserializeOwned};
use serde_json::Value;

/// A custom resource as read from the API: typed when it matches `K`, else what is usable.
// Clippy sizes the generic `K` as zero bytes; every real `K` (a custom resource, itself
// carrying an `ObjectMeta`) is at least as large as `InvalidObject`.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Lenient<K> {
    /// The object deserializes as `K`.
    Valid(K),
    /// The object does not deserialize as `K` (it bypassed schema validation).
    Invalid(InvalidObject),
}

/// What is left of an object that does not match its type.
#[derive(Clone, Debug, PartialEq)]
pub struct InvalidObject {
    /// The object's metadata, complete: enough to patch status and finalizers.
    pub metadata: ObjectMeta,
    /// `status.conditions`, best effort (empty when absent or unreadable), so a status write
    /// keeps the other conditions and the Ready transition time.
    pub conditions: Vec<Condition>,
    /// Why the object does not match its type.
    pub problem: SpecProblem,
}

/// Where an object does not match its type and what was expected there. Secret-free: built
/// from the field path and serde's fixed wording, never from the object's values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecProblem {
    /// The JSON path, for example `spec.connectionRef` or `spec.transforms[0].type`.
    pub path: String,
    /// What is wrong there, for example `invalid type, expected a string`.
    pub expected: String,
}

impl fmt::Display for SpecProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.expected)
    }
}

impl<K> Lenient<K> {
    /// The typed object, when it is valid.
    pub fn valid(&self) -> Option<&K> {
        match self {
            Self::Valid(object) => Some(object),
            Self::Invalid(_) => None,
        }
    }
}

impl<'de, K: DeserializeOwned> Deserialize<'de> for Lenient<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let metadata = value.get("metadata").cloned().unwrap_or(Value::Null);
        let metadata = match serde_path_to_error::deserialize::<_, ObjectMeta>(metadata) {
            Ok(metadata) => metadata,
            Err(e) => {
                let problem = problem(&format!("metadata.{}", e.path()), &e.inner().to_string());
                return Err(serde::de::Error::custom(problem));
            }
        };
        let conditions = value
            .pointer("/status/conditions")
            .and_then(|c| serde_json::from_value(c.clone()).ok())
            .unwrap_or_default();
        match serde_path_to_error::deserialize::<_, K>(value) {
            Ok(object) => Ok(Self::Valid(object)),
            Err(e) => Ok(Self::Invalid(InvalidObject {
                metadata,
                conditions,
                problem: problem(&e.path().to_string(), &e.inner().to_string()),
            })),
        }
    }
}

/// serde's fixed error openings; what follows them up to `, expected ` may quote the value.
const KINDS: [&str; 5] = [
    "invalid type",
    "invalid value",
    "invalid length",
    "unknown variant",
    "unknown field",
];

/// Rebuilds serde's `message` for `path` without the offending value (see the guarantees).
pub(crate) fn problem(path: &str, message: &str) -> SpecProblem {
    let path = match path.trim_end_matches('.') {
        "" => "the object".to_owned(),
        path => path.to_owned(),
    };
    // `missing field `x`` and `duplicate field `x`` name a field of our type, not a value.
    let names_our_field = ["missing field `", "duplicate field `"]
        .iter()
        .any(|opening| message.starts_with(opening))
        && message.ends_with('`')
        && message.matches('`').count() == 2;
    let expected = if names_our_field {
        message.to_owned()
    } else {
        // The text after the LAST `, expected ` is the type's own wording (a value quoted
        // before it may contain the same words, never after it).
        let expected = message.rsplit_once(", expected ").map(|(_, e)| e);
        match (KINDS.iter().find(|kind| message.starts_with(*kind)), expected) {
            (Some(kind), Some(expected)) => format!("{kind}, expected {expected}"),
            (Some(kind), None) => (*kind).to_owned(),
            (None, _) => "unreadable value".to_owned(),
        }
    };
    SpecProblem { path, expected }
}

impl<K: Resource> Resource for Lenient<K> {
    type DynamicType = K::DynamicType;
    type Scope = K::Scope;

    fn kind(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::kind(dt)
    }

    fn group(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::group(dt)
    }

    fn version(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::version(dt)
    }

    fn plural(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::plural(dt)
    }

    fn meta(&self) -> &ObjectMeta {
        match self {
            Self::Valid(object) => object.meta(),
            Self::Invalid(invalid) => &invalid.metadata,
        }
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        match self {
            Self::Valid(object) => object.meta_mut(),
            Self::Invalid(invalid) => &mut invalid.metadata,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::{FerrVaultConnection, FerrVaultSecret};

    fn secret(spec: Value) -> Value {
        json!({
            "apiVersion": "ferrvault.com/v1alpha1",
            "kind": "FerrVaultSecret",
            "metadata": { "name": "app", "namespace": "ns", "finalizers": ["f"], "generation": 3 },
            "spec": spec,
            "status": { "conditions": [{
                "type": "Ready", "status": "True", "reason": "Synced", "message": "ok",
                "lastTransitionTime": "2026-01-01T00:00:00Z"
            }]},
        })
    }

    fn invalid(object: Value) -> InvalidObject {
        match serde_json::from_value::<Lenient<FerrVaultSecret>>(object).expect("metadata is fine") {
            Lenient::Invalid(invalid) => invalid,
            Lenient::Valid(_) => panic!("expected an invalid object"),
        }
    }

    #[test]
    fn valid_object_should_read_as_its_type() {
        let object = secret(json!({ "connectionRef": { "name": "c" }, "vault": "prod" }));
        let typed: FerrVaultSecret = serde_json::from_value(object.clone()).unwrap();
        let lenient: Lenient<FerrVaultSecret> = serde_json::from_value(object).unwrap();
        assert_eq!(lenient.valid(), Some(&typed));
        assert_eq!(lenient.meta().generation, Some(3));
    }

    #[test]
    fn wrong_type_in_a_field_should_keep_metadata_and_name_the_path() {
        let bad = invalid(secret(json!({ "connectionRef": { "name": "c" }, "vault": 42 })));
        assert_eq!(bad.metadata.name.as_deref(), Some("app"));
        assert_eq!(bad.metadata.finalizers, Some(vec!["f".to_owned()]));
        assert_eq!(bad.conditions.len(), 1, "conditions kept for the status write");
        assert_eq!(
            bad.problem.to_string(),
            "spec.vault: invalid type, expected a string"
        );
        let nested = invalid(secret(
            json!({ "connectionRef": { "name": ["x"] }, "vault": "v" }),
        ));
        assert_eq!(nested.problem.path, "spec.connectionRef.name");
        let lenient = Lenient::<FerrVaultSecret>::Invalid(nested);
        assert_eq!(lenient.meta().name.as_deref(), Some("app"));
        assert!(lenient.valid().is_none());
    }

    #[test]
    fn problem_should_never_contain_the_offending_value() {
        let needle = "LEAKCHECK-s3cr3t, expected nothing";
        let cases = [
            json!({ "connectionRef": needle, "vault": "v" }),
            json!({ "connectionRef": { "name": "c" }, "vault": { "x": needle } }),
            json!({ "connectionRef": { "name": "c" }, "vault": "v", "rolloutRestart": [{ "kind": needle, "name": "w" }] }),
            json!({ "connectionRef": { "name": "c" }, "vault": "v", "selector": { "names": needle } }),
            json!({ "connectionRef": { "name": "c" } }),
        ];
        for spec in cases {
            let bad = invalid(secret(spec.clone()));
            let text = format!(
                "{} {:?}",
                bad.problem,
                Lenient::<FerrVaultSecret>::Invalid(bad.clone())
            );
            assert!(!text.contains("LEAKCHECK"), "{spec}: {text}");
            assert!(!text.contains("s3cr3t"), "{spec}: {text}");
        }
        assert_eq!(
            invalid(secret(json!({ "connectionRef": { "name": "c" } })))
                .problem
                .to_string(),
            "spec: missing field `vault`"
        );
    }

    #[test]
    fn unrecognised_messages_should_become_a_generic_description() {
        let p = problem("spec.x", "custom failure quoting LEAKCHECK");
        assert_eq!(p.to_string(), "spec.x: unreadable value");
        let p = problem(".", "unknown field `LEAKCHECK`, expected `a` or `b`");
        assert_eq!(p.to_string(), "the object: unknown field, expected `a` or `b`");
    }

    #[test]
    fn unusable_metadata_should_fail_as_the_typed_read_does() {
        let mut object = secret(json!({ "connectionRef": { "name": "c" }, "vault": "v" }));
        object["metadata"]["name"] = json!(7);
        let error = serde_json::from_value::<Lenient<FerrVaultSecret>>(object).unwrap_err();
        assert_eq!(
            error.to_string(),
            "metadata.name: invalid type, expected a string"
        );
    }

    #[test]
    fn connection_with_a_wrong_type_should_be_invalid_too() {
        let object = json!({
            "apiVersion": "ferrvault.com/v1alpha1",
            "kind": "FerrVaultConnection",
            "metadata": { "name": "conn" },
            "spec": { "url": 42, "tokenSecretRef": { "name": "t", "key": "token" } },
        });
        let lenient: Lenient<FerrVaultConnection> = serde_json::from_value(object).unwrap();
        match lenient {
            Lenient::Invalid(bad) => assert_eq!(
                bad.problem.to_string(),
                "spec.url: invalid type, expected a string"
            ),
            Lenient::Valid(_) => panic!("url 42 must not read as a connection"),
        }
        assert_eq!(Lenient::<FerrVaultConnection>::kind(&()), "FerrVaultConnection");
        assert_eq!(
            Lenient::<FerrVaultConnection>::plural(&()),
            "ferrvaultconnections"
        );
    }
}
