//! JSON log lines as controller-runtime's zap logger writes them (zap's production encoder
//! config): `ts`, lower-case `level`, `logger`, `msg`, then the fields of the enclosing spans
//! (the runtime's `controller`, `namespace`, `name`, `reconcileID`), then the event's own fields
//! (`error`, …). Log pipelines built for the Go operator read them unchanged.
//!
//! # Guarantees
//! - One value per key: a field repeated by an inner span or the event replaces the outer
//!   value in place; a field named like a header key is written as `field.<name>`.
//! - Only what the log call passed is written (no span names, no file paths).
//! - `msg` and every field value are at most [`MAX_MESSAGE_BYTES`] (1 KiB): a longer one is cut
//!   with a marker naming its length
//!   ([`bounded_text`](crate::reconcile::rules::bounds::bounded_text)), an event's own values
//!   while they are formatted.

use std::fmt;

use jiff::Timestamp;
use serde_json::Value;
use tracing::{
    Event, Level, Subscriber,
    field::{Field, Visit},
};
use tracing_subscriber::{
    fmt::{FmtContext, FormatEvent, FormattedFields, format::JsonFields, format::Writer},
    registry::LookupSpan,
};

use crate::{
    cli::zap::TimeEncoding,
    reconcile::rules::bounds::bounded_text::{Bounded, MAX_MESSAGE_BYTES, cut},
};

/// Keys the line starts with, in this order.
const HEADER: [&str; 4] = ["ts", "level", "logger", "msg"];

/// The event formatter (use with [`JsonFields`] as the span field formatter).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ZapJson {
    time: TimeEncoding,
}

impl ZapJson {
    /// A formatter writing `ts` with `time`.
    pub(crate) fn new(time: TimeEncoding) -> Self {
        Self { time }
    }
}

impl<S> FormatEvent<S, JsonFields> for ZapJson
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, JsonFields>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let metadata = event.metadata();
        let mut fields = EventFields::default();
        event.record(&mut fields);
        let mut line = Line::default();
        line.push("ts", encode_time(self.time, Timestamp::now()));
        line.push("level", Value::from(zap_level(*metadata.level())));
        line.push("logger", Value::from(metadata.target().replace("::", ".")));
        line.push("msg", Value::from(fields.message.take().unwrap_or_default()));
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                let extensions = span.extensions();
                let Some(formatted) = extensions.get::<FormattedFields<JsonFields>>() else {
                    continue;
                };
                if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&formatted.fields) {
                    for (key, value) in map {
                        line.field(key, bounded(value));
                    }
                }
            }
        }
        for (key, value) in fields.fields {
            line.field(key, value);
        }
        writeln!(writer, "{}", line.to_json())
    }
}

/// An ordered JSON object with unique keys.
#[derive(Default)]
struct Line(Vec<(String, Value)>);

impl Line {
    fn push(&mut self, key: &str, value: Value) {
        self.0.push((key.to_owned(), value));
    }

    /// Adds a span or event field: replaces a field of the same name, never a header key.
    fn field(&mut self, key: String, value: Value) {
        let key = if HEADER.contains(&key.as_str()) {
            format!("field.{key}")
        } else {
            key
        };
        match self.0.iter_mut().find(|(existing, _)| *existing == key) {
            Some((_, slot)) => *slot = value,
            None => self.0.push((key, value)),
        }
    }

    fn to_json(&self) -> String {
        let mut out = String::from("{");
        for (index, (key, value)) in self.0.iter().enumerate() {
            if index > 0 {
                out.push(',');
            }
            out.push_str(&Value::from(key.as_str()).to_string());
            out.push(':');
            out.push_str(&value.to_string());
        }
        out.push('}');
        out
    }
}

/// A span's field value within [`MAX_MESSAGE_BYTES`]: a longer text is cut, a longer value of
/// another type (span fields are flat, so hardly ever) becomes its cut JSON text.
fn bounded(value: Value) -> Value {
    match value {
        Value::String(text) => Value::String(cut(text, MAX_MESSAGE_BYTES)),
        other => {
            let text = other.to_string();
            if text.len() <= MAX_MESSAGE_BYTES {
                other
            } else {
                Value::String(cut(text, MAX_MESSAGE_BYTES))
            }
        }
    }
}

