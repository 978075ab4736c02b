//! Target `error_body`: what a non-2xx body from a tenant's FerrVault becomes, the server's
//! message (`decoders::server_message`) and the error carrying it (`decoders::status_error`),
//! for a request that carried [`TOKEN`].
//!
//! # Properties checked
//! - The message is the body's first string `error` (else its first string `message`), without
//!   control characters and cut to [`MAX_MESSAGE_CHARS`]; none when that is blank or the body is
//!   not a JSON object ([`Tree`] is the reference).
//! - The error's `Display` and `Debug` never show [`TOKEN`] nor a piece of its secret part
//!   ([`TOKEN_PIECE`] characters or more) that the server's message does not hold apart from its
//!   whole echoes of the token: an echo is redacted whole or not shown, wherever the message is
//!   cut.

use ferrvault_operator::ferrvault::{
    FerrVaultError, MAX_MESSAGE_CHARS,
    decoders::{server_message, status_error},
};

use crate::tree::{Parsed, Tree};

/// The bearer token the request carried: a server may echo it in its error body.
pub const TOKEN: &str = "fvsat_Fz9qK2mW7xL4pR8tN3vB6yH1cJ5d";

/// The public part of [`TOKEN`]: every service-account token starts so, a message may say it.
const TOKEN_KIND: &str = "fvsat_";

/// The shortest piece of [`TOKEN`]'s secret part that counts as showing it.
pub const TOKEN_PIECE: usize = 4;

/// The statuses an error body comes with: each kind of [`FerrVaultError`] a status maps to.
const STATUSES: [u16; 8] = [400, 401, 403, 404, 418, 429, 500, 503];

/// Checks the message and the error of `body`; its first byte picks the status.
pub fn check(data: &[u8]) {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let message = server_message(body);
    if let Some(text) = &message {
        assert!(text.chars().count() <= MAX_MESSAGE_CHARS, "{text:?}");
        assert!(!text.chars().any(char::is_control), "{text:?}");
        assert!(!text.trim().is_empty(), "{text:?}");
    }
    let echoed = match Parsed::from_slice(body) {
        Parsed::Json(tree) => {
            assert_eq!(message, reference(&tree), "the message differs from the body's");
            Some(uncut_message(&tree).unwrap_or_default())
        }
        Parsed::NotJson => {
            assert_eq!(message, None, "a body that is not JSON has no message");
            Some(String::new())
        }
        Parsed::Unsure => None,
    };
    let status = STATUSES[usize::from(pick) % STATUSES.len()];
    let error = status_error(status, body, TOKEN).expect("a valid status code");
    assert_shows_no_token(&error, echoed.as_deref());
}

/// The message the body's plain reading gives.
fn reference(tree: &Tree) -> Option<String> {
    let text = uncut_message(tree)?;
    let text: String = text.chars().take(MAX_MESSAGE_CHARS).collect();
    (!text.trim().is_empty()).then_some(text)
}

/// The first string `error`, else the first string `message`, without control characters, whole.
fn uncut_message(tree: &Tree) -> Option<String> {
    let Tree::Map(fields) = tree else { return None };
    let first_string = |name| Tree::members(fields, name).find_map(Tree::as_str).map(clean);
    first_string("error").or_else(|| first_string("message"))
}

fn clean(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

/// No whole token, and no piece of its secret part but those `echoed` (the server's whole
/// message, when known) holds apart from its whole echoes of the token.
fn assert_shows_no_token(error: &FerrVaultError, echoed: Option<&str>) {
    let secret = TOKEN
        .strip_prefix(TOKEN_KIND)
        .expect("the token starts with its kind");
    let partial = echoed.map(|text| text.replace(TOKEN, "\0"));
    for shown in [error.to_string(), format!("{error:?}")] {
        assert!(!shown.contains(TOKEN), "shows the token: {shown}");
        let Some(partial) = &partial else { continue };
        for piece in secret.as_bytes().windows(TOKEN_PIECE) {
            let piece = std::str::from_utf8(piece).expect("the token is ASCII");
            assert!(
                !shown.contains(piece) || partial.contains(piece),
                "shows {piece:?} of the token: {shown}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_should_take_the_first_string_error_before_any_message() {
        let read = |body: &str| match Parsed::from_slice(body.as_bytes()) {
            Parsed::Json(tree) => reference(&tree),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            read(r#"{"error":1,"message":"m","error":"e"}"#).as_deref(),
            Some("e")
        );
        assert_eq!(read(r#"{"message":"m","error":" "}"#), None);
        assert_eq!(read(r#"{"message":"a\u0000b"}"#).as_deref(), Some("ab"));
        assert_eq!(read(r#"["error"]"#), None);
    }
}
