//! Conversion between k8s-pb messages and the JSON the store keeps, as the real server's
//! two serializers see one object: field names are the JSON names (the protobuf field
//! names are the same words, which prost turned into snake_case), bytes are base64, and
//! the apimachinery types of [`super::special`] have their own forms.
//!
//! [`messages!`] declares a conversion by listing a message's fields. Both directions
//! destructure or build the message exhaustively, so a field k8s-pb adds (or one left
//! out of a list) is a compile error rather than data silently dropped.
//!
//! Presence follows Go's encoders. Go writes every non-pointer field to protobuf, zero or
//! not, and drops zero `omitempty` scalars from JSON; so a zero scalar is omitted from
//! JSON unless the field is declared `keep` (a Go pointer, whose zero was set on
//! purpose, or a field without `omitempty`). Empty lists and maps are omitted; a set
//! message is an object even when empty (`strategy: {}`), a zero `Time` in a `keep`
//! field is `null`. JSON fields no message declares are ignored, as the real decoder
//! drops unknown fields of built-in kinds.

use base64::{Engine, engine::general_purpose::STANDARD};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Why a JSON value could not become a message: where (JSON field path) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvertError {
    path: Vec<String>,
    expected: &'static str,
}

impl ConvertError {
    pub(super) fn expected(what: &'static str) -> Self {
        ConvertError {
            path: Vec::new(),
            expected: what,
        }
    }

    /// The same error one field further out.
    pub fn within(mut self, field: impl Into<String>) -> Self {
        self.path.push(field.into());
        self
    }
}

impl std::fmt::Display for ConvertError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path: Vec<&str> = self.path.iter().rev().map(String::as_str).collect();
        write!(f, "{}: expected {}", path.join("."), self.expected)
    }
}

/// A value with a Kubernetes JSON form: scalars, the special apimachinery types and
/// every message declared with [`messages!`].
pub trait JsonForm: Sized {
    /// The JSON form.
    fn to_json(&self) -> Value;
    /// Reads the JSON form.
    ///
    /// # Errors
    /// The value has the wrong JSON type.
    fn from_json(v: &Value) -> Result<Self, ConvertError>;

    /// Whether this is Go's zero value, which `omitempty` leaves out of JSON.
    fn is_zero(&self) -> bool {
        false
    }
}

/// A message field: how protobuf presence (optional, repeated, map) maps to JSON.
pub trait FieldForm: Sized {
    /// The field's JSON value, `None` to omit it (zero scalars too, unless `keep_zero`).
    fn to_field(&self, keep_zero: bool) -> Option<Value>;
    /// Reads the field from its JSON value (`None`: absent).
    ///
    /// # Errors
    /// The value has the wrong JSON type.
    fn from_field(v: Option<&Value>) -> Result<Self, ConvertError>;
}

