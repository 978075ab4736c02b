//! Target `oidc_exchange`: the token-exchange answer decoder (`decoders::decode_exchange`) on any
//! body the FerrVault OIDC endpoint may send.
//!
//! # Properties checked
//! - An object without exactly one string `access_token` and one string `expires_at` is refused
//!   with serde's category and position only; one with them decodes unless its time is not
//!   RFC 3339 or its token cannot be a bearer, each refused with a fixed text ([`Tree`] is the
//!   reference). An array may be read by position, and then refused for its token too.
//! - A decoded bearer is the body's token (same fingerprint as the token itself), marked as the
//!   cluster identity's, and prints as `<redacted>`.

use ferrvault_operator::ferrvault::{Credential, FerrVaultError, decoders::decode_exchange};

use crate::{
    shape::is_serde_position,
    tree::{Parsed, Tree, single},
};

/// The fixed text of an `expires_at` that is not a time.
const NOT_A_TIME: &str = "oidc exchange: expires_at is not an RFC 3339 time";

/// Checks the decoder on `body` (see the module's properties).
pub fn check(body: &[u8]) {
    let decoded = decode_exchange(body);
    match (reference(body), decoded) {
        (Expected::Answer { token }, Ok((bearer, _expires_at))) => {
            assert!(
                bearer.is_cluster(),
                "an exchanged bearer is the cluster identity's"
            );
            let token = Credential::new(&token).expect("the decoder took this token");
            let url = "https://ferrvault.example";
            assert_eq!(bearer.fingerprint(url), token.fingerprint(url), "another token");
            assert_eq!(
                format!("{bearer} {bearer:?}"),
                "<redacted> Credential(<redacted>)"
            );
        }
        (Expected::Answer { token }, Err(error)) => match error {
            FerrVaultError::InvalidCredential(_) => assert!(Credential::new(&token).is_err(), "{error}"),
            FerrVaultError::Decode(message) => assert_eq!(message, NOT_A_TIME),
            other => panic!("not a decoder's refusal: {other:?}"),
        },
        (Expected::Refused, Ok(_)) => panic!("a body without the answer's fields decoded"),
        // An array is read by position: a token in it that cannot be a bearer is refused as an
        // object's is (the input of `fuzz/crashes/oidc_exchange`, `["", "<time>"]`).
        (Expected::Unknown, Err(FerrVaultError::InvalidCredential(_))) => {}
        (Expected::Refused | Expected::Unknown, Err(error)) => match error {
            FerrVaultError::Decode(message) => assert!(
                is_serde_position(&message, "oidc exchange") || message == NOT_A_TIME,
                "{message}"
            ),
            other => panic!("not a decoder's refusal: {other:?}"),
        },
        (Expected::Unknown, Ok(_)) => {}
    }
}

/// What the body holds, read plainly.
enum Expected {
    /// An object with one string `access_token` and one string `expires_at`.
    Answer { token: String },
    /// Not such an object.
    Refused,
    /// Not said: what the decoder may skip ([`Parsed::Unsure`]), or an array (which a derived
    /// deserializer reads by position).
    Unknown,
}

fn reference(body: &[u8]) -> Expected {
    match Parsed::from_slice(body) {
        Parsed::Json(Tree::Map(fields)) => {
            let string = |name| single(&fields, name).ok().flatten().and_then(Tree::as_str);
            match (string("access_token"), string("expires_at")) {
                (Some(token), Some(_)) => Expected::Answer {
                    token: token.to_owned(),
                },
                _ => Expected::Refused,
            }
        }
        Parsed::Json(Tree::Seq(_)) | Parsed::Unsure => Expected::Unknown,
        Parsed::Json(Tree::Null | Tree::Bool | Tree::Number(_) | Tree::Str(_)) | Parsed::NotJson => {
            Expected::Refused
        }
    }
}
