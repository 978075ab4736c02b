//! Field-level validation errors worded as a v1.33 API server words them (apimachinery's
//! `field.Error`): a cause `reason`, the `field` path and a body such as
//! `Invalid value: "x": must be a string`.
//!
//! A 422 `Invalid` Status carries one cause per error and the message
//! `<Kind[.group]> "<name>" is invalid: <error>` (several errors: `[<e1>, <e2>]`), see
//! [`super::errors::ApiError::invalid_fields`].

use serde_json::{Value, json};

/// `field.ErrorType`: the cause `reason` and the words that start the error body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorType {
    /// `FieldValueRequired`.
    Required,
    /// `FieldValueDuplicate`.
    Duplicate,
    /// `FieldValueInvalid`.
    Invalid,
    /// `FieldValueNotSupported` (a value outside an enum).
    NotSupported,
    /// `FieldValueForbidden`.
    Forbidden,
    /// `FieldValueTooLong`.
    TooLong,
    /// `FieldValueTooMany`.
    TooMany,
    /// `FieldValueTypeInvalid` (a value of the wrong JSON type).
    TypeInvalid,
}

impl ErrorType {
    /// The `StatusCause.reason`.
    pub fn reason(self) -> &'static str {
        match self {
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    fn words(self) -> &'static str {
        match self {
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
        }
    }

    /// Whether the body names the bad value (Go prints no value for these types).
    fn shows_value(self) -> bool {
        !matches!(
            self,
            ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong
        )
    }
}

/// A bad value as Go formats it in an error body: simple types with `%v`, strings with
/// `%q`, anything else with `%#v` (maps, lists, unsigned integers).
#[derive(Debug, Clone, PartialEq)]
pub enum BadValue {
    /// A string, printed quoted.
    Str(String),
    /// A number or boolean, printed as is.
    Plain(String),
    /// Go's `%#v` rendering, already formatted.
    GoSyntax(String),
}

impl BadValue {
    /// A JSON value as the unstructured Go value it decodes to.
    pub fn of(value: &Value) -> Self {
        match value {
            Value::String(s) => BadValue::Str(s.clone()),
            Value::Number(_) | Value::Bool(_) => BadValue::Plain(value.to_string()),
            Value::Null => BadValue::Str("null".into()),
            Value::Array(_) | Value::Object(_) => BadValue::GoSyntax(go_syntax(value)),
        }
    }

    fn render(&self) -> String {
        match self {
            BadValue::Str(s) => format!("{s:?}"),
            BadValue::Plain(s) | BadValue::GoSyntax(s) => s.clone(),
        }
    }
}

