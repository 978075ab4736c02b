//! The apimachinery types whose JSON form is not their message's: `Time` and `MicroTime`
//! (RFC 3339 strings, `null` when zero), `IntOrString` (a number or a string), `Quantity`
//! (its string) and `FieldsV1` (JSON bytes on the wire, the JSON itself in JSON).

use super::convert::{ConvertError, JsonForm};
use k8s_pb::apimachinery::pkg::{
    api::resource::Quantity,
    apis::meta::v1::{FieldsV1, MicroTime, Time},
    util::intstr::IntOrString,
};
use serde_json::{Value, json};

/// Seconds and nanoseconds as a `jiff` timestamp; `None` for Go's zero time (0, 0).
fn timestamp(seconds: Option<i64>, nanos: Option<i32>) -> Option<jiff::Timestamp> {
    let (s, n) = (seconds.unwrap_or(0), nanos.unwrap_or(0));
    if s == 0 && n == 0 {
        return None;
    }
    jiff::Timestamp::new(s, n).ok()
}

fn parse_time(v: &Value) -> Result<jiff::Timestamp, ConvertError> {
    v.as_str()
        .and_then(|s| s.parse::<jiff::Timestamp>().ok())
        .ok_or_else(|| ConvertError::expected("an RFC 3339 time"))
}

/// `metav1.Time`: RFC 3339 with seconds, `null` when zero.
impl JsonForm for Time {
    fn to_json(&self) -> Value {
        timestamp(self.seconds, self.nanos).map_or(Value::Null, |t| {
            json!(t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        })
    }

    fn from_json(v: &Value) -> Result<Self, ConvertError> {
        let t = parse_time(v)?;
        Ok(Time {
            seconds: Some(t.as_second()),
            nanos: Some(t.subsec_nanosecond()),
        })
    }

    fn is_zero(&self) -> bool {
        timestamp(self.seconds, self.nanos).is_none()
    }
}

/// `metav1.MicroTime`: RFC 3339 with six fractional digits, `null` when zero.
impl JsonForm for MicroTime {
    fn to_json(&self) -> Value {
        timestamp(self.seconds, self.nanos).map_or(Value::Null, |t| {
            json!(t.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string())
        })
    }

    fn from_json(v: &Value) -> Result<Self, ConvertError> {
        let t = parse_time(v)?;
        Ok(MicroTime {
            seconds: Some(t.as_second()),
            nanos: Some(t.subsec_nanosecond()),
        })
    }

    fn is_zero(&self) -> bool {
        timestamp(self.seconds, self.nanos).is_none()
    }
}

/// `intstr.IntOrString`: a JSON number (type 0) or string (type 1).
impl JsonForm for IntOrString {
    fn to_json(&self) -> Value {
        match self.r#type {
            Some(1) => json!(self.str_val.clone().unwrap_or_default()),
            _ => json!(self.int_val.unwrap_or(0)),
        }
    }

    fn from_json(v: &Value) -> Result<Self, ConvertError> {
        match v {
            Value::String(s) => Ok(IntOrString {
                r#type: Some(1),
                int_val: Some(0),
                str_val: Some(s.clone()),
            }),
            other => Ok(IntOrString {
                r#type: Some(0),
                int_val: Some(
                    i32::from_json(other).map_err(|_| ConvertError::expected("a number or a string"))?,
                ),
                str_val: Some(String::new()),
            }),
        }
    }
}

/// `resource.Quantity`: its string form.
impl JsonForm for Quantity {
    fn to_json(&self) -> Value {
        json!(self.string.clone().unwrap_or_default())
    }

    fn from_json(v: &Value) -> Result<Self, ConvertError> {
        match v {
            Value::String(s) => Ok(Quantity {
                string: Some(s.clone()),
            }),
            Value::Number(n) => Ok(Quantity {
                string: Some(n.to_string()),
            }),
            _ => Err(ConvertError::expected("a quantity")),
        }
    }
}

/// `metav1.FieldsV1`: JSON bytes on the wire, the JSON itself in JSON.
impl JsonForm for FieldsV1 {
    fn to_json(&self) -> Value {
        let raw = self.raw.as_deref().unwrap_or(b"{}");
        serde_json::from_slice(raw).unwrap_or_else(|_| json!({}))
    }

    fn from_json(v: &Value) -> Result<Self, ConvertError> {
        Ok(FieldsV1 {
            raw: Some(serde_json::to_vec(v).expect("JSON values serialise")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_should_read_and_write_rfc3339_and_zero_as_null() {
        let t = Time::from_json(&json!("2026-01-02T03:04:05Z")).expect("time");
        assert_eq!(t.to_json(), json!("2026-01-02T03:04:05Z"));
        assert_eq!(Time::default().to_json(), Value::Null);
        let micro = MicroTime::from_json(&json!("2026-01-02T03:04:05.123456Z")).expect("micro");
        assert_eq!(micro.to_json(), json!("2026-01-02T03:04:05.123456Z"));
    }

    #[test]
    fn int_or_string_should_keep_its_json_type() {
        for v in [json!(3), json!("25%")] {
            assert_eq!(IntOrString::from_json(&v).expect("valid").to_json(), v);
        }
    }
}
