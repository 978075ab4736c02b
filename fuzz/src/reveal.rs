//! Targets `reveal_ferrvault` and `reveal_cloud`: the reveal answer decoder
//! (`decoders::decode_reveal`) on any body a tenant's FerrVault may send, in either wire format.
//!
//! # Properties checked
//! - It agrees with a plain reading of the body ([`Tree`]): a body of the format within
//!   [`MAX_REVEAL_KEYS`] and [`MAX_REVEAL_BYTES`] decodes to exactly its values and missing
//!   names (and, ferrvault mode, each hit's `version`: absent, or an unsigned integer); one over
//!   a bound is `ResponseTooLarge` naming a bound it is over; anything else is refused.
//! - `ResponseTooLarge` is never claimed of a body too short to hold that much.
//! - A decode error is serde's category and position only (no byte of the body); the `Debug` of
//!   a decoded answer shows key names and counts only (no value).

use std::collections::{BTreeMap, BTreeSet};

use ferrvault_operator::ferrvault::{
    FerrVaultError, MAX_REVEAL_BYTES, MAX_REVEAL_KEYS, MissingKeys, ResponseBound, RevealScope, Revealed,
    decoders::decode_reveal,
};

use crate::{
    shape::is_serde_position,
    tree::{Parsed, Tree, single},
};

/// The two wire formats of a reveal answer.
#[derive(Clone, Copy, Debug)]
pub enum Wire {
    /// Ferrvault mode: `{"hits": [{"name", "value", …}], "missing": […]}`.
    FerrVault,
    /// Cloud mode: `{"secrets": {"NAME": "value"}, "missing": […], …}`.
    Cloud,
}

/// Checks the decoder on `body` in `wire`'s format (see the module's properties).
pub fn check(wire: Wire, body: &[u8]) {
    let decoded = decode_reveal(&wire.scope(), body);
    match (reference(wire, body), decoded) {
        (Expected::Answer(answer), outcome) if answer.is_within_bounds() => match outcome {
            Ok(revealed) => answer.assert_same(&revealed),
            Err(error) => panic!("a body of the format within bounds was refused: {error}"),
        },
        (Expected::Answer(answer), outcome) => match outcome {
            Err(FerrVaultError::ResponseTooLarge(bound)) => answer.assert_over(bound),
            other => panic!("an answer over a bound was not refused for it: {other:?}"),
        },
        (Expected::Refused, Ok(revealed)) => panic!("a body not of the format decoded: {revealed:?}"),
        (Expected::Refused | Expected::Unknown, Err(error)) => assert_refusal(&error, body),
        (Expected::Unknown, Ok(revealed)) => assert_answer(&revealed),
    }
}

impl Wire {
    fn scope(self) -> RevealScope {
        match self {
            Wire::FerrVault => RevealScope::FerrVault,
            Wire::Cloud => RevealScope::Cloud {
                organization: "acme".into(),
                project: "shop".into(),
                namespace: "tenant".into(),
            },
        }
    }
}

/// What the body holds, read plainly.
enum Expected {
    /// The format's answer.
    Answer(Answer),
    /// Not the format's.
    Refused,
    /// The plain reading refuses what the decoder may skip ([`Parsed::Unsure`]).
    Unknown,
}

/// An answer of the format, and what it charges to the decoder's bounds.
struct Answer {
    secrets: BTreeMap<String, String>,
    /// The version of each hit that has one (the last hit of a name decides).
    versions: BTreeMap<String, u64>,
    missing: BTreeSet<String>,
    /// Every hit or secret and every missing name, duplicates included.
    keys: usize,
    /// Their names, values and missing names, in bytes.
    bytes: usize,
}

fn reference(wire: Wire, body: &[u8]) -> Expected {
    match Parsed::from_slice(body) {
        Parsed::Json(Tree::Map(fields)) => {
            read_answer(wire, &fields).map_or(Expected::Refused, Expected::Answer)
        }
        Parsed::Json(_) | Parsed::NotJson => Expected::Refused,
        Parsed::Unsure => Expected::Unknown,
    }
}