/// Go's `%#v` of an unstructured JSON value (`map[string]interface {}{"a":1}`).
pub fn go_syntax(value: &Value) -> String {
    match value {
        Value::Null => "interface {}(nil)".into(),
        Value::String(s) => format!("{s:?}"),
        Value::Number(_) | Value::Bool(_) => value.to_string(),
        Value::Array(items) => format!(
            "[]interface {{}}{{{}}}",
            items.iter().map(go_syntax).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "map[string]interface {{}}{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{k:?}:{}", go_syntax(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Go's `%v` of an unstructured JSON value (`map[a:1 b:[x y]]`), as patch errors print a
/// patch.
pub fn go_plain(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::String(s) => s.clone(),
        Value::Number(_) | Value::Bool(_) => value.to_string(),
        Value::Array(items) => format!("[{}]", items.iter().map(go_plain).collect::<Vec<_>>().join(" ")),
        Value::Object(map) => format!(
            "map[{}]",
            map.iter()
                .map(|(k, v)| format!("{k}:{}", go_plain(v)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

/// One validation error of one field.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// What kind of error.
    pub kind: ErrorType,
    /// The field path (`spec.url`, `data[key]`, `<nil>` for none).
    pub field: String,
    /// The offending value (ignored by types that do not show it).
    pub value: BadValue,
    /// What is wrong, after the type words and the value.
    pub detail: String,
}

impl FieldError {
    fn new(kind: ErrorType, field: &str, value: BadValue, detail: impl Into<String>) -> Self {
        FieldError {
            kind,
            field: field.to_owned(),
            value,
            detail: detail.into(),
        }
    }

    /// `field.Invalid`.
    pub fn invalid(field: &str, value: BadValue, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Invalid, field, value, detail)
    }

    /// `field.TypeInvalid`.
    pub fn type_invalid(field: &str, value: BadValue, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::TypeInvalid, field, value, detail)
    }

    /// `field.Required`.
    pub fn required(field: &str, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Required, field, BadValue::Str(String::new()), detail)
    }

    /// `field.Forbidden`.
    pub fn forbidden(field: &str, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Forbidden, field, BadValue::Str(String::new()), detail)
    }

    /// `field.Duplicate`.
    pub fn duplicate(field: &str, value: BadValue) -> Self {
        Self::new(ErrorType::Duplicate, field, value, "")
    }

    /// `field.NotSupported` with the values an enum allows.
    pub fn not_supported(field: &str, value: BadValue, supported: &[String]) -> Self {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|v| format!("{v:?}")).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(ErrorType::NotSupported, field, value, detail)
    }

    /// `field.TooLong` for a string over `max` bytes.
    pub fn too_long(field: &str, max: u64) -> Self {
        let unit = if max == 1 { "byte" } else { "bytes" };
        Self::new(
            ErrorType::TooLong,
            field,
            BadValue::Str(String::new()),
            format!("may not be more than {max} {unit}"),
        )
    }

    /// `field.TooMany` for a list or map with `actual` entries over `max`.
    pub fn too_many(field: &str, actual: usize, max: u64) -> Self {
        let unit = if max == 1 { "item" } else { "items" };
        Self::new(
            ErrorType::TooMany,
            field,
            BadValue::Plain(actual.to_string()),
            format!("must have at most {max} {unit}"),
        )
    }

    /// The error without the field (`ErrorBody`): the cause's `message`.
    pub fn body(&self) -> String {
        let mut s = self.kind.words().to_owned();
        if self.kind.shows_value() {
            s = format!("{s}: {}", self.value.render());
        }
        if !self.detail.is_empty() {
            s = format!("{s}: {}", self.detail);
        }
        s
    }

    /// `<field>: <body>`, as the Status message lists it.
    pub fn message(&self) -> String {
        format!("{}: {}", self.field, self.body())
    }

    /// The `StatusCause`.
    pub fn cause(&self) -> Value {
        let mut cause = json!({ "reason": self.kind.reason(), "message": self.body() });
        if !self.field.is_empty() {
            cause["field"] = json!(self.field);
        }
        cause
    }
}

/// The errors as one message: the only one, or `[e1, e2]` without repeats.
pub fn aggregate(errors: &[FieldError]) -> String {
    let mut messages: Vec<String> = Vec::with_capacity(errors.len());
    for m in errors.iter().map(FieldError::message) {
        if !messages.contains(&m) {
            messages.push(m);
        }
    }
    match messages.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_should_read_like_the_real_server() {
        let e = FieldError::type_invalid(
            "spec.url",
            BadValue::Str("integer".into()),
            "spec.url in body must be of type string: \"integer\"",
        );
        assert_eq!(
            e.message(),
            r#"spec.url: Invalid value: "integer": spec.url in body must be of type string: "integer""#
        );
        assert_eq!(e.cause()["reason"], "FieldValueTypeInvalid");
        assert_eq!(
            FieldError::required("spec.vault", "").message(),
            "spec.vault: Required value"
        );
        let enum_error = FieldError::not_supported(
            "spec.mode",
            BadValue::Str("x".into()),
            &["ferrvault".into(), "cloud".into()],
        );
        assert_eq!(
            enum_error.body(),
            r#"Unsupported value: "x": supported values: "ferrvault", "cloud""#
        );
        assert_eq!(
            FieldError::invalid(
                "metadata.resourceVersion",
                BadValue::GoSyntax("0x0".into()),
                "must be specified for an update"
            )
            .body(),
            "Invalid value: 0x0: must be specified for an update"
        );
    }

    #[test]
    fn several_errors_should_aggregate_in_brackets_without_repeats() {
        let f = FieldError::forbidden("data", "field is immutable when `immutable` is set");
        let t = FieldError::invalid("type", BadValue::Str("b".into()), "field is immutable");
        assert_eq!(
            aggregate(&[t.clone(), f.clone(), f]),
            r#"[type: Invalid value: "b": field is immutable, data: Forbidden: field is immutable when `immutable` is set]"#
        );
    }

    #[test]
    fn patches_should_print_as_go_maps() {
        assert_eq!(
            go_plain(&json!({"spec": {"b": [1, "x"], "a": true}})),
            "map[spec:map[a:true b:[1 x]]]"
        );
    }

    #[test]
    fn maps_should_print_in_go_syntax() {
        assert_eq!(
            go_syntax(&json!({"type": "Ready", "n": [1, null]})),
            r#"map[string]interface {}{"n":[]interface {}{1, interface {}(nil)}, "type":"Ready"}"#
        );
    }
}