/// `value`'s `Debug` as a JSON string, cut to [`MAX_MESSAGE_BYTES`] while it is written.
fn bounded_debug(value: &dyn fmt::Debug) -> Value {
    Value::from(format!("{:?}", Bounded::new(value, MAX_MESSAGE_BYTES)))
}

/// zap's lower-case level names; `tracing`'s TRACE is below zap's debug, so it is `debug` too.
fn zap_level(level: Level) -> &'static str {
    match level {
        Level::TRACE | Level::DEBUG => "debug",
        Level::INFO => "info",
        Level::WARN => "warn",
        Level::ERROR => "error",
    }
}

/// `ts` as zap's time encoder of that name writes it (UTC, as in a container).
fn encode_time(encoding: TimeEncoding, now: Timestamp) -> Value {
    let seconds = now.as_second();
    let nanos = now.subsec_nanosecond();
    match encoding {
        TimeEncoding::Epoch => Value::from(seconds as f64 + f64::from(nanos) / 1e9),
        TimeEncoding::Millis => Value::from(now.as_millisecond() as f64 + f64::from(nanos % 1_000_000) / 1e6),
        TimeEncoding::Nanos => Value::from(now.as_nanosecond() as i64),
        TimeEncoding::Iso8601 => Value::from(format!(
            "{}.{:03}Z",
            now.strftime("%Y-%m-%dT%H:%M:%S"),
            nanos / 1_000_000
        )),
        TimeEncoding::Rfc3339 => Value::from(now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()),
        // jiff prints the shortest exact fraction, like Go's RFC3339Nano.
        TimeEncoding::Rfc3339Nano => Value::from(now.to_string()),
    }
}

/// The event's message and fields, as JSON values.
#[derive(Default)]
struct EventFields {
    message: Option<String>,
    fields: Vec<(String, Value)>,
}

impl EventFields {
    fn record(&mut self, field: &Field, value: Value) {
        if field.name() == "message" && self.message.is_none() {
            self.message = Some(match value {
                Value::String(text) => text,
                other => other.to_string(),
            });
        } else {
            self.fields.push((field.name().to_owned(), value));
        }
    }
}