fn present(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

impl<T: JsonForm> FieldForm for Option<T> {
    fn to_field(&self, keep_zero: bool) -> Option<Value> {
        self.as_ref()
            .filter(|v| keep_zero || !v.is_zero())
            .map(T::to_json)
    }

    fn from_field(v: Option<&Value>) -> Result<Self, ConvertError> {
        present(v).map(T::from_json).transpose()
    }
}

impl<T: JsonForm> FieldForm for Vec<T> {
    fn to_field(&self, _: bool) -> Option<Value> {
        (!self.is_empty()).then(|| Value::Array(self.iter().map(T::to_json).collect()))
    }

    fn from_field(v: Option<&Value>) -> Result<Self, ConvertError> {
        let Some(v) = present(v) else {
            return Ok(Vec::new());
        };
        let items = v.as_array().ok_or_else(|| ConvertError::expected("a list"))?;
        items
            .iter()
            .enumerate()
            .map(|(i, item)| T::from_json(item).map_err(|e| e.within(format!("[{i}]"))))
            .collect()
    }
}

impl<T: JsonForm> FieldForm for BTreeMap<String, T> {
    fn to_field(&self, _: bool) -> Option<Value> {
        (!self.is_empty())
            .then(|| Value::Object(self.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()))
    }

    fn from_field(v: Option<&Value>) -> Result<Self, ConvertError> {
        let Some(v) = present(v) else {
            return Ok(BTreeMap::new());
        };
        let map = v.as_object().ok_or_else(|| ConvertError::expected("an object"))?;
        map.iter()
            .map(|(k, item)| Ok((k.clone(), T::from_json(item).map_err(|e| e.within(k.clone()))?)))
            .collect()
    }
}

impl JsonForm for String {
    fn to_json(&self) -> Value {
        json!(self)
    }

    fn from_json(v: &Value) -> Result<Self, ConvertError> {
        v.as_str()
            .map(String::from)
            .ok_or_else(|| ConvertError::expected("a string"))
    }

    fn is_zero(&self) -> bool {
        self.is_empty()
    }
}

impl JsonForm for bool {
    fn to_json(&self) -> Value {
        json!(self)
    }

    fn from_json(v: &Value) -> Result<Self, ConvertError> {
        v.as_bool().ok_or_else(|| ConvertError::expected("a boolean"))
    }

    fn is_zero(&self) -> bool {
        !*self
    }
}

impl JsonForm for i64 {
    fn to_json(&self) -> Value {
        json!(self)
    }

    fn from_json(v: &Value) -> Result<Self, ConvertError> {
        v.as_i64().ok_or_else(|| ConvertError::expected("an integer"))
    }

    fn is_zero(&self) -> bool {
        *self == 0
    }
}

impl JsonForm for i32 {
    fn to_json(&self) -> Value {
        json!(self)
    }

    fn from_json(v: &Value) -> Result<Self, ConvertError> {
        i64::from_json(v)
            .and_then(|n| i32::try_from(n).map_err(|_| ConvertError::expected("a 32-bit integer")))
    }

    fn is_zero(&self) -> bool {
        *self == 0
    }
}

/// `bytes` fields: base64 in JSON.
impl JsonForm for Vec<u8> {
    fn to_json(&self) -> Value {
        json!(STANDARD.encode(self))
    }

    fn from_json(v: &Value) -> Result<Self, ConvertError> {
        let text = v
            .as_str()
            .ok_or_else(|| ConvertError::expected("a base64 string"))?;
        STANDARD
            .decode(text)
            .map_err(|_| ConvertError::expected("a base64 string"))
    }

    fn is_zero(&self) -> bool {
        self.is_empty()
    }
}

/// The JSON name prost's snake_case field name came from (`restart_policy` →
/// `restartPolicy`, `r#type` → `type`). Names with acronyms are spelled out in
/// [`messages!`] instead.
pub fn json_name(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut upper = false;
    for c in field.trim_start_matches("r#").chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Inserts a field into a JSON object being built.
pub fn put(out: &mut Map<String, Value>, name: String, value: Option<Value>) {
    if let Some(v) = value {
        out.insert(name, v);
    }
}

/// Merges an inline (Go-embedded) message's fields into the object being built.
pub fn put_inline(out: &mut Map<String, Value>, value: Option<Value>) {
    if let Some(Value::Object(fields)) = value {
        out.extend(fields);
    }
}

/// Reads one field from a JSON object.
///
/// # Errors
/// The field has the wrong JSON type (the error names it).
pub fn take<F: FieldForm>(obj: &Map<String, Value>, name: String) -> Result<F, ConvertError> {
    F::from_field(obj.get(&name)).map_err(|e| e.within(name))
}

/// The object itself, for [`JsonForm::from_json`] of a message.
///
/// # Errors
/// `v` is not a JSON object.
pub fn object(v: &Value) -> Result<&Map<String, Value>, ConvertError> {
    v.as_object().ok_or_else(|| ConvertError::expected("an object"))
}

/// Declares the JSON form of k8s-pb messages by listing their fields:
///
/// ```text
/// core::ContainerPort { name, host_port, container_port, protocol, host_ip: "hostIP" }
/// core::Volume { name, volume_source: inline }
/// ```
///
/// A bare field is named in JSON by [`json_name`]; `field: "jsonName"` spells an acronym
/// out; `field: inline` is a Go-embedded struct whose fields sit in the parent object;
/// `field: keep` (or `field: "jsonName" keep`) writes the field's zero value to JSON.
macro_rules! messages {
    ($($ty:path { $($field:ident $(: $how:tt $($keep:ident)?)?),* $(,)? })*) => {
        $(impl $crate::kube::protobuf::convert::JsonForm for $ty {
            fn to_json(&self) -> serde_json::Value {
                let Self { $($field),* } = self;
                let mut out = serde_json::Map::new();
                $($crate::kube::protobuf::convert::messages!(@put out, $field $(: $how $($keep)?)?);)*
                serde_json::Value::Object(out)
            }

            fn from_json(v: &serde_json::Value) -> Result<Self, $crate::kube::protobuf::convert::ConvertError> {
                let obj = $crate::kube::protobuf::convert::object(v)?;
                Ok(Self { $($field: $crate::kube::protobuf::convert::messages!(@take obj, v, $field $(: $how $($keep)?)?)?),* })
            }
        })*
    };
    (@put $out:ident, $field:ident : inline) => {
        $crate::kube::protobuf::convert::put_inline(&mut $out, $crate::kube::protobuf::convert::FieldForm::to_field($field, true))
    };
    (@put $out:ident, $field:ident : keep) => {
        $crate::kube::protobuf::convert::put(
            &mut $out,
            $crate::kube::protobuf::convert::json_name(stringify!($field)),
            $crate::kube::protobuf::convert::FieldForm::to_field($field, true),
        )
    };
    (@put $out:ident, $field:ident : $json:literal keep) => {
        $crate::kube::protobuf::convert::put(&mut $out, $json.into(), $crate::kube::protobuf::convert::FieldForm::to_field($field, true))
    };
    (@put $out:ident, $field:ident : $json:literal) => {
        $crate::kube::protobuf::convert::put(&mut $out, $json.into(), $crate::kube::protobuf::convert::FieldForm::to_field($field, false))
    };
    (@put $out:ident, $field:ident) => {
        $crate::kube::protobuf::convert::put(
            &mut $out,
            $crate::kube::protobuf::convert::json_name(stringify!($field)),
            $crate::kube::protobuf::convert::FieldForm::to_field($field, false),
        )
    };
    (@take $obj:ident, $v:ident, $field:ident : inline) => {
        $crate::kube::protobuf::convert::FieldForm::from_field(Some($v))
    };
    (@take $obj:ident, $v:ident, $field:ident : keep) => {
        $crate::kube::protobuf::convert::messages!(@take $obj, $v, $field)
    };
    (@take $obj:ident, $v:ident, $field:ident : $json:literal $($keep:ident)?) => {
        $crate::kube::protobuf::convert::take($obj, $json.into())
    };
    (@take $obj:ident, $v:ident, $field:ident) => {
        $crate::kube::protobuf::convert::take($obj, $crate::kube::protobuf::convert::json_name(stringify!($field)))
    };
}
pub(crate) use messages;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_name_should_camel_case_prost_names() {
        assert_eq!(json_name("restart_policy"), "restartPolicy");
        assert_eq!(json_name("r#type"), "type");
        assert_eq!(json_name("name"), "name");
    }

    #[test]
    fn wrong_json_types_should_name_the_field() {
        let e = <Vec<String>>::from_field(Some(&json!(["a", 1]))).unwrap_err();
        assert_eq!(e.within("command").to_string(), "command.[1]: expected a string");
    }
}
