//! The two text formats of `/metrics`. `prometheus-client` writes OpenMetrics, whose counter
//! families are named without `_total` (`# TYPE foo counter`, samples `foo_total`). The classic
//! Prometheus text format (0.0.4) — what `promtool check metrics`, older scrapers and people
//! with `curl` read — names the family like its samples. [`PrometheusText`] converts as the
//! encoder writes, so `/metrics` can serve each client the format its `Accept` header asks for
//! without holding a second copy of an exposition that grows with the number of objects.
//!
//! # Guarantees
//! - Sample lines are kept byte for byte (minus exemplars, which 0.0.4 cannot carry); only
//!   metadata lines are renamed, and `# UNIT` / `# EOF` (OpenMetrics only) are dropped.
//! - Counter `_created` samples are dropped: 0.0.4 has no place for them.
//! - It relies on OpenMetrics' order: a family's `# HELP` comes just before its `# TYPE`,
//!   which comes before its samples.
//! - [`encode`] starts its buffer at the capacity it is given (the last body's length), so a
//!   body the size of the last one is written without the buffer doubling on the way.

use std::{collections::HashSet, fmt};

use prometheus_client::registry::Registry;

/// The OpenMetrics text format that `prometheus-client` writes (Prometheus and promtool read it).
pub const OPENMETRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The content type of the classic Prometheus text format.
pub const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The two text formats `/metrics` serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// OpenMetrics, for a client whose `Accept` header asks for it (Prometheus does).
    OpenMetrics,
    /// The classic Prometheus text format (0.0.4), for everyone else (promtool, curl).
    Text,
}

impl Format {
    /// Both formats, in [`Format::index`] order.
    pub const ALL: [Format; 2] = [Format::OpenMetrics, Format::Text];

    /// The format a client's `Accept` header asks for.
    pub fn negotiate(accept: Option<&str>) -> Format {
        if accept.is_some_and(|accept| accept.contains("application/openmetrics-text")) {
            Format::OpenMetrics
        } else {
            Format::Text
        }
    }

    /// The `Content-Type` of a body in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => OPENMETRICS_CONTENT_TYPE,
            Format::Text => PROMETHEUS_TEXT,
        }
    }

    /// The format's place in [`Format::ALL`] (for tables kept per format).
    pub fn index(self) -> usize {
        match self {
            Format::OpenMetrics => 0,
            Format::Text => 1,
        }
    }
}

/// Every metric of `registry` in `format`, written into a buffer of `capacity` bytes to start
/// with.
///
/// # Errors
/// The encoder's error (a metric that cannot be written).
pub fn encode(registry: &Registry, format: Format, capacity: usize) -> Result<String, fmt::Error> {
    match format {
        Format::OpenMetrics => {
            let mut body = String::with_capacity(capacity);
            prometheus_client::encoding::text::encode(&mut body, registry)?;
            Ok(body)
        }
        Format::Text => {
            let mut text = PrometheusText {
                out: String::with_capacity(capacity),
                ..PrometheusText::default()
            };
            prometheus_client::encoding::text::encode(&mut text, registry)?;
            Ok(text.finish())
        }
    }
}

/// An OpenMetrics writer whose output is the Prometheus 0.0.4 text format, converted line by
/// line as it is written.
#[derive(Default)]
pub struct PrometheusText {
    out: String,
    /// The end of the last write, up to its first newline still to come.
    partial: String,
    /// A `# HELP` line, held until the `# TYPE` line after it says whether it is renamed.
    pending_help: Option<String>,
    /// Counter families seen so far (their `_created` samples are dropped).
    counters: HashSet<String>,
}

impl fmt::Write for PrometheusText {
    fn write_str(&mut self, mut chunk: &str) -> fmt::Result {
        while let Some((line, rest)) = chunk.split_once('\n') {
            if self.partial.is_empty() {
                self.line(line);
            } else {
                let mut whole = std::mem::take(&mut self.partial);
                whole.push_str(line);
                self.line(&whole);
            }
            chunk = rest;
        }
        self.partial.push_str(chunk);
        Ok(())
    }
}

