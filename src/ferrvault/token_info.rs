//! What `GET /operator/me` answers (issue 38 point 5): which vault a service-account token is
//! bound to, its role, and when it expires.
//!
//! # Guarantees
//! - Only the vault's slug, the role and the expiry are kept; `token_id`, `vault_id`,
//!   `token_label` and any other field are skipped without being kept. The answer is read from at
//!   most [`MAX_SMALL_BODY_BYTES`](super::MAX_SMALL_BODY_BYTES) bytes (the client's cap on it).
//! - A role the operator does not know is [`TokenRole::Other`], never the server's text.
//! - A decode error keeps serde's category and position only, never the input.

use std::fmt;

use serde::Deserialize;

use super::FerrVaultError;

/// A service-account token's role (the FerrVault CLI's `Role`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenRole {
    /// Reads only.
    Viewer,
    /// Reads and writes secrets.
    Writer,
    /// Everything.
    Admin,
    /// A role this operator does not know.
    Other,
}

impl TokenRole {
    /// The role's name as FerrVault spells it (`other` for an unknown one).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Viewer => "viewer",
            Self::Writer => "writer",
            Self::Admin => "admin",
            Self::Other => "other",
        }
    }
}

impl fmt::Display for TokenRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `me` answer: what the token is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenInfo {
    /// The slug of the vault the token is bound to.
    pub vault_slug: String,
    /// Its role.
    pub role: TokenRole,
    /// When it stops working; `None` when it never expires.
    pub expires_at: Option<jiff::Timestamp>,
}

/// The wire form; fields not named here are skipped.
#[derive(Deserialize)]
struct Wire {
    vault_slug: String,
    role: Role,
    #[serde(default)]
    expires_at: Option<jiff::Timestamp>,
}

/// The role field: a string, read without keeping an unknown role's text (a derived enum
/// would also take `{"viewer": null}`).
struct Role(TokenRole);

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(RoleVisitor)
    }
}

struct RoleVisitor;

impl serde::de::Visitor<'_> for RoleVisitor {
    type Value = Role;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a role")
    }

    fn visit_str<E: serde::de::Error>(self, role: &str) -> Result<Role, E> {
        Ok(Role(match role {
            "viewer" => TokenRole::Viewer,
            "writer" => TokenRole::Writer,
            "admin" => TokenRole::Admin,
            _ => TokenRole::Other,
        }))
    }
}

/// Decodes a 2xx `me` body. A pure function of the body (a fuzzing entry point).
///
/// # Errors
/// [`FerrVaultError::Decode`] for a body that is not an object with a string `vault_slug`, a
/// string `role` and an optional RFC 3339 `expires_at`.
pub fn decode(body: &[u8]) -> Result<TokenInfo, FerrVaultError> {
    let wire: Wire = serde_json::from_slice(body).map_err(|error| FerrVaultError::decode("me", &error))?;
    Ok(TokenInfo {
        vault_slug: wire.vault_slug,
        role: wire.role.0,
        expires_at: wire.expires_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn me_should_decode_the_vault_role_and_expiry_and_keep_nothing_else() {
        let body = br#"{"token_id":"t1","vault_id":"v1","vault_slug":"prod","role":"writer",
                        "token_label":"ci","expires_at":"2026-12-12T00:00:00Z"}"#;
        let info = decode(body).expect("a me answer");
        assert_eq!((info.vault_slug.as_str(), info.role), ("prod", TokenRole::Writer));
        assert_eq!(info.expires_at, Some("2026-12-12T00:00:00Z".parse().unwrap()));
        let never =
            decode(br#"{"vault_slug":"prod","role":"superuser","expires_at":null}"#).expect("decodes");
        assert_eq!((never.role, never.expires_at), (TokenRole::Other, None));
    }

    #[test]
    fn me_should_refuse_a_body_without_its_fields_without_quoting_it() {
        for body in [
            &br#"{"role":"viewer"}"#[..],
            br#"{"vault_slug":"prod","role":"viewer","expires_at":"hunter2"}"#,
            br#"{"vault_slug":"prod","role":{"viewer":null}}"#,
            b"hunter2",
        ] {
            let error = decode(body).expect_err("refused");
            assert_eq!(error.reason(), "DecodeError");
            assert!(!error.to_string().contains("hunter2"), "{error}");
        }
    }
}
