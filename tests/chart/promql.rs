//! The PromQL of alerts and dashboards read as Prometheus reads it (`promql-parser`), and a
//! `/metrics` scrape as Prometheus stores it behind a ServiceMonitor, so a test can hold every
//! query to a real scrape: each selector must match a series, each `by (…)` label must be on it.

use std::collections::BTreeMap;

use promql_parser::{
    label::Matcher,
    parser::{self, Expr, LabelModifier},
};

/// One vector selector of a query, with the labels the aggregations around it group by.
#[derive(Debug)]
pub struct Selector {
    /// The query it comes from (for messages).
    pub query: String,
    /// Its text, as written.
    pub text: String,
    /// Its label matchers, the metric name (`__name__`) included.
    pub matchers: Vec<Matcher>,
    /// Labels an enclosing `by (…)` groups by: matching series must carry them.
    pub grouped_by: Vec<String>,
}

/// Every selector of `query`.
///
/// # Panics
/// When the query does not parse, naming it.
pub fn selectors(query: &str) -> Vec<Selector> {
    let expr = parser::parse(query).unwrap_or_else(|error| panic!("{query:?} does not parse: {error}"));
    let mut found = Vec::new();
    walk(&expr, &[], query, &mut found);
    found
}

fn walk(expr: &Expr, grouped_by: &[String], query: &str, found: &mut Vec<Selector>) {
    match expr {
        Expr::Aggregate(aggregate) => {
            let mut grouping = grouped_by.to_vec();
            if let Some(LabelModifier::Include(labels)) = &aggregate.modifier {
                grouping.extend(labels.labels.iter().cloned());
            }
            walk(&aggregate.expr, &grouping, query, found);
        }
        Expr::Unary(unary) => walk(&unary.expr, grouped_by, query, found),
        Expr::Binary(binary) => {
            walk(&binary.lhs, grouped_by, query, found);
            walk(&binary.rhs, grouped_by, query, found);
        }
        Expr::Paren(paren) => walk(&paren.expr, grouped_by, query, found),
        Expr::Subquery(subquery) => walk(&subquery.expr, grouped_by, query, found),
        Expr::VectorSelector(selector) => found.push(selector_of(selector, grouped_by, query)),
        Expr::MatrixSelector(matrix) => found.push(selector_of(&matrix.vs, grouped_by, query)),
        Expr::Call(call) => {
            for arg in &call.args.args {
                walk(arg, grouped_by, query, found);
            }
        }
        Expr::NumberLiteral(_) | Expr::StringLiteral(_) | Expr::Extension(_) => {}
    }
}

fn selector_of(selector: &parser::VectorSelector, grouped_by: &[String], query: &str) -> Selector {
    let mut matchers = selector.matchers.matchers.clone();
    if let Some(name) = &selector.name {
        matchers.push(Matcher::new(
            promql_parser::label::MatchOp::Equal,
            "__name__",
            name,
        ));
    }
    Selector {
        query: query.to_owned(),
        text: selector.to_string(),
        matchers,
        grouped_by: grouped_by.to_vec(),
    }
}

/// One sample of a scrape: its labels, the metric name as `__name__`, and its value.
#[derive(Debug, Clone)]
pub struct Series {
    /// Labels, `__name__` included.
    pub labels: BTreeMap<String, String>,
    /// The sample value.
    pub value: f64,
}

impl Series {
    fn label(&self, name: &str) -> &str {
        self.labels.get(name).map_or("", String::as_str)
    }

    /// Whether every matcher matches (an absent label reads as empty, as in Prometheus).
    pub fn matches(&self, matchers: &[Matcher]) -> bool {
        matchers.iter().all(|m| m.is_match(self.label(&m.name)))
    }

    /// `name{a="b",…}` as promtool's input series syntax.
    pub fn promtool_selector(&self) -> String {
        let labels: Vec<String> = self
            .labels
            .iter()
            .filter(|(name, value)| *name != "__name__" && !value.is_empty())
            .map(|(name, value)| format!("{name}={}", serde_json::Value::from(value.as_str())))
            .collect();
        format!("{}{{{}}}", self.label("__name__"), labels.join(","))
    }
}

