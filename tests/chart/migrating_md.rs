//! MIGRATING.md names only what exists: the flags in its `check:flags` block are flags of
//! `run --help`, the values in `check:values` are keys of the chart's values.yaml and cover every
//! key of the Go chart's values, and the metrics in `check:metrics` are in a real scrape (checked
//! by the migration run, [`metrics_should_be_scraped`]).

use std::process::Command;

use serde_json::Value;

use crate::{migration::GO_VALUES, process_support::binary, promql::Series, render, tools};

/// The backticked names in the first column of the table in MIGRATING.md's
/// `<!-- check:{block} -->` block.
fn migrating_names(block: &str) -> Vec<String> {
    let text = std::fs::read_to_string(tools::repo_root().join("MIGRATING.md")).expect("MIGRATING.md");
    let start = format!("<!-- check:{block} -->");
    let body = text
        .split_once(&start)
        .and_then(|(_, rest)| rest.split_once("<!-- /check -->"))
        .unwrap_or_else(|| panic!("MIGRATING.md has no {start} block"))
        .0;
    let names: Vec<String> = body
        .lines()
        .filter_map(|row| row.strip_prefix('|')?.split('|').next())
        .flat_map(|cell| {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(!names.is_empty(), "the {block} block names nothing");
    names
}

/// Leaf key paths of a values document (`a.b.c`).
fn key_paths(value: &Value, prefix: &str, out: &mut Vec<String>) {
    match value.as_object() {
        Some(map) if !map.is_empty() => {
            for (key, child) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                key_paths(child, &path, out);
            }
        }
        _ => out.push(prefix.to_owned()),
    }
}

#[test]
fn migrating_md_should_name_only_flags_and_values_that_exist_and_map_every_go_value() {
    let help = Command::new(binary())
        .args(["run", "--help"])
        .output()
        .expect("run --help");
    let help = String::from_utf8(help.stdout).expect("UTF-8 help");
    for flag in migrating_names("flags") {
        assert!(
            help.contains(&format!("{flag} "))
                || help.contains(&format!("{flag}[="))
                || help.contains(&format!("{flag} <")),
            "MIGRATING.md names {flag}, run --help does not list it:\n{help}"
        );
    }
    let ours: Value = serde_norway::from_str(
        &std::fs::read_to_string(tools::repo_root().join(render::CHART).join("values.yaml"))
            .expect("values.yaml"),
    )
    .expect("values.yaml parses");
    let documented = migrating_names("values");
    for key in &documented {
        let pointer = format!("/{}", key.replace('.', "/"));
        assert!(
            ours.pointer(&pointer).is_some(),
            "MIGRATING.md names {key}, values.yaml has no such key"
        );
    }
    let go: Value = serde_norway::from_str(
        &std::fs::read_to_string(tools::repo_root().join(GO_VALUES)).expect("the Go values"),
    )
    .expect("the Go values parse");
    let mut go_keys = Vec::new();
    key_paths(&go, "", &mut go_keys);
    for key in go_keys {
        assert!(
            documented
                .iter()
                .any(|name| key == *name || key.starts_with(&format!("{name}."))),
            "MIGRATING.md does not say what happens to the Go chart's {key}"
        );
    }
}

/// Every metric family MIGRATING.md promises is in the scrape of the Go-args run.
pub fn metrics_should_be_scraped(series: &[Series]) {
    for family in migrating_names("metrics") {
        let found = series.iter().any(|s| {
            let name = s.labels.get("__name__").map_or("", String::as_str);
            name == family
                || ["_bucket", "_count", "_sum"]
                    .iter()
                    .any(|suffix| name == format!("{family}{suffix}"))
        });
        assert!(
            found,
            "MIGRATING.md promises {family}; the scrape does not have it"
        );
    }
}
