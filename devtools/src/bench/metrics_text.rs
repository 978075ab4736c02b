//! The few Prometheus samples the benchmarks read from the operator's `/metrics` (reconciles,
//! last-sync stamps), parsed from the text exposition format. Only what the benchmarks need:
//! `name{label="value",…} number` lines; comments and other families are skipped.

use std::{collections::BTreeMap, net::SocketAddr, time::Duration};

/// One sample line.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Label name → value.
    pub labels: BTreeMap<String, String>,
    /// The value.
    pub value: f64,
}

/// The samples of series `name` in `text`.
pub fn samples(text: &str, name: &str) -> Vec<Sample> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let rest = line.strip_prefix(name)?;
            let (labels, value) = match rest.strip_prefix('{') {
                Some(inner) => {
                    let end = inner.rfind('}')?;
                    (parse_labels(&inner[..end])?, &inner[end + 1..])
                }
                // Another series whose name starts with `name` (`foo_total` for `foo`) is not it.
                None if rest.starts_with(' ') => (BTreeMap::new(), rest),
                None => return None,
            };
            let value = value.split_whitespace().next()?.parse().ok()?;
            Some(Sample { labels, value })
        })
        .collect()
}

/// The sum of the samples of `name` whose labels include every pair of `filter`.
pub fn sum(text: &str, name: &str, filter: &[(&str, &str)]) -> f64 {
    samples(text, name)
        .iter()
        .filter(|s| {
            filter
                .iter()
                .all(|(k, v)| s.labels.get(*k).is_some_and(|l| l == v))
        })
        .map(|s| s.value)
        .sum()
}

fn parse_labels(text: &str) -> Option<BTreeMap<String, String>> {
    let mut labels = BTreeMap::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let (name, after) = rest.split_once("=\"")?;
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next()? {
                (_, '\\') => value.push(chars.next()?.1),
                (i, '"') => break i,
                (_, c) => value.push(c),
            }
        };
        labels.insert(name.trim().to_owned(), value);
        rest = after[end + 1..].trim_start_matches(',').trim();
    }
    Some(labels)
}

/// `GET http://<addr>/metrics`; `None` when it does not answer 200 within 5 s.
pub async fn scrape(addr: SocketAddr) -> Option<String> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .ok()?;
    let response = client.get(format!("http://{addr}/metrics")).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.text().await.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"# HELP controller_runtime_reconcile Reconciles
# TYPE controller_runtime_reconcile counter
controller_runtime_reconcile_total{controller="ferrvaultsecret",result="success"} 10
controller_runtime_reconcile_total{controller="ferrvaultsecret",result="requeue_after"} 5
controller_runtime_reconcile_total{controller="ferrvaultconnection",result="success"} 2
ferrvault_secret_last_sync_timestamp_seconds{namespace="a",name="q\"x,y"} 1.5e9
workqueue_depth 3
workqueue_depth_extra 4
"#;

    #[test]
    fn samples_should_parse_labels_and_values() {
        let stamps = samples(TEXT, "ferrvault_secret_last_sync_timestamp_seconds");
        assert_eq!(stamps.len(), 1);
        assert_eq!(stamps[0].labels["name"], "q\"x,y");
        assert_eq!(stamps[0].labels["namespace"], "a");
        assert_eq!(stamps[0].value, 1.5e9);
        assert_eq!(samples(TEXT, "workqueue_depth").len(), 1);
    }

    #[test]
    fn sums_should_filter_on_labels() {
        let name = "controller_runtime_reconcile_total";
        assert_eq!(sum(TEXT, name, &[("controller", "ferrvaultsecret")]), 15.0);
        assert_eq!(sum(TEXT, name, &[]), 17.0);
        assert_eq!(sum(TEXT, "absent", &[]), 0.0);
    }
}
