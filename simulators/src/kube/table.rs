//! `meta.k8s.io/v1` `Table` responses (what `kubectl get` asks for): a Name column,
//! then either the CRD's `additionalPrinterColumns` or the default Age column, as the
//! real server's table convertors do (built-in kinds with their own columns: see
//! [`super::printers`]).
//!
//! Printer-column JSONPaths support the subset CRDs use: `.a.b`, `[n]`, `[*]` and
//! filters `[?(@.field=="value")]`. `date` columns render as a human age (`5m`), other
//! types as the first value found; a path that finds nothing gives an empty cell.

use serde_json::{Value, json};

/// One additional printer column of a CRD version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrinterColumn {
    /// Header.
    pub name: String,
    /// OpenAPI type (`string`, `integer`, `date`, …).
    pub type_: String,
    /// JSONPath into the object.
    pub json_path: String,
    /// 0 shows by default, higher only with `-o wide`.
    pub priority: i64,
    /// Column description.
    pub description: String,
}

impl PrinterColumn {
    /// Columns declared by a CRD version (`additionalPrinterColumns`).
    pub fn from_crd_version(version: &Value) -> Vec<PrinterColumn> {
        let Some(cols) = version.get("additionalPrinterColumns").and_then(Value::as_array) else {
            return Vec::new();
        };
        cols.iter()
            .filter_map(|c| {
                Some(PrinterColumn {
                    name: c.get("name")?.as_str()?.to_string(),
                    type_: c
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or("string")
                        .to_string(),
                    json_path: c.get("jsonPath")?.as_str()?.to_string(),
                    priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
                    description: c
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                })
            })
            .collect()
    }
}

/// The Table for `items` (`rows[].object` is built by `embed`).
pub fn table(
    items: &[Value],
    columns: &[PrinterColumn],
    list_meta: &Value,
    embed: impl Fn(&Value) -> Value,
) -> Value {
    let age = PrinterColumn {
        name: "Age".into(),
        type_: "date".into(),
        json_path: ".metadata.creationTimestamp".into(),
        priority: 0,
        description:
            "CreationTimestamp is a timestamp representing the server time when this object was created."
                .into(),
    };
    let columns: Vec<&PrinterColumn> = if columns.is_empty() {
        vec![&age]
    } else {
        columns.iter().collect()
    };
    let mut definitions = vec![json!({
        "name": "Name", "type": "string", "format": "name", "priority": 0,
        "description": "Name must be unique within a namespace.",
    })];
    definitions.extend(columns.iter().map(|c| {
        json!({ "name": c.name, "type": c.type_, "format": "", "description": c.description, "priority": c.priority })
    }));
    let cells = |o: &Value| {
        let mut cells = vec![o["metadata"]["name"].clone()];
        cells.extend(columns.iter().map(|c| cell(o, c)));
        cells
    };
    table_of_rows(items, definitions, cells, list_meta, embed)
}

/// The Table for `items` given its column definitions and each row's cells.
pub fn table_of_rows(
    items: &[Value],
    definitions: Vec<Value>,
    cells: impl Fn(&Value) -> Vec<Value>,
    list_meta: &Value,
    embed: impl Fn(&Value) -> Value,
) -> Value {
    let rows: Vec<Value> = items
        .iter()
        .map(|o| json!({ "cells": cells(o), "object": embed(o) }))
        .collect();
    json!({ "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta, "columnDefinitions": definitions, "rows": rows })
}

fn cell(obj: &Value, column: &PrinterColumn) -> Value {
    let Some(found) = json_path(obj, &column.json_path).into_iter().next() else {
        return Value::Null;
    };
    match (column.type_.as_str(), found) {
        ("date", Value::String(s)) => json!(human_age(s)),
        ("string", Value::String(s)) => json!(s),
        ("string", other) => json!(other.to_string()),
        (_, other) => other.clone(),
    }
}

/// Evaluates the JSONPath subset described in the module docs.
pub fn json_path<'v>(root: &'v Value, path: &str) -> Vec<&'v Value> {
    let mut current = vec![root];
    let mut rest = path
        .trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .trim_start_matches('$');
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let key = &after[..end];
            current = current.into_iter().filter_map(|v| v.get(key)).collect();
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let Some(end) = after.find(']') else {
                return Vec::new();
            };
            let selector = &after[..end];
            current = current.into_iter().flat_map(|v| select(v, selector)).collect();
            rest = &after[end + 1..];
        } else {
            return Vec::new();
        }
    }
    current
}

