//! The leak scan every scenario ends with: everything collected, searched for every secret value
//! and token the scenario used.

/// Collected output, each piece labelled with where it came from.
#[derive(Default)]
pub struct Evidence {
    pieces: Vec<(String, String)>,
}

impl Evidence {
    /// Adds `text` from `source` (a process log, a scrape, the Events, the statuses …).
    pub fn add(&mut self, source: impl Into<String>, text: impl Into<String>) {
        self.pieces.push((source.into(), text.into()));
    }

    /// Appends everything `other` collected.
    pub fn extend(&mut self, other: Evidence) {
        self.pieces.extend(other.pieces);
    }

    /// Total bytes collected.
    pub fn bytes(&self) -> usize {
        self.pieces.iter().map(|(_, text)| text.len()).sum()
    }

    /// The sources, for asserting that the scan covered what it should.
    pub fn sources(&self) -> Vec<&str> {
        self.pieces.iter().map(|(source, _)| source.as_str()).collect()
    }

    /// Where each needle occurs: `(source, needle prefix)` pairs; empty when nothing leaked.
    pub fn find(&self, needles: &[&str]) -> Vec<(String, String)> {
        let mut found = Vec::new();
        for (source, text) in &self.pieces {
            for needle in needles.iter().filter(|n| !n.is_empty()) {
                if text.contains(needle) {
                    // Never print the value itself: a prefix names it well enough.
                    let prefix: String = needle.chars().take(8).collect();
                    found.push((source.clone(), format!("{prefix}…")));
                }
            }
        }
        found
    }

    /// Fails naming the source and a prefix of each value found.
    ///
    /// # Panics
    /// When any needle occurs anywhere, or when nothing was collected (a scan of nothing proves
    /// nothing).
    pub fn assert_no_leaks(&self, needles: &[&str]) {
        assert!(self.bytes() > 0, "the leak scan was given nothing to scan");
        let found = self.find(needles);
        assert!(
            found.is_empty(),
            "secret values or tokens leaked (source, value prefix): {found:?}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scanner_should_find_a_planted_value_and_name_its_source_without_printing_it() {
        let mut evidence = Evidence::default();
        evidence.add(
            "operator-0.log",
            "line one\n{\"msg\":\"token sk_live_PLANTED_value\"}",
        );
        evidence.add("metrics", "clean");
        let found = evidence.find(&["sk_live_PLANTED_value", "absent"]);
        assert_eq!(found, [("operator-0.log".to_owned(), "sk_live_…".to_owned())]);
        evidence.assert_no_leaks(&["absent"]);
    }
}
