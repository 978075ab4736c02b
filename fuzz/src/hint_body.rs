//! Target `hint_body`: the change-hint body parser (`hint_body::parse_hint`) on any body a holder
//! of the hint key may send to `POST /hooks/ferrvault` (the signature is checked first).
//!
//! # Properties checked
//! - An object with exactly one `vault` (a string of 1 to 253 bytes), at most one `names` (a list
//!   of at most 1,000 such strings) and no other member parses to exactly that vault and set of
//!   names; any other JSON value is refused ([`Tree`] is the reference).
//! - An error is one of the parser's fixed rules: no byte of the body.

use ferrvault_operator::hint_body::{Hint, MAX_NAME_BYTES, MAX_NAMES, parse_hint};

use crate::tree::{Parsed, Tree};

/// Checks the parser on `body` (see the module's properties).
pub fn check(body: &[u8]) {
    let parsed = parse_hint(body);
    if let Err(error) = &parsed {
        let text = error.to_string();
        assert!(
            RULES.iter().any(|rule| text.ends_with(rule)),
            "an error that is not a fixed rule: {text}"
        );
    }
    match (reference(body), parsed) {
        (Expected::Hint(expected), Ok(hint)) => assert_eq!(hint, expected),
        (Expected::Hint(expected), Err(error)) => panic!("{expected:?} was refused: {error}"),
        (Expected::Refused, Ok(hint)) => panic!("a body outside the rules parsed: {hint:?}"),
        (Expected::Refused | Expected::Unknown, Err(_)) | (Expected::Unknown, Ok(_)) => {}
    }
}

/// The rules an error may state.
const RULES: [&str; 3] = [
    "not JSON",
    "a field is missing, unknown or of the wrong type",
    "over a bound (vault or name longer than 253 bytes, more than 1000 names, or empty)",
];

/// What the body holds, read plainly.
enum Expected {
    /// The hint it holds.
    Hint(Hint),
    /// Not a hint.
    Refused,
    /// Not said: JSON the reference refuses for a value it holds ([`Parsed::Unsure`]).
    Unknown,
}

fn reference(body: &[u8]) -> Expected {
    match Parsed::from_slice(body) {
        Parsed::Json(Tree::Map(fields)) => read_hint(&fields).map_or(Expected::Refused, Expected::Hint),
        Parsed::Unsure => Expected::Unknown,
        Parsed::Json(Tree::Null | Tree::Bool | Tree::Number(_) | Tree::Str(_) | Tree::Seq(_))
        | Parsed::NotJson => Expected::Refused,
    }
}

fn read_hint(fields: &[(String, Tree)]) -> Result<Hint, ()> {
    let mut vault = None;
    let mut names = None;
    for (key, value) in fields {
        match (key.as_str(), value) {
            ("vault", Tree::Str(text)) if vault.is_none() && bounded(text) => vault = Some(text.clone()),
            ("names", Tree::Seq(items)) if names.is_none() && items.len() <= MAX_NAMES => {
                let items: Option<Vec<String>> = items
                    .iter()
                    .map(|item| item.as_str().filter(|text| bounded(text)).map(str::to_owned))
                    .collect();
                names = Some(items.ok_or(())?.into_iter().collect());
            }
            _ => return Err(()),
        }
    }
    Ok(Hint {
        vault: vault.ok_or(())?,
        names,
    })
}

fn bounded(text: &str) -> bool {
    !text.is_empty() && text.len() <= MAX_NAME_BYTES
}
