//! Text no longer than a fixed number of bytes (issue 34 point 8): condition messages and log
//! fields are cut to [`MAX_MESSAGE_BYTES`] with a marker, so nothing a tenant writes or serves
//! can make one status, log line or field grow with it.
//!
//! # Guarantees
//! - A text within the bound is left exactly as it is.
//! - A longer one keeps its start, cut on a character boundary, followed by [`marker`] naming
//!   its length in all; the result, marker included, is at most the bound.
//! - [`Bounded`] cuts a value while it is formatted: it passes on at most the bound and holds at
//!   most the bound, however much the value writes, so a `Debug` of tenant data is never built
//!   whole ("bound before you allocate").

use std::fmt;

/// The most bytes a condition message, log message or log field value has (1 KiB).
pub(crate) const MAX_MESSAGE_BYTES: usize = 1024;

/// Room kept for the marker: `… [cut: 18446744073709551615 bytes in all]` (44 bytes) fits.
const MARKER_ROOM: usize = 48;

/// What replaces the end of a text that was `total` bytes long.
pub(crate) fn marker(total: usize) -> String {
    format!("… [cut: {total} bytes in all]")
}

/// `text` cut to at most `max` bytes, marker included (see the module guarantees).
///
/// # Panics
/// As [`Bounded::new`].
pub(crate) fn cut(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    format!("{:?}", Bounded::new(&format_args!("{text}"), max))
}

/// `value`'s `Debug` output cut to at most `max` bytes as it is written (a `Display` is written
/// through it as `format_args!("{value}")`).
pub(crate) struct Bounded<'a> {
    value: &'a dyn fmt::Debug,
    max: usize,
}

impl<'a> Bounded<'a> {
    /// `value`, bounded at `max` bytes.
    ///
    /// # Panics
    /// When `max` cannot hold the marker (a programming error: use [`MAX_MESSAGE_BYTES`]).
    pub(crate) fn new(value: &'a dyn fmt::Debug, max: usize) -> Self {
        assert!(
            max >= 2 * MARKER_ROOM,
            "a bound of {max} bytes cannot hold the marker"
        );
        Self { value, max }
    }
}

impl fmt::Debug for Bounded<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut limit = Limit {
            out: f,
            max: self.max,
            passed: 0,
            held: String::new(),
            total: 0,
        };
        let written = fmt::write(&mut limit, format_args!("{:?}", self.value));
        limit.end()?;
        written
    }
}

/// Passes on the first `max - MARKER_ROOM` bytes written to it, holds what follows up to `max`,
/// and counts the rest; [`Limit::end`] writes the held bytes when all fitted, else the marker.
struct Limit<'a, 'b> {
    out: &'a mut fmt::Formatter<'b>,
    max: usize,
    /// Bytes passed on. Nothing is passed on once something is held, so the order is kept.
    passed: usize,
    /// Bytes after those passed on: written only if the whole value fits in `max`.
    held: String,
    /// Bytes written in all.
    total: usize,
}

impl Limit<'_, '_> {
    fn end(self) -> fmt::Result {
        if self.total <= self.max {
            self.out.write_str(&self.held)
        } else {
            self.out.write_str(&marker(self.total))
        }
    }
}

impl fmt::Write for Limit<'_, '_> {
    fn write_str(&mut self, piece: &str) -> fmt::Result {
        self.total = self.total.saturating_add(piece.len());
        let mut rest = piece;
        if self.held.is_empty() {
            let room = (self.max - MARKER_ROOM).saturating_sub(self.passed);
            let pass = floor_char_boundary(rest, room);
            self.out.write_str(&rest[..pass])?;
            self.passed += pass;
            rest = &rest[pass..];
        }
        let room = self.max.saturating_sub(self.passed + self.held.len());
        self.held.push_str(&rest[..floor_char_boundary(rest, room)]);
        Ok(())
    }
}

/// The largest index `<= at` on a character boundary of `text`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    (0..=at.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounded_display(text: &str) -> String {
        format!("{:?}", Bounded::new(&format_args!("{text}"), MAX_MESSAGE_BYTES))
    }

    #[test]
    fn text_within_the_bound_should_be_left_as_it_is() {
        let exact = "x".repeat(MAX_MESSAGE_BYTES);
        assert_eq!(cut(exact.clone(), MAX_MESSAGE_BYTES), exact);
        assert_eq!(bounded_display(&exact), exact);
        assert_eq!(cut(String::new(), MAX_MESSAGE_BYTES), "");
        // Three-byte characters across the point where bytes start being held.
        let near = "€".repeat(MAX_MESSAGE_BYTES / 3);
        assert_eq!(bounded_display(&near), near);
    }

    #[test]
    fn longer_text_should_be_cut_on_a_character_boundary_with_its_length() {
        // Three-byte characters, so most cut points fall inside one.
        let long = "€".repeat(100_000);
        for bounded in [cut(long.clone(), MAX_MESSAGE_BYTES), bounded_display(&long)] {
            assert!(bounded.len() <= MAX_MESSAGE_BYTES, "{}", bounded.len());
            assert!(bounded.starts_with("€€€"));
            assert!(bounded.ends_with("€… [cut: 300000 bytes in all]"), "{bounded}");
        }
        let one_over = "y".repeat(MAX_MESSAGE_BYTES + 1);
        assert!(cut(one_over, MAX_MESSAGE_BYTES).ends_with("y… [cut: 1025 bytes in all]"));
    }

    #[test]
    fn a_huge_debug_output_should_be_cut_while_it_is_written() {
        let huge: Vec<u64> = (0..1_000_000).collect();
        let text = format!("{:?}", Bounded::new(&huge, MAX_MESSAGE_BYTES));
        assert!(text.starts_with("[0, 1, 2, 3"), "{text}");
        assert!(text.len() <= MAX_MESSAGE_BYTES, "{}", text.len());
        assert!(text.ends_with("bytes in all]"), "{text}");
        assert_eq!(
            format!("{:?}", Bounded::new(&"short", MAX_MESSAGE_BYTES)),
            "\"short\""
        );
    }
}