impl Visit for EventFields {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.record(field, Value::from(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.record(field, Value::from(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.record(field, Value::from(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.record(field, Value::from(value));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.record(field, bounded_debug(&format_args!("{value}")));
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.record(field, bounded_debug(&format_args!("{value}")));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.record(field, bounded_debug(value));
    }
}

#[cfg(test)]
mod tests {
    use tracing::{info, info_span, warn};

    use super::{super::captured::Captured, *};

    /// Lines logged by `body`: the raw text and its (key, value) pairs.
    fn lines_of(time: TimeEncoding, body: impl FnOnce()) -> Vec<(String, Vec<(String, Value)>)> {
        let captured = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(captured.clone())
            .fmt_fields(JsonFields::new())
            .event_format(ZapJson::new(time))
            .finish();
        tracing::subscriber::with_default(subscriber, body);
        captured
            .text()
            .lines()
            .map(|line| {
                // serde_json keeps the last of duplicate keys; count them from the raw pairs.
                let object: serde_json::Map<String, Value> = serde_json::from_str(line).expect("JSON");
                let keys = line.matches("\":").count();
                assert_eq!(object.len(), keys, "duplicate keys in {line}");
                (line.to_owned(), object.into_iter().collect())
            })
            .collect()
    }

    fn get<'a>(line: &'a [(String, Value)], key: &str) -> Option<&'a Value> {
        line.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    #[test]
    fn a_line_should_carry_zaps_keys_the_span_fields_and_its_own_fields_once_each() {
        let lines = lines_of(TimeEncoding::Rfc3339, || {
            let span = info_span!(
                "reconcile",
                controller = "ferrvaultsecret",
                namespace = "apps",
                name = "db"
            );
            let _entered = span.enter();
            let inner = info_span!("step", name = "db-inner");
            let _inner = inner.enter();
            info!(
                target = "db-secret",
                keys = 3,
                content_changed = true,
                "synced secret"
            );
            warn!(error = "boom", msg = "clash", "sync failed");
        });
        let (raw, synced) = &lines[0];
        let positions: Vec<usize> = ["ts", "level", "logger", "msg", "controller"]
            .iter()
            .map(|key| raw.find(&format!("\"{key}\":")).expect(key))
            .collect();
        assert!(positions.is_sorted(), "zap's key order: {raw}");
        assert_eq!(get(synced, "level"), Some(&Value::from("info")));
        assert_eq!(get(synced, "msg"), Some(&Value::from("synced secret")));
        assert_eq!(get(synced, "controller"), Some(&Value::from("ferrvaultsecret")));
        assert_eq!(
            get(synced, "name"),
            Some(&Value::from("db-inner")),
            "the inner span wins"
        );
        assert_eq!(get(synced, "target"), Some(&Value::from("db-secret")));
        assert_eq!(get(synced, "keys"), Some(&Value::from(3)));
        assert!(
            get(synced, "logger")
                .and_then(Value::as_str)
                .is_some_and(|l| l.contains("zap_json")),
            "{synced:?}"
        );
        let failed = &lines[1].1;
        assert_eq!(get(failed, "level"), Some(&Value::from("warn")));
        assert_eq!(get(failed, "msg"), Some(&Value::from("sync failed")));
        assert_eq!(get(failed, "error"), Some(&Value::from("boom")));
        assert_eq!(get(failed, "field.msg"), Some(&Value::from("clash")));
    }

    #[test]
    fn a_message_or_field_over_1_kib_should_be_cut_with_a_marker() {
        let huge = "h".repeat(300_000);
        let lines = lines_of(TimeEncoding::Rfc3339, || {
            let span = info_span!("reconcile", name = huge.as_str());
            let _entered = span.enter();
            let list: Vec<&str> = vec!["k"; 100_000];
            warn!(error = huge.as_str(), keys = ?list, short = "kept", "{huge}");
        });
        let (raw, line) = &lines[0];
        assert!(raw.len() < 8 * 1024, "one line of {} bytes", raw.len());
        for key in ["msg", "name", "error"] {
            let value = get(line, key).and_then(Value::as_str).expect(key);
            assert!(value.len() <= MAX_MESSAGE_BYTES, "{key}: {} bytes", value.len());
            assert!(value.starts_with("hhh"), "{key}: {value}");
            assert!(value.ends_with("… [cut: 300000 bytes in all]"), "{key}: {value}");
        }
        let keys = get(line, "keys").and_then(Value::as_str).expect("keys");
        assert!(
            keys.starts_with(r#"["k", "k""#) && keys.ends_with("bytes in all]"),
            "{keys}"
        );
        assert_eq!(get(line, "short"), Some(&Value::from("kept")));
    }

    #[test]
    fn every_time_encoding_should_write_ts_as_zap_does() {
        let at: Timestamp = "2026-03-04T05:06:07.123456789Z".parse().expect("timestamp");
        for (encoding, expected) in [
            (TimeEncoding::Rfc3339, Value::from("2026-03-04T05:06:07Z")),
            (
                TimeEncoding::Rfc3339Nano,
                Value::from("2026-03-04T05:06:07.123456789Z"),
            ),
            (TimeEncoding::Iso8601, Value::from("2026-03-04T05:06:07.123Z")),
            (TimeEncoding::Nanos, Value::from(1_772_600_767_123_456_789_i64)),
        ] {
            assert_eq!(encode_time(encoding, at), expected, "{encoding:?}");
        }
        let epoch = encode_time(TimeEncoding::Epoch, at).as_f64().expect("a number");
        assert!((epoch - 1_772_600_767.123_456_8).abs() < 1e-6, "{epoch}");
        let millis = encode_time(TimeEncoding::Millis, at).as_f64().expect("a number");
        assert!((millis - 1_772_600_767_123.456_8).abs() < 1e-3, "{millis}");
        let lines = lines_of(TimeEncoding::Epoch, || info!("x"));
        assert!(
            get(&lines[0].1, "ts").is_some_and(Value::is_f64),
            "{:?}",
            lines[0]
        );
    }
}
