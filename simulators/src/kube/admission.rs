//! Admission of custom resources against their CRD's schema (see [`schema`]), and what the
//! request's `fieldValidation` directive makes of the unknown fields pruned on the way:
//! `Strict` refuses the write, `Warn` (the server's default) answers with a `Warning`
//! header per field, `Ignore` says nothing.

use super::{
    errors::ApiError,
    field_errors::{BadValue, FieldError, go_plain},
    registry::ResourceType,
    schema,
};
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// `fieldValidation`: what to do about fields the schema does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them and warn (the default when the parameter is absent).
    #[default]
    Warn,
    /// Refuse the request.
    Strict,
}

impl FieldValidation {
    /// Parses the query parameter.
    ///
    /// # Errors
    /// 400 BadRequest for a value other than `Ignore`, `Warn` or `Strict`.
    pub fn parse(value: Option<&str>) -> Result<Self, ApiError> {
        match value {
            None | Some("") => Ok(FieldValidation::Warn),
            Some("Ignore") => Ok(FieldValidation::Ignore),
            Some("Warn") => Ok(FieldValidation::Warn),
            Some("Strict") => Ok(FieldValidation::Strict),
            Some(other) => Err(ApiError::bad_request(format!(
                "fieldValidation: {}",
                FieldError::not_supported(
                    "fieldValidation",
                    BadValue::Str(other.into()),
                    &["Ignore".into(), "Strict".into(), "Warn".into()]
                )
                .body()
            ))),
        }
    }
}

/// The `Warning` headers a response will carry (shared by the handler and the verb).
#[derive(Debug, Clone, Default)]
pub struct Warnings(Arc<Mutex<Vec<String>>>);

impl Warnings {
    /// Adds one warning text.
    pub fn push(&self, text: String) {
        self.0.lock().expect("warnings lock poisoned").push(text);
    }

    /// The warnings so far.
    pub fn texts(&self) -> Vec<String> {
        self.0.lock().expect("warnings lock poisoned").clone()
    }
}

/// What a write asked for and where its warnings go.
#[derive(Debug, Clone, Default)]
pub struct Directive {
    /// The request's `fieldValidation`.
    pub field_validation: FieldValidation,
    /// Collects the response's warnings.
    pub warnings: Warnings,
}

/// A stored object as an update starts from: decoded from storage, so a custom resource has
/// its storage version's defaults (an object stored before a default existed is compared
/// with what a client read, not with its raw bytes).
pub fn as_decoded(rt: &ResourceType, stored: Arc<Value>) -> Arc<Value> {
    match rt.storage_schema() {
        Some(schema) => Arc::new(schema::default_on_read(schema, &stored)),
        None => stored,
    }
}

/// The object of a write to `rt` at `version` after its schema: pruned, defaulted,
/// validated against `old` (the stored object an update replaces). `patch` is the patch
/// document when the write is a patch (a strict refusal quotes it). Built-in kinds pass
/// unchanged.
///
/// # Errors
/// 422 Invalid with the field errors; with `fieldValidation=Strict`, unknown fields give
/// 400 BadRequest (create, update) or 422 on the `patch` (patches), as the real server
/// answers.
pub fn admit(
    rt: &ResourceType,
    version: &str,
    old: Option<&Value>,
    new: Value,
    patch: Option<&Value>,
    directive: &Directive,
) -> Result<Value, ApiError> {
    let Some(schema) = rt.schema_of(version) else {
        return Ok(new);
    };
    let name = new
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let admitted = schema::admit(schema, old, new)
        .map_err(|errors| ApiError::invalid_fields(&rt.group, &rt.kind, &name, &errors))?;
    let unknown: Vec<String> = admitted
        .unknown_fields
        .iter()
        .map(|f| format!("unknown field {f:?}"))
        .collect();
    match directive.field_validation {
        FieldValidation::Strict if !unknown.is_empty() => {
            let strict = format!("strict decoding error: {}", unknown.join(", "));
            Err(match patch {
                None => ApiError::bad_request(format!(
                    "{kind} in version {version:?} cannot be handled as a {kind}: {strict}",
                    kind = rt.kind
                )),
                Some(p) => ApiError::invalid_fields(
                    "",
                    "",
                    "",
                    &[FieldError::invalid("patch", BadValue::Str(go_plain(p)), strict)],
                ),
            })
        }
        FieldValidation::Warn => {
            unknown.into_iter().for_each(|w| directive.warnings.push(w));
            Ok(admitted.object)
        }
        _ => Ok(admitted.object),
    }
}
