//! The two text formats of `/metrics`. `prometheus-client` writes OpenMetrics, whose counter
//! families are named without `_total` (`# TYPE foo counter`, samples `foo_total`). The classic
//! Prometheus text format (0.0.4) — what `promtool check metrics`, older scrapers and people
//! with `curl` read — names the family like its samples. [`to_prometheus_text`] converts, so
//! `/metrics` can serve each client the format its `Accept` header asks for.
//!
//! # Guarantees
//! - Sample lines are kept byte for byte (minus exemplars, which 0.0.4 cannot carry); only
//!   metadata lines are renamed, and `# UNIT` / `# EOF` (OpenMetrics only) are dropped.
//! - Counter `_created` samples are dropped: 0.0.4 has no place for them.

use std::collections::HashSet;

/// The content type of the classic Prometheus text format.
pub const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Whether a client's `Accept` header asks for OpenMetrics (as Prometheus itself does).
pub fn wants_openmetrics(accept: Option<&str>) -> bool {
    accept.is_some_and(|accept| accept.contains("application/openmetrics-text"))
}

/// Converts an OpenMetrics text exposition to the Prometheus 0.0.4 text format.
pub fn to_prometheus_text(openmetrics: &str) -> String {
    let mut renamed: HashSet<&str> = HashSet::new();
    let mut counters: HashSet<&str> = HashSet::new();
    for line in openmetrics.lines() {
        if let Some((name, kind)) = line.strip_prefix("# TYPE ").and_then(|rest| rest.split_once(' ')) {
            match kind {
                "counter" => {
                    counters.insert(name);
                    renamed.insert(name);
                }
                "info" => {
                    renamed.insert(name);
                }
                _ => {}
            }
        }
    }
    let mut out = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let converted = match metadata(line) {
            Some((keyword, name, rest)) if renamed.contains(name) => {
                let suffix = if counters.contains(name) {
                    "_total"
                } else {
                    "_info"
                };
                let rest = match (keyword, rest) {
                    ("TYPE", "info") => "gauge",
                    (_, rest) => rest,
                };
                format!("# {keyword} {name}{suffix} {rest}")
            }
            Some(("TYPE", name, "unknown")) => format!("# TYPE {name} untyped"),
            Some(_) => line.to_owned(),
            None if is_created_of(line, &counters) => continue,
            None => line.split(" # {").next().unwrap_or(line).to_owned(),
        };
        out.push_str(&converted);
        out.push('\n');
    }
    out
}

/// `# HELP name rest` / `# TYPE name rest` → (keyword, name, rest).
fn metadata(line: &str) -> Option<(&str, &str, &str)> {
    let rest = line.strip_prefix("# ")?;
    let (keyword, rest) = rest.split_once(' ')?;
    if keyword != "HELP" && keyword != "TYPE" {
        return None;
    }
    let (name, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    Some((keyword, name, rest))
}

fn is_created_of(line: &str, counters: &HashSet<&str>) -> bool {
    let name = line.split(['{', ' ']).next().unwrap_or_default();
    name.strip_suffix("_created")
        .is_some_and(|family| counters.contains(family))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_families_should_take_their_samples_name_and_openmetrics_only_lines_go() {
        let openmetrics = "# HELP requests Requests made.\n# TYPE requests counter\n# UNIT requests \
                           requests\nrequests_total{result=\"ok\"} 3\nrequests_created 1.7e9\n# HELP \
                           depth Keys waiting.\n# TYPE depth gauge\ndepth 0\n# EOF\n";
        assert_eq!(
            to_prometheus_text(openmetrics),
            "# HELP requests_total Requests made.\n# TYPE requests_total counter\n\
             requests_total{result=\"ok\"} 3\n# HELP depth Keys waiting.\n# TYPE depth gauge\ndepth 0\n"
        );
    }

    #[test]
    fn info_and_unknown_types_should_map_to_their_classic_equivalents_and_exemplars_go() {
        let openmetrics = "# HELP build Build.\n# TYPE build info\nbuild_info{v=\"1\"} 1\n# TYPE x \
                           unknown\nx 2\n# TYPE c counter\nc_total 1 # {trace=\"a\"} 1.0\n";
        assert_eq!(
            to_prometheus_text(openmetrics),
            "# HELP build_info Build.\n# TYPE build_info gauge\nbuild_info{v=\"1\"} 1\n# TYPE x \
             untyped\nx 2\n# TYPE c_total counter\nc_total 1\n"
        );
    }

    #[test]
    fn only_an_openmetrics_accept_header_should_get_openmetrics() {
        assert!(wants_openmetrics(Some(
            "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
        )));
        assert!(!wants_openmetrics(Some("*/*")));
        assert!(!wants_openmetrics(None));
    }
}
