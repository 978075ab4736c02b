//! Target `list`: the `list` answer decoder (`decoders::decode_list`) on any body a tenant's
//! FerrVault may send for `GET /operator/secrets/list`.
//!
//! # Properties checked
//! - It agrees with a plain reading of the body ([`Tree`]): a list of objects each with one
//!   string `name`, one unsigned integer `version` and one RFC 3339 string `updated_at`, within
//!   [`MAX_LIST_ENTRIES`] and [`MAX_LIST_BYTES`], decodes to exactly those names, versions and
//!   times (a name listed twice keeps its last entry); one over a bound is `ResponseTooLarge`
//!   naming a bound it is over; anything else is refused.
//! - `ResponseTooLarge` is never claimed of a body too short to hold that much.
//! - A decode error is serde's category and position only (no byte of the body).

use std::collections::BTreeMap;

use ferrvault_operator::ferrvault::{
    FerrVaultError, Inventory, MAX_LIST_BYTES, MAX_LIST_ENTRIES, ResponseBound, decoders::decode_list,
};

use crate::{
    shape::is_serde_position,
    tree::{Parsed, Tree, single},
};

/// Checks the decoder on `body` (see the module's properties).
pub fn check(body: &[u8]) {
    let decoded = decode_list(body);
    match (reference(body), decoded) {
        (Expected::Answer(answer), outcome) if answer.is_within_bounds() => match outcome {
            Ok(inventory) => answer.assert_same(&inventory),
            Err(error) => panic!("a list within bounds was refused: {error}"),
        },
        (Expected::Answer(answer), outcome) => match outcome {
            Err(FerrVaultError::ResponseTooLarge(bound)) => answer.assert_over(bound),
            other => panic!("a list over a bound was not refused for it: {other:?}"),
        },
        (Expected::Refused, Ok(inventory)) => panic!("a body not a list decoded: {inventory:?}"),
        (Expected::Refused | Expected::Unknown, Err(error)) => assert_refusal(&error, body),
        (Expected::Unknown, Ok(inventory)) => assert_within_bounds(&inventory),
    }
}

/// What the body holds, read plainly.
enum Expected {
    /// A list of entries.
    Answer(Answer),
    /// Not a list of entries.
    Refused,
    /// The plain reading refuses what the decoder may skip ([`Parsed::Unsure`]).
    Unknown,
}

/// A list's entries, and what they charge to the decoder's bounds.
struct Answer {
    /// Name → (version, updated_at); the last entry of a name decides.
    entries: BTreeMap<String, (u64, jiff::Timestamp)>,
    /// Every entry, duplicates included.
    keys: usize,
    /// Their names, in bytes.
    bytes: usize,
}

fn reference(body: &[u8]) -> Expected {
    match Parsed::from_slice(body) {
        Parsed::Json(Tree::Seq(items)) => read_answer(&items).map_or(Expected::Refused, Expected::Answer),
        Parsed::Json(_) | Parsed::NotJson => Expected::Refused,
        Parsed::Unsure => Expected::Unknown,
    }
}

/// The entries of a top-level list; `Err` when one is not an entry.
fn read_answer(items: &[Tree]) -> Result<Answer, ()> {
    let mut answer = Answer {
        entries: BTreeMap::new(),
        keys: 0,
        bytes: 0,
    };
    for item in items {
        let Tree::Map(fields) = item else { return Err(()) };
        let name = single(fields, "name")?.and_then(Tree::as_str).ok_or(())?;
        let version = single(fields, "version")?.and_then(Tree::as_u64).ok_or(())?;
        let updated_at = single(fields, "updated_at")?.and_then(Tree::as_str).ok_or(())?;
        let updated_at: jiff::Timestamp = updated_at.parse().map_err(|_| ())?;
        answer.keys += 1;
        answer.bytes += name.len();
        answer.entries.insert(name.to_owned(), (version, updated_at));
    }
    Ok(answer)
}

impl Answer {
    fn is_within_bounds(&self) -> bool {
        self.keys <= MAX_LIST_ENTRIES && self.bytes <= MAX_LIST_BYTES
    }

    fn assert_same(&self, inventory: &Inventory) {
        let decoded: BTreeMap<String, (u64, jiff::Timestamp)> = inventory
            .entries
            .iter()
            .map(|(name, entry)| (name.clone(), (entry.version, entry.updated_at)))
            .collect();
        assert_eq!(decoded, self.entries, "decoded entries differ from the body's");
        assert_within_bounds(inventory);
    }

    fn assert_over(&self, bound: ResponseBound) {
        match bound {
            ResponseBound::Keys(max) => assert!(max == MAX_LIST_ENTRIES && self.keys > max, "{bound:?}"),
            ResponseBound::Bytes(max) => assert!(max == MAX_LIST_BYTES && self.bytes > max, "{bound:?}"),
            ResponseBound::Body(_) => panic!("the decoder does not read bodies: {bound:?}"),
        }
    }
}

/// A refused body: a decode error of serde's position only, or a bound the body is long enough to
/// cross (an entry takes at least two bytes of it, and a byte of names one).
fn assert_refusal(error: &FerrVaultError, body: &[u8]) {
    match error {
        FerrVaultError::Decode(message) => assert!(is_serde_position(message, "list"), "{message}"),
        FerrVaultError::ResponseTooLarge(ResponseBound::Keys(MAX_LIST_ENTRIES)) => {
            assert!(body.len() > 2 * MAX_LIST_ENTRIES, "{error}")
        }
        FerrVaultError::ResponseTooLarge(ResponseBound::Bytes(MAX_LIST_BYTES)) => {
            assert!(body.len() > MAX_LIST_BYTES, "{error}")
        }
        other => panic!("not a decoder's refusal: {other:?}"),
    }
}

/// A decoded list is within the bounds.
fn assert_within_bounds(inventory: &Inventory) {
    let bytes: usize = inventory.entries.keys().map(String::len).sum();
    assert!(
        inventory.entries.len() <= MAX_LIST_ENTRIES && bytes <= MAX_LIST_BYTES,
        "{} entries, {bytes} bytes",
        inventory.entries.len()
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn seeds_should_hold_the_properties() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/list");
        for seed in std::fs::read_dir(dir).expect("the seeds") {
            super::check(&std::fs::read(seed.expect("a seed").path()).expect("a readable seed"));
        }
    }
}
