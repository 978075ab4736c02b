//! [`MissingKeys`]: the requested keys FerrVault does not have, as much of them as anyone needs
//! to see (issue 34: a server can list as many names as its body holds, and each pass copies the
//! list into status, its condition message and an Event).
//!
//! # Guarantees
//! - At most [`MissingKeys::SHOWN`] names are kept, the first ones in sorted order, each cut to
//!   [`MissingKeys::SHOWN_NAME_BYTES`]; [`MissingKeys::total`] counts them all (distinct).
//! - `names()` is empty exactly when nothing is missing.

use std::collections::BTreeSet;

/// The requested keys absent upstream: the first [`MissingKeys::SHOWN`] names, sorted, and how
/// many there are in all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MissingKeys {
    /// The first names in sorted order, each cut to [`MissingKeys::SHOWN_NAME_BYTES`].
    shown: Vec<String>,
    /// Every distinct missing name, shown or not.
    total: usize,
}

impl MissingKeys {
    /// How many names are kept: enough to act on, and a status that stays small (at most
    /// 100 × 253 bytes of names) however many a server lists.
    pub const SHOWN: usize = 100;

    /// The longest name kept whole: the longest key a Secret may have. A longer name, which no
    /// Secret could hold anyway, is shown cut there, ending in `…`.
    pub const SHOWN_NAME_BYTES: usize = 253;

    /// The names kept, sorted (at most [`MissingKeys::SHOWN`]).
    pub fn names(&self) -> &[String] {
        &self.shown
    }

    /// How many distinct names are missing in all.
    pub fn total(&self) -> usize {
        self.total
    }

    /// How many missing names are not in [`MissingKeys::names`].
    pub fn hidden(&self) -> usize {
        self.total - self.shown.len()
    }

    /// Whether every requested key was found.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }
}

impl From<BTreeSet<String>> for MissingKeys {
    fn from(names: BTreeSet<String>) -> Self {
        let total = names.len();
        let shown = names.into_iter().take(Self::SHOWN).map(shown_name).collect();
        Self { shown, total }
    }
}

/// Sorts and deduplicates first: meant for lists already bounded (a selector's names, a decoded
/// answer's), which this keeps whole until it has counted them.
impl FromIterator<String> for MissingKeys {
    fn from_iter<I: IntoIterator<Item = String>>(names: I) -> Self {
        names.into_iter().collect::<BTreeSet<_>>().into()
    }
}

/// `name`, or its first [`MissingKeys::SHOWN_NAME_BYTES`] bytes (to a character boundary)
/// followed by `…`.
fn shown_name(mut name: String) -> String {
    if name.len() > MissingKeys::SHOWN_NAME_BYTES {
        let mut end = MissingKeys::SHOWN_NAME_BYTES;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        name.truncate(end);
        name.push('…');
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(count: usize) -> MissingKeys {
        (0..count).map(|i| format!("K{i:05}")).collect()
    }

    #[test]
    fn missing_keys_should_keep_the_first_hundred_names_and_count_them_all() {
        let exactly = numbered(MissingKeys::SHOWN);
        assert_eq!(
            (exactly.names().len(), exactly.total(), exactly.hidden()),
            (100, 100, 0)
        );
        let over = numbered(MissingKeys::SHOWN + 1);
        assert_eq!((over.names().len(), over.total(), over.hidden()), (100, 101, 1));
        assert_eq!(over.names().first().map(String::as_str), Some("K00000"));
        assert_eq!(over.names().last().map(String::as_str), Some("K00099"));
    }

    #[test]
    fn missing_keys_should_be_sorted_and_deduplicated() {
        let missing: MissingKeys = ["b", "a", "b"].map(str::to_owned).into_iter().collect();
        assert_eq!(missing.names(), ["a", "b"]);
        assert_eq!(missing.total(), 2);
        assert!(MissingKeys::default().is_empty() && MissingKeys::default().names().is_empty());
    }

    #[test]
    fn a_name_longer_than_a_secret_key_should_be_shown_cut_but_still_shown() {
        let exactly = "k".repeat(MissingKeys::SHOWN_NAME_BYTES);
        let long = format!(
            "{}é{}",
            "x".repeat(MissingKeys::SHOWN_NAME_BYTES - 1),
            "y".repeat(5000)
        );
        let missing: MissingKeys = [exactly.clone(), long].into_iter().collect();
        assert_eq!(missing.names()[0], exactly);
        assert_eq!(
            missing.names()[1],
            format!("{}…", "x".repeat(MissingKeys::SHOWN_NAME_BYTES - 1))
        );
        assert!(!missing.is_empty());
    }
}