fn select<'v>(v: &'v Value, selector: &str) -> Vec<&'v Value> {
    let Some(items) = v.as_array() else {
        return Vec::new();
    };
    if selector == "*" {
        return items.iter().collect();
    }
    if let Ok(i) = selector.parse::<usize>() {
        return items.get(i).into_iter().collect();
    }
    let Some(filter) = selector.strip_prefix("?(@.").and_then(|f| f.strip_suffix(')')) else {
        return Vec::new();
    };
    let Some((field, wanted)) = filter.split_once("==") else {
        return Vec::new();
    };
    let wanted = wanted.trim().trim_matches(|c| c == '"' || c == '\'');
    items
        .iter()
        .filter(|item| {
            json_path(item, &format!(".{}", field.trim()))
                .first()
                .and_then(|f| f.as_str())
                == Some(wanted)
        })
        .collect()
}

/// The age of a timestamp as the real server prints it (`duration.HumanDuration`:
/// `45s`, `3m20s`, `15m`, `5h4m`, `20h`, `3d4h`, `30d`, `2y10d`).
pub fn human_age(created: &str) -> String {
    let Ok(then) = created.parse::<jiff::Timestamp>() else {
        return "<invalid>".into();
    };
    human_duration(jiff::Timestamp::now().as_second() - then.as_second())
}

/// `duration.HumanDuration` of a number of seconds.
pub fn human_duration(seconds: i64) -> String {
    let with = |major: i64, unit: &str, minor: i64, minor_unit: &str| {
        if minor == 0 {
            format!("{major}{unit}")
        } else {
            format!("{major}{unit}{minor}{minor_unit}")
        }
    };
    let (minutes, hours) = (seconds / 60, seconds / 3600);
    let (days, years) = (hours / 24, hours / 24 / 365);
    match seconds {
        s if s < -1 => "<invalid>".into(),
        s if s < 0 => "0s".into(),
        s if s < 120 => format!("{s}s"),
        _ if minutes < 10 => with(minutes, "m", seconds % 60, "s"),
        _ if minutes < 180 => format!("{minutes}m"),
        _ if hours < 8 => with(hours, "h", minutes % 60, "m"),
        _ if hours < 48 => format!("{hours}h"),
        _ if hours < 24 * 8 => with(days, "d", hours % 24, "h"),
        _ if hours < 24 * 365 * 2 => format!("{days}d"),
        _ if hours < 24 * 365 * 8 => with(years, "y", days % 365, "d"),
        _ => format!("{years}y"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_path_should_follow_fields_indexes_and_filters() {
        let o = json!({"spec": {"vault": "v1"}, "status": {"conditions": [
            {"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True", "reason": "Ok"}]}});
        assert_eq!(json_path(&o, ".spec.vault"), [&json!("v1")]);
        assert_eq!(
            json_path(&o, r#".status.conditions[?(@.type=="Ready")].reason"#),
            [&json!("Ok")]
        );
        assert_eq!(json_path(&o, ".status.conditions[0].type"), [&json!("Synced")]);
        assert_eq!(json_path(&o, ".status.conditions[*].type").len(), 2);
        assert!(json_path(&o, ".spec.missing").is_empty());
    }

    #[test]
    fn human_duration_should_print_like_kubectl() {
        let cases = [
            (45, "45s"),
            (200, "3m20s"),
            (600, "10m"),
            (5 * 3600 + 240, "5h4m"),
            (20 * 3600, "20h"),
            (3 * 86_400 + 4 * 3600, "3d4h"),
            (30 * 86_400, "30d"),
            ((2 * 365 + 10) * 86_400, "2y10d"),
        ];
        for (secs, want) in cases {
            assert_eq!(human_duration(secs), want, "{secs}s");
        }
    }

    #[test]
    fn table_should_use_printer_columns_instead_of_age() {
        let col = PrinterColumn {
            name: "Vault".into(),
            type_: "string".into(),
            json_path: ".spec.vault".into(),
            priority: 0,
            description: String::new(),
        };
        let t = table(
            &[json!({"metadata": {"name": "a"}, "spec": {"vault": "v"}})],
            &[col],
            &json!({}),
            |o| o.clone(),
        );
        assert_eq!(t["rows"][0]["cells"], json!(["a", "v"]));
        assert_eq!(t["columnDefinitions"][1]["name"], "Vault");
        let default = table(&[json!({"metadata": {"name": "a"}})], &[], &json!({}), |o| {
            o.clone()
        });
        assert_eq!(default["columnDefinitions"][1]["name"], "Age");
    }
}
