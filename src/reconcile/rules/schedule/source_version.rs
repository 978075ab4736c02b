//! What a connection's `list` of versions tells one FerrVaultSecret (issue 38 point 3): the hash
//! of its selection's versions (`status.observedSourceVersion`, compared by the rule of
//! [`explain`](super::explain) as [`Trigger::Source`](super::explain::Trigger::Source)), and how
//! long a change took to arrive (`ferrvault_change_to_sync_seconds`).
//!
//! # Guarantees
//! - The same pairs give the same hash in every process, whichever side computed them: the
//!   `list` answer for the selection ([`listed_version`]) or the reveal's versions
//!   ([`revealed_version`]). A name that appears or disappears changes the hash as a moved
//!   version does.
//! - Bounded: 64 hex characters (SHA-256), whatever the number of names.
//! - A tenant's `updated_at` cannot skew the freshness histogram: a time more than
//!   [`MAX_CLOCK_SKEW`] in the future, or older than [`MAX_CHANGE_AGE`], is dropped
//!   ([`change_age`]); a time slightly ahead counts as zero.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use jiff::Timestamp;
use sha2::{Digest, Sha256};

use crate::ferrvault::ListedSecret;

/// How far ahead of our clock a server's `updated_at` may be and still count (as zero).
pub(crate) const MAX_CLOCK_SKEW: Duration = Duration::from_secs(5);

/// The oldest change that still counts in the freshness histogram: older means the time is
/// not the change's (a hostile or broken `updated_at`), or the change waited for a resumed
/// object, which says nothing of the detection's freshness.
pub(crate) const MAX_CHANGE_AGE: Duration = Duration::from_secs(24 * 3600);

/// The hash of the `(name, version)` pairs, in the order given (callers pass them sorted by name).
fn hash<'a>(pairs: impl IntoIterator<Item = (&'a str, u64)>) -> String {
    let mut digest = Sha256::new();
    for (name, version) in pairs {
        digest.update(name.as_bytes());
        digest.update(b":");
        digest.update(version.to_string().as_bytes());
        digest.update(b"\n");
    }
    hex::encode(digest.finalize())
}

/// The hash of the selection's versions in a `list` answer: the `selected` names it holds, or
/// every listed name when `selected` is empty ("every key").
pub(crate) fn listed_version(selected: &[String], listed: &BTreeMap<String, ListedSecret>) -> String {
    if selected.is_empty() {
        return hash(listed.iter().map(|(name, entry)| (name.as_str(), entry.version)));
    }
    let mut names: Vec<&str> = selected.iter().map(String::as_str).collect();
    names.sort_unstable();
    names.dedup();
    hash(
        names
            .into_iter()
            .filter_map(|name| Some((name, listed.get(name)?.version))),
    )
}

/// The hash of the versions a reveal returned (every hit of the selection, by name).
pub(crate) fn revealed_version(versions: &BTreeMap<String, u64>) -> String {
    hash(versions.iter().map(|(name, version)| (name.as_str(), *version)))
}

/// Whether a change of `changed` (names moved, appeared or gone) concerns a selection of
/// `selected` (empty: every name).
pub(crate) fn concerns(selected: &[String], changed: &BTreeSet<&str>) -> bool {
    selected.is_empty() || selected.iter().any(|name| changed.contains(name.as_str()))
}

/// How long ago `updated_at` was at `now`, for the freshness histogram: `None` for a time more
/// than [`MAX_CLOCK_SKEW`] ahead or more than [`MAX_CHANGE_AGE`] behind; zero for one slightly
/// ahead.
pub(crate) fn change_age(updated_at: Timestamp, now: Timestamp) -> Option<Duration> {
    let age = now.duration_since(updated_at);
    let magnitude = age.unsigned_abs();
    match (age.is_negative(), magnitude) {
        (true, ahead) if ahead > MAX_CLOCK_SKEW => None,
        (true, _) => Some(Duration::ZERO),
        (false, behind) => (behind <= MAX_CHANGE_AGE).then_some(behind),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(pairs: &[(&str, u64)]) -> BTreeMap<String, ListedSecret> {
        pairs
            .iter()
            .map(|(name, version)| {
                let entry = ListedSecret {
                    version: *version,
                    updated_at: Timestamp::UNIX_EPOCH,
                };
                ((*name).to_owned(), entry)
            })
            .collect()
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn listed_version_should_equal_the_revealed_version_of_the_same_pairs() {
        let list = listed(&[("A", 3), ("B", 1), ("C", 9)]);
        let revealed: BTreeMap<String, u64> = [("A".to_owned(), 3), ("C".to_owned(), 9)].into();
        assert_eq!(
            listed_version(&names(&["C", "A", "A"]), &list),
            revealed_version(&revealed)
        );
        let every: BTreeMap<String, u64> = list.iter().map(|(n, e)| (n.clone(), e.version)).collect();
        assert_eq!(listed_version(&[], &list), revealed_version(&every));
    }

    #[test]
    fn listed_version_should_move_with_a_selected_version_an_appearance_or_a_disappearance() {
        let selected = names(&["A", "B"]);
        let before = listed_version(&selected, &listed(&[("A", 1), ("B", 1), ("X", 1)]));
        let rotated = listed_version(&selected, &listed(&[("A", 2), ("B", 1), ("X", 1)]));
        let gone = listed_version(&selected, &listed(&[("A", 1), ("X", 1)]));
        let other = listed_version(&selected, &listed(&[("A", 1), ("B", 1), ("X", 7)]));
        assert_ne!(before, rotated);
        assert_ne!(before, gone);
        assert_eq!(
            before, other,
            "an unselected name moving is no change of this selection"
        );
        assert_eq!(before.len(), 64);
    }

    #[test]
    fn change_age_should_drop_future_and_ancient_times_and_zero_a_small_skew() {
        let now = Timestamp::from_second(1_700_000_000).expect("valid");
        let at = |offset: i64| Timestamp::from_second(1_700_000_000 + offset).expect("valid");
        assert_eq!(change_age(at(-3), now), Some(Duration::from_secs(3)));
        assert_eq!(change_age(at(2), now), Some(Duration::ZERO));
        assert_eq!(change_age(at(3600), now), None, "far future");
        assert_eq!(change_age(Timestamp::UNIX_EPOCH, now), None, "ancient");
    }

    #[test]
    fn concerns_should_match_a_selected_name_or_every_name() {
        assert!(concerns(&[], &BTreeSet::from(["anything"])));
        assert!(concerns(&names(&["A", "B"]), &BTreeSet::from(["B"])));
        assert!(!concerns(&names(&["A", "B"]), &BTreeSet::from(["C"])));
    }
}
