//! Target `me`: the `me` answer decoder (`decoders::decode_me`) on any body a tenant's FerrVault
//! may send for `GET /operator/me`.
//!
//! # Properties checked
//! - An object with one string `vault_slug`, one string `role` and at most one `expires_at`
//!   (`null` or an RFC 3339 string) decodes to exactly that slug, role (`other` for one the
//!   operator does not know) and time; an object without them is refused ([`Tree`] is the
//!   reference). Other fields, of any type, are skipped.
//! - A decode error is serde's category and position only (no byte of the body).

use ferrvault_operator::ferrvault::{FerrVaultError, TokenInfo, TokenRole, decoders::decode_me};

use crate::{
    shape::is_serde_position,
    tree::{Parsed, Tree, single},
};

/// Checks the decoder on `body` (see the module's properties).
pub fn check(body: &[u8]) {
    match (reference(body), decode_me(body)) {
        (Expected::Answer(expected), Ok(info)) => assert_eq!(info, expected),
        (Expected::Answer(expected), Err(error)) => panic!("{expected:?} was refused: {error}"),
        (Expected::Refused, Ok(info)) => panic!("a body without the answer's fields decoded: {info:?}"),
        (Expected::Refused | Expected::Unknown, Err(error)) => match error {
            FerrVaultError::Decode(message) => assert!(is_serde_position(&message, "me"), "{message}"),
            other => panic!("not a decoder's refusal: {other:?}"),
        },
        (Expected::Unknown, Ok(_)) => {}
    }
}

/// What the body holds, read plainly.
enum Expected {
    /// The answer it holds.
    Answer(TokenInfo),
    /// Not an answer.
    Refused,
    /// Not said: what the decoder may skip ([`Parsed::Unsure`]), or an array (which a derived
    /// deserializer reads by position).
    Unknown,
}

fn reference(body: &[u8]) -> Expected {
    match Parsed::from_slice(body) {
        Parsed::Json(Tree::Map(fields)) => read_answer(&fields).map_or(Expected::Refused, Expected::Answer),
        Parsed::Json(Tree::Seq(_)) | Parsed::Unsure => Expected::Unknown,
        Parsed::Json(Tree::Null | Tree::Bool | Tree::Number(_) | Tree::Str(_)) | Parsed::NotJson => {
            Expected::Refused
        }
    }
}

fn read_answer(fields: &[(String, Tree)]) -> Result<TokenInfo, ()> {
    let vault_slug = single(fields, "vault_slug")?.and_then(Tree::as_str).ok_or(())?;
    let role = match single(fields, "role")?.and_then(Tree::as_str).ok_or(())? {
        "viewer" => TokenRole::Viewer,
        "writer" => TokenRole::Writer,
        "admin" => TokenRole::Admin,
        _ => TokenRole::Other,
    };
    let expires_at = match single(fields, "expires_at")? {
        None | Some(Tree::Null) => None,
        Some(time) => Some(time.as_str().ok_or(())?.parse().map_err(|_| ())?),
    };
    Ok(TokenInfo {
        vault_slug: vault_slug.to_owned(),
        role,
        expires_at,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn seeds_should_hold_the_properties() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/me");
        for seed in std::fs::read_dir(dir).expect("the seeds") {
            super::check(&std::fs::read(seed.expect("a seed").path()).expect("a readable seed"));
        }
    }
}