/// The samples of a classic text-format scrape, each given the `target` labels a Prometheus
/// scrape adds (a label the metric already has is kept as `exported_<label>`, as with
/// `honorLabels: false`, the ServiceMonitor default).
pub fn scraped(text: &str, target: &[(&str, &str)]) -> Vec<Series> {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let mut series = parse_sample(line).unwrap_or_else(|| panic!("not a sample line: {line}"));
            for (name, value) in target {
                if let Some(own) = series.labels.remove(*name) {
                    series.labels.insert(format!("exported_{name}"), own);
                }
                series.labels.insert((*name).to_owned(), (*value).to_owned());
            }
            series
        })
        .collect()
}

/// `name{a="b",c="d"} value` (label values may hold escaped quotes and backslashes).
fn parse_sample(line: &str) -> Option<Series> {
    let mut labels = BTreeMap::new();
    let (name, rest) = match line.find('{') {
        Some(open) => {
            let name = &line[..open];
            let mut chars = line[open + 1..].char_indices();
            let mut key = String::new();
            let close = loop {
                let (index, c) = chars.next()?;
                match c {
                    '}' => break open + 1 + index,
                    ',' | ' ' => {}
                    '=' => {
                        chars.next().filter(|(_, quote)| *quote == '"')?;
                        let mut value = String::new();
                        loop {
                            match chars.next()?.1 {
                                '\\' => value.push(match chars.next()?.1 {
                                    'n' => '\n',
                                    other => other,
                                }),
                                '"' => break,
                                other => value.push(other),
                            }
                        }
                        labels.insert(std::mem::take(&mut key), value);
                    }
                    other => key.push(other),
                }
            };
            (name, &line[close + 1..])
        }
        None => line.split_once(' ')?,
    };
    labels.insert("__name__".to_owned(), name.trim().to_owned());
    let value = rest.split_whitespace().next()?;
    let value = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        other => other.parse().ok()?,
    };
    Some(Series { labels, value })
}

/// Why `selector` finds nothing in `series`, or `None` when it matches a series carrying its
/// grouping labels.
pub fn unmatched(selector: &Selector, series: &[Series]) -> Option<String> {
    let matching: Vec<&Series> = series.iter().filter(|s| s.matches(&selector.matchers)).collect();
    if matching.is_empty() {
        let name = selector
            .matchers
            .iter()
            .find(|m| m.name == "__name__")
            .map_or("", |m| m.value.as_str());
        let same_name: Vec<String> = series
            .iter()
            .filter(|s| s.label("__name__") == name)
            .take(3)
            .map(Series::promtool_selector)
            .collect();
        return Some(format!(
            "{} in {:?} matches no scraped series (series of that name: {same_name:?})",
            selector.text, selector.query
        ));
    }
    let grouped = matching
        .iter()
        .any(|s| selector.grouped_by.iter().all(|label| !s.label(label).is_empty()));
    (!grouped).then(|| {
        format!(
            "{} in {:?}: no matching series carries every label of by ({})",
            selector.text,
            selector.query,
            selector.grouped_by.join(", ")
        )
    })
}

#[test]
fn selectors_should_carry_their_matchers_and_grouping_and_samples_should_parse() {
    let found = selectors(r#"sum by (namespace) (increase(errors_total{reason="X"}[15m])) > 0 and up"#);
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].grouped_by, ["namespace"]);
    assert!(found[1].grouped_by.is_empty());
    let series = scraped(
        "# HELP x\nerrors_total{namespace=\"apps\",reason=\"X\",msg=\"a \\\"q\\\"\"} 0\nup 1\n",
        &[("namespace", "ferrvault-system"), ("job", "fv-metrics")],
    );
    assert_eq!(series[0].label("exported_namespace"), "apps");
    assert_eq!(series[0].label("namespace"), "ferrvault-system");
    assert_eq!(series[0].label("msg"), "a \"q\"");
    assert_eq!(unmatched(&found[0], &series), None);
    let missing = &selectors(r#"sum by (pod) (errors_total{reason="Y"})"#)[0];
    assert!(unmatched(missing, &series).is_some());
    let ungrouped = &selectors("sum by (pod) (errors_total)")[0];
    assert!(unmatched(ungrouped, &series).is_some_and(|why| why.contains("by (pod)")));
}