/// The format's reading of a top-level object; `Err` when it is not the format's.
fn read_answer(wire: Wire, fields: &[(String, Tree)]) -> Result<Answer, ()> {
    let mut answer = Answer {
        secrets: BTreeMap::new(),
        versions: BTreeMap::new(),
        missing: BTreeSet::new(),
        keys: 0,
        bytes: 0,
    };
    match (wire, single(fields, wire.field())?) {
        (_, None) => {}
        (Wire::FerrVault, Some(Tree::Seq(hits))) => {
            for hit in hits {
                let Tree::Map(hit) = hit else { return Err(()) };
                let name = single(hit, "name")?.and_then(Tree::as_str).ok_or(())?;
                let value = single(hit, "value")?.and_then(Tree::as_str).ok_or(())?;
                match single(hit, "version")? {
                    None => answer.versions.remove(name),
                    Some(version) => answer
                        .versions
                        .insert(name.to_owned(), version.as_u64().ok_or(())?),
                };
                answer.add_secret(name, value);
            }
        }
        (Wire::Cloud, Some(Tree::Map(secrets))) => {
            for (name, value) in secrets {
                answer.add_secret(name, value.as_str().ok_or(())?);
            }
        }
        (_, Some(_)) => return Err(()),
    }
    match single(fields, "missing")? {
        None | Some(Tree::Null) => {}
        Some(Tree::Seq(names)) => {
            for name in names {
                let name = name.as_str().ok_or(())?;
                answer.keys += 1;
                answer.bytes += name.len();
                answer.missing.insert(name.to_owned());
            }
        }
        Some(_) => return Err(()),
    }
    Ok(answer)
}

impl Wire {
    /// The field holding the values.
    fn field(self) -> &'static str {
        match self {
            Wire::FerrVault => "hits",
            Wire::Cloud => "secrets",
        }
    }
}

impl Answer {
    fn add_secret(&mut self, name: &str, value: &str) {
        self.keys += 1;
        self.bytes += name.len() + value.len();
        self.secrets.insert(name.to_owned(), value.to_owned());
    }

    fn is_within_bounds(&self) -> bool {
        self.keys <= MAX_REVEAL_KEYS && self.bytes <= MAX_REVEAL_BYTES
    }

    fn assert_same(&self, revealed: &Revealed) {
        let values: BTreeMap<&str, &str> = revealed
            .secrets
            .iter()
            .map(|(name, value)| (name.as_str(), value.expose()))
            .collect();
        let expected: BTreeMap<&str, &str> = self
            .secrets
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        assert_eq!(values, expected, "decoded values differ from the body's");
        assert_eq!(
            revealed.versions, self.versions,
            "decoded versions differ from the body's"
        );
        assert_eq!(
            revealed.missing,
            MissingKeys::from(self.missing.clone()),
            "decoded missing names differ from the body's"
        );
        assert_answer(revealed);
    }

    fn assert_over(&self, bound: ResponseBound) {
        match bound {
            ResponseBound::Keys(max) => assert!(max == MAX_REVEAL_KEYS && self.keys > max, "{bound:?}"),
            ResponseBound::Bytes(max) => assert!(max == MAX_REVEAL_BYTES && self.bytes > max, "{bound:?}"),
            ResponseBound::Body(_) => panic!("the decoder does not read bodies: {bound:?}"),
        }
    }
}

/// A refused body: a decode error of serde's position only, or a bound the body is long enough to
/// cross (a key takes at least two bytes of it, `0,`, and a byte of names or values one).
fn assert_refusal(error: &FerrVaultError, body: &[u8]) {
    match error {
        FerrVaultError::Decode(message) => assert!(is_serde_position(message, "reveal"), "{message}"),
        FerrVaultError::ResponseTooLarge(ResponseBound::Keys(MAX_REVEAL_KEYS)) => {
            assert!(body.len() > 2 * MAX_REVEAL_KEYS, "{error}")
        }
        FerrVaultError::ResponseTooLarge(ResponseBound::Bytes(MAX_REVEAL_BYTES)) => {
            assert!(body.len() > MAX_REVEAL_BYTES, "{error}")
        }
        other => panic!("not a decoder's refusal: {other:?}"),
    }
}

/// A decoded answer is within the bounds, and its `Debug` is exactly its key names and counts.
fn assert_answer(revealed: &Revealed) {
    let keys = revealed.secrets.len() + revealed.missing.total();
    let bytes: usize = revealed
        .secrets
        .iter()
        .map(|(name, value)| name.len() + value.expose().len())
        .sum();
    assert!(
        keys <= MAX_REVEAL_KEYS && bytes <= MAX_REVEAL_BYTES,
        "{keys} keys, {bytes} bytes"
    );
    let expected = format!(
        "Revealed {{ count: {}, keys: {:?}, versions: {:?}, missing: {:?}, missing_count: {} }}",
        revealed.secrets.len(),
        revealed.secrets.keys().collect::<Vec<_>>(),
        revealed.versions,
        revealed.missing.names(),
        revealed.missing.total()
    );
    assert_eq!(format!("{revealed:?}"), expected);
}
