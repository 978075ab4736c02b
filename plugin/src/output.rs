//! What the plugin prints: kubectl-style tables and ages, `-o json|yaml`, and text from the
//! cluster made safe for a terminal.
//!
//! # Guarantees
//! - Every string from the cluster that a table or text output shows goes through [`printable`]:
//!   control characters (terminal escape sequences, carriage returns, newlines a tenant put in a
//!   field) are shown as `?`, and the text is cut to [`MAX_CELL`] characters. JSON and YAML
//!   output is escaped by its encoder instead.

use std::{io::Write, time::Duration};

use jiff::Timestamp;
use serde::Serialize;

use crate::{args::OutputFormat, error::PluginError};

/// The most characters of one table cell or text field.
pub const MAX_CELL: usize = 1024;

/// `text` safe to print on a terminal; see the module guarantees.
pub fn printable(text: &str) -> String {
    let mut shown: String = text
        .chars()
        .take(MAX_CELL)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if text.chars().nth(MAX_CELL).is_some() {
        shown.push('…');
    }
    shown
}

/// A table as kubectl prints it: upper-case headers, columns left-aligned and three spaces apart.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let cells: Vec<Vec<String>> = std::iter::once(headers.iter().map(|h| (*h).to_owned()).collect())
        .chain(
            rows.iter()
                .map(|row| row.iter().map(|cell| printable(cell)).collect()),
        )
        .collect();
    let widths: Vec<usize> = (0..headers.len())
        .map(|column| {
            cells
                .iter()
                .map(|row| row.get(column).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in &cells {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str(line.join("   ").trim_end());
        out.push('\n');
    }
    out
}

/// A duration as kubectl shows ages: `45s`, `5m12s`, `54m`, `3h12m`, `20h`, `3d4h`, `12d`.
pub fn human(duration: Duration) -> String {
    let seconds = duration.as_secs();
    let (minutes, hours, days) = (seconds / 60, seconds / 3600, seconds / 86_400);
    match seconds {
        0..120 => format!("{seconds}s"),
        120..600 => format!("{minutes}m{}s", seconds % 60),
        600..10_800 => format!("{minutes}m"),
        10_800..28_800 => format!("{hours}h{}m", minutes % 60),
        28_800..172_800 => format!("{hours}h"),
        172_800..691_200 => format!("{days}d{}h", hours % 24),
        _ => format!("{days}d"),
    }
}

/// `at` in RFC 3339 at the API's second precision, as kubectl shows times.
pub fn timestamp(at: Timestamp) -> String {
    Timestamp::from_second(at.as_second()).unwrap_or(at).to_string()
}

/// How far `at` is from `now`: `in 54m`, `5m ago`, `now`.
pub fn relative(at: Timestamp, now: Timestamp) -> String {
    let delta = at.duration_since(now);
    let magnitude = Duration::try_from(delta.abs()).unwrap_or(Duration::MAX);
    if magnitude < Duration::from_secs(1) {
        "now".to_owned()
    } else if delta.is_negative() {
        format!("{} ago", human(magnitude))
    } else {
        format!("in {}", human(magnitude))
    }
}

/// Writes `value` to stdout as `format` asks.
///
/// # Errors
/// The encoder or stdout failed.
pub fn emit(format: OutputFormat, value: &impl Serialize) -> Result<(), PluginError> {
    let text = match format {
        OutputFormat::Json => serde_json::to_string_pretty(value)
            .map(|text| text + "\n")
            .map_err(|e| e.to_string()),
        OutputFormat::Yaml => serde_norway::to_string(value).map_err(|e| e.to_string()),
    }
    .map_err(|e| PluginError::Object(format!("encoding the output: {e}")))?;
    print_out(&text)
}

/// Writes `text` to stdout.
///
/// # Errors
/// Stdout is closed.
pub fn print_out(text: &str) -> Result<(), PluginError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| PluginError::Object(format!("writing to stdout: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_should_neutralise_terminal_escapes_and_bound_the_text() {
        assert_eq!(printable("ok\u{1b}[2J\rx\ny"), "ok?[2J?x?y");
        let long = "a".repeat(3 * MAX_CELL);
        assert_eq!(printable(&long).chars().count(), MAX_CELL + 1);
    }

    #[test]
    fn tables_should_align_columns_as_kubectl_does() {
        let rows = vec![
            vec!["app-config".to_owned(), "True".to_owned()],
            vec!["db".to_owned(), "False".to_owned()],
        ];
        assert_eq!(
            table(&["NAME", "READY"], &rows),
            "NAME         READY\napp-config   True\ndb           False\n"
        );
    }

    #[test]
    fn ages_should_read_as_kubectl_ages() {
        for (seconds, shown) in [
            (45, "45s"),
            (312, "5m12s"),
            (3240, "54m"),
            (11_520, "3h12m"),
            (72_000, "20h"),
            (273_600, "3d4h"),
            (1_036_800, "12d"),
        ] {
            assert_eq!(human(Duration::from_secs(seconds)), shown);
        }
    }
}
