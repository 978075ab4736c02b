//! Custom resources checked against their CRD's structural schema, as the apiextensions
//! server does on every create and update: unknown fields pruned, non-nullable nulls
//! dropped, `default`s applied, the OpenAPI value validations and the
//! `x-kubernetes-validations` CEL rules evaluated, with ratcheting (an update is not refused
//! for invalid values it leaves unchanged, `CRDValidationRatcheting`, GA in v1.33).
//!
//! # Layout
//! - [`prune`]: unknown fields and non-nullable nulls.
//! - [`validate`]: types, enums, formats, lengths, bounds, required fields, list types.
//! - [`cel`]: the CEL rules, evaluated by kube's CEL engine (`kube::core::cel`).
//! - `walk.rs`: what the three share to walk an object along its schema (field paths, the old
//!   item a list item corresponds to).
//!
//! # Guarantees
//! - An object is validated as stored: after pruning and defaulting.
//! - CEL rules do not run when a value error blocks them (a wrong type, an unsupported
//!   enum value, a missing required field, too long, too many), and a last error says so
//!   (when the schema has rules at all), as the real server does.
//! - Defaults are applied again when an object is read (objects stored under an older
//!   schema, or written straight into storage, get the current storage version's defaults).

pub mod cel;
pub mod prune;
pub mod validate;
mod walk;

use super::field_errors::{BadValue, ErrorType, FieldError};
use serde_json::Value;
use std::collections::BTreeMap;

/// The `openAPIV3Schema` of each served version of one CRD.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VersionSchemas {
    by_version: BTreeMap<String, Value>,
}

impl VersionSchemas {
    /// The schemas a CRD object declares (versions without one are absent).
    pub fn from_crd(crd: &Value) -> Self {
        let by_version = crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| {
                let name = v.get("name")?.as_str()?;
                let schema = v.pointer("/schema/openAPIV3Schema")?;
                Some((name.to_owned(), schema.clone()))
            })
            .collect();
        VersionSchemas { by_version }
    }

    /// The schema of `version`, if it has one.
    pub fn of(&self, version: &str) -> Option<&Value> {
        self.by_version.get(version)
    }
}

/// An object that passed its schema, and the unknown fields pruned from it.
#[derive(Debug)]
pub struct Admitted {
    /// The object to store.
    pub object: Value,
    /// Paths of the fields pruned because the schema does not know them (`spec.foo`),
    /// sorted.
    pub unknown_fields: Vec<String>,
}

/// Prunes, defaults and validates `new` against `schema`; `old` is the stored object an
/// update replaces (None on create), for ratcheting and transition rules.
///
/// # Errors
/// The field errors, in the order the real server reports them.
pub fn admit(schema: &Value, old: Option<&Value>, mut new: Value) -> Result<Admitted, Vec<FieldError>> {
    let mut unknown_fields = Vec::new();
    prune::prune_root(&mut new, schema, &mut unknown_fields);
    unknown_fields.sort();
    let new = kube::core::cel::apply_defaults(schema, &new);
    let mut errors = validate::validate(schema, &new, old);
    if !cel::has_rules(schema) {
        // No rules: no CEL validator, nothing left unchecked.
    } else if errors.iter().any(blocks_rules) {
        errors.push(FieldError::invalid(
            "<nil>",
            BadValue::Str("null".into()),
            "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
        ));
    } else {
        errors.extend(cel::evaluate(schema, &new, old));
    }
    if errors.is_empty() {
        Ok(Admitted {
            object: new,
            unknown_fields,
        })
    } else {
        Err(errors)
    }
}

/// `obj` with the defaults of `schema` applied, as read from storage.
pub fn default_on_read(schema: &Value, obj: &Value) -> Value {
    kube::core::cel::apply_defaults(schema, obj)
}

/// The value errors after which the real server does not evaluate CEL rules.
fn blocks_rules(e: &FieldError) -> bool {
    matches!(
        e.kind,
        ErrorType::NotSupported
            | ErrorType::Required
            | ErrorType::TooLong
            | ErrorType::TooMany
            | ErrorType::TypeInvalid
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "required": ["spec"], "properties": {"spec": {
            "type": "object", "required": ["url"],
            "properties": {
                "url": {"type": "string", "pattern": "^https?://"},
                "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
                "org": {"type": "string", "nullable": true}
            },
            "x-kubernetes-validations": [{"rule": "self.mode != 'b' || has(self.org)", "message": "org is required in mode b"}]
        }}})
    }

    #[test]
    fn admission_should_prune_default_and_accept_a_valid_object() {
        let admitted = admit(
            &schema(),
            None,
            json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n", "bogus": 1},
                   "spec": {"url": "https://x", "extra": true}, "junk": 1}),
        )
        .expect("valid");
        assert_eq!(
            admitted.object,
            json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n"}, "spec": {"url": "https://x", "mode": "a"}})
        );
        assert_eq!(admitted.unknown_fields, ["junk", "metadata.bogus", "spec.extra"]);
    }

    #[test]
    fn a_blocking_value_error_should_skip_the_rules_and_say_so() {
        let errors = admit(&schema(), None, json!({"spec": {"url": 42, "mode": "b"}})).unwrap_err();
        let messages: Vec<String> = errors.iter().map(FieldError::message).collect();
        assert_eq!(
            messages,
            [
                r#"spec.url: Invalid value: "integer": spec.url in body must be of type string: "integer""#,
                r#"<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"#,
            ]
        );
    }

    #[test]
    fn a_schema_without_rules_should_not_mention_them() {
        let plain = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"url": {"type": "string"}}}}});
        let errors = admit(&plain, None, json!({"spec": {"url": 42}})).unwrap_err();
        assert_eq!(errors.len(), 1, "{errors:?}");
    }

    #[test]
    fn rules_should_run_on_a_value_valid_object() {
        let errors = admit(&schema(), None, json!({"spec": {"url": "http://x", "mode": "b"}})).unwrap_err();
        assert_eq!(
            errors.iter().map(FieldError::message).collect::<Vec<_>>(),
            [r#"spec: Invalid value: "object": org is required in mode b"#]
        );
    }

    #[test]
    fn an_update_should_not_be_refused_for_values_it_leaves_unchanged() {
        let stored = json!({"spec": {"url": 42, "mode": "a"}});
        let mut relabelled = stored.clone();
        relabelled["metadata"] = json!({"labels": {"a": "b"}});
        assert!(admit(&schema(), Some(&stored), relabelled).is_ok());
        let mut changed = stored.clone();
        changed["spec"]["mode"] = json!("c");
        let errors = admit(&schema(), Some(&stored), changed).unwrap_err();
        assert_eq!(errors[0].field, "spec.mode", "{errors:?}");
        assert_eq!(errors.len(), 2, "the unchanged url is ratcheted: {errors:?}");
    }
}