impl PrometheusText {
    /// The converted exposition.
    pub fn finish(mut self) -> String {
        if !self.partial.is_empty() {
            let last = std::mem::take(&mut self.partial);
            self.line(&last);
        }
        self.flush_help(None);
        self.out
    }

    fn line(&mut self, line: &str) {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            return;
        }
        match metadata(line) {
            Some(("HELP", ..)) => {
                self.flush_help(None);
                self.pending_help = Some(line.to_owned());
            }
            Some(("TYPE", name, kind)) => {
                let suffix = match kind {
                    "counter" => Some("_total"),
                    "info" => Some("_info"),
                    _ => None,
                };
                self.flush_help(suffix.map(|suffix| (name, suffix)));
                match (suffix, kind) {
                    (Some(suffix), "info") => self.push(&format!("# TYPE {name}{suffix} gauge")),
                    (Some(suffix), _) => {
                        self.counters.insert(name.to_owned());
                        self.push(&format!("# TYPE {name}{suffix} {kind}"));
                    }
                    (None, "unknown") => self.push(&format!("# TYPE {name} untyped")),
                    (None, _) => self.push(line),
                }
            }
            Some(_) => {
                self.flush_help(None);
                self.push(line);
            }
            None => {
                self.flush_help(None);
                if !self.is_created_of_counter(line) {
                    self.push(line.split(" # {").next().unwrap_or(line));
                }
            }
        }
    }

    /// Writes the held `# HELP` line, renamed with `suffix` when it is that family's.
    fn flush_help(&mut self, renamed: Option<(&str, &str)>) {
        let Some(help) = self.pending_help.take() else {
            return;
        };
        match (renamed, metadata(&help)) {
            (Some((name, suffix)), Some((_, help_name, rest))) if help_name == name => {
                let renamed = format!("# HELP {name}{suffix} {rest}");
                self.push(&renamed);
            }
            _ => self.push(&help),
        }
    }

    fn push(&mut self, line: &str) {
        self.out.push_str(line);
        self.out.push('\n');
    }

    fn is_created_of_counter(&self, line: &str) -> bool {
        let name = line.split(['{', ' ']).next().unwrap_or_default();
        name.strip_suffix("_created")
            .is_some_and(|family| self.counters.contains(family))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole exposition written at once.
    fn to_prometheus_text(openmetrics: &str) -> String {
        let mut text = PrometheusText::default();
        fmt::Write::write_str(&mut text, openmetrics).expect("writing to a String");
        text.finish()
    }

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
    fn the_conversion_should_not_depend_on_how_the_text_is_cut_into_writes() {
        let openmetrics = "# HELP requests Requests made.\n# TYPE requests counter\nrequests_total 3\n\
                           requests_created 1.7e9\n# HELP depth Keys.\n# TYPE depth gauge\ndepth 0\n# EOF\n";
        let whole = to_prometheus_text(openmetrics);
        for size in 1..openmetrics.len() {
            let mut text = PrometheusText::default();
            for piece in openmetrics.as_bytes().chunks(size) {
                fmt::Write::write_str(&mut text, std::str::from_utf8(piece).expect("ASCII")).unwrap();
            }
            assert_eq!(text.finish(), whole, "cut every {size} bytes");
        }
    }

    #[test]
    fn only_an_openmetrics_accept_header_should_get_openmetrics() {
        assert_eq!(
            Format::negotiate(Some(
                "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
            )),
            Format::OpenMetrics
        );
        assert_eq!(Format::negotiate(Some("*/*")), Format::Text);
        assert_eq!(Format::negotiate(None), Format::Text);
    }

    #[test]
    fn every_format_should_have_its_own_index() {
        for (index, format) in Format::ALL.into_iter().enumerate() {
            assert_eq!(format.index(), index);
        }
    }
}
