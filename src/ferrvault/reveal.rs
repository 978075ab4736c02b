//! Reveal requests and their answers: what a caller asks for, what it gets back, and the two
//! wire formats (ferrvault mode and cloud mode).
//!
//! # Guarantees
//! - [`SecretValue`] and [`Revealed`] never print a value: `Debug` shows key names and counts.
//! - Every caller receives exactly the keys it asked for (all visible keys for
//!   [`KeySelector::All`]) and its own `missing` keys, whatever the shared request fetched.
//! - An answer is decoded within [`MAX_REVEAL_KEYS`](crate::ferrvault::MAX_REVEAL_KEYS) and
//!   [`MAX_REVEAL_BYTES`](crate::ferrvault::MAX_REVEAL_BYTES) (`reveal/decode.rs`), and its missing
//!   keys are kept as [`MissingKeys`] (at most [`MissingKeys::SHOWN`] names and a count).
//! - A ferrvault-mode hit's `version` is kept ([`Revealed::versions`]); a hit without one (an
//!   older server) has none, a hit whose `version` is not an unsigned integer fails the decoding.

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt,
};

use reqwest::header::{ACCEPT, CONTENT_TYPE};

pub use self::missing::MissingKeys;
use super::{Credential, Endpoint, FerrVaultError};

pub(super) mod decode;
mod missing;

/// Which API shape the connection uses (`spec.mode`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RevealScope {
    /// `POST /operator/secrets/reveal` with a service-account token bound to one vault.
    FerrVault,
    /// `GET /api/v1/orgs/{org}/projects/{project}/vaults/by-name/{vault}/secrets/reveal`.
    Cloud {
        /// `spec.organization` of the connection.
        organization: String,
        /// `spec.project` of the secret.
        project: String,
        /// Sent as `X-FerrVault-Namespace` (the custom resource's namespace) when non-empty.
        /// Part of the single-flight key: the server may authorise cluster tokens by it.
        namespace: String,
    },
}

/// Which keys a caller wants.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KeySelector {
    /// Every key the token can see (`selector.names` empty).
    All,
    /// Exactly these keys; absent ones are reported as missing.
    Names(BTreeSet<String>),
}

impl KeySelector {
    /// `All` for an empty list, else the named keys.
    pub fn from_names<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        let names: BTreeSet<String> = names.into_iter().map(Into::into).collect();
        if names.is_empty() {
            KeySelector::All
        } else {
            KeySelector::Names(names)
        }
    }

    /// Whether a request for `self` returns everything `other` needs.
    pub(crate) fn covers(&self, other: &KeySelector) -> bool {
        match (self, other) {
            (KeySelector::All, _) => true,
            (KeySelector::Names(_), KeySelector::All) => false,
            (KeySelector::Names(mine), KeySelector::Names(theirs)) => theirs.is_subset(mine),
        }
    }

    /// Widens `self` to also cover `other`.
    pub(crate) fn widen(&mut self, other: &KeySelector) {
        match (&mut *self, other) {
            (KeySelector::All, _) => {}
            (KeySelector::Names(_), KeySelector::All) => *self = KeySelector::All,
            (KeySelector::Names(mine), KeySelector::Names(theirs)) => mine.extend(theirs.iter().cloned()),
        }
    }
}

/// One reveal: which vault, through which API shape, and which keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RevealRequest {
    /// API shape and cloud scope.
    pub scope: RevealScope,
    /// `spec.vault`.
    pub vault: String,
    /// `selector.names`.
    pub keys: KeySelector,
}

/// A secret value. Prints as `<redacted>`; read it with [`SecretValue::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(String);

impl SecretValue {
    /// The value, for writing into the target `Secret`. Do not log it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Consumes the wrapper.
    pub fn into_exposed(self) -> String {
        self.0
    }

    /// A value for unit tests.
    #[cfg(test)]
    pub(crate) fn test(value: &str) -> Self {
        Self(value.to_owned())
    }
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// What one caller receives: its keys' values, their versions, and the keys it asked for that
/// do not exist.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Revealed {
    /// Values by key name.
    pub secrets: BTreeMap<String, SecretValue>,
    /// The version of each value whose hit carried one (ferrvault mode: every hit of a current
    /// server; cloud mode's wire format carries none, so it stays empty). Versions are not
    /// secret: `Debug` shows them.
    pub versions: BTreeMap<String, u64>,
    /// Requested keys absent upstream: the first names, sorted, and their count.
    pub missing: MissingKeys,
}

impl fmt::Debug for Revealed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Revealed")
            .field("count", &self.secrets.len())
            .field("keys", &self.secrets.keys().collect::<Vec<_>>())
            .field("versions", &self.versions)
            .field("missing", &self.missing.names())
            .field("missing_count", &self.missing.total())
            .finish()
    }
}

impl Revealed {
    /// The slice of a shared answer that belongs to a caller who asked for `want`.
    pub(crate) fn slice_for(&self, want: &KeySelector) -> Revealed {
        match want {
            KeySelector::All => self.clone(),
            KeySelector::Names(names) => Revealed {
                secrets: names
                    .iter()
                    .filter_map(|name| Some((name.clone(), self.secrets.get(name)?.clone())))
                    .collect(),
                versions: names
                    .iter()
                    .filter_map(|name| Some((name.clone(), *self.versions.get(name)?)))
                    .collect(),
                missing: names
                    .iter()
                    .filter(|name| !self.secrets.contains_key(*name))
                    .cloned()
                    .collect(),
            },
        }
    }
}

/// The URL segments of a request; validated before anything waits or is sent.
pub(crate) fn url_segments<'a>(scope: &'a RevealScope, vault: &'a str) -> Vec<&'a str> {
    match scope {
        RevealScope::FerrVault => vec!["operator", "secrets", "reveal"],
        RevealScope::Cloud {
            organization,
            project,
            ..
        } => vec![
            "api",
            "v1",
            "orgs",
            organization,
            "projects",
            project,
            "vaults",
            "by-name",
            vault,
            "secrets",
            "reveal",
        ],
    }
}

/// Builds the HTTP request for `keys` (the frozen, possibly widened selector).
pub(crate) fn build_request(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    credential: &Credential,
    scope: &RevealScope,
    vault: &str,
    keys: &KeySelector,
) -> Result<reqwest::RequestBuilder, FerrVaultError> {
    let mut url = endpoint.url(&url_segments(scope, vault))?;
    let request = match scope {
        RevealScope::FerrVault => {
            let mut body = serde_json::Map::new();
            body.insert("vault".into(), vault.into());
            if let KeySelector::Names(names) = keys {
                body.insert("names".into(), names.iter().map(String::as_str).collect());
            }
            let body = serde_json::Value::Object(body);
            client
                .post(url)
                .header(CONTENT_TYPE, "application/json")
                .body(body.to_string())
        }
        RevealScope::Cloud { namespace, .. } => {
            if let KeySelector::Names(names) = keys {
                let joined = names.iter().map(String::as_str).collect::<Vec<_>>().join(",");
                url.query_pairs_mut().append_pair("names", &joined);
            }
            let request = client.get(url);
            if namespace.is_empty() {
                request
            } else {
                request.header("X-FerrVault-Namespace", namespace)
            }
        }
    };
    Ok(request
        .header(ACCEPT, "application/json")
        .bearer_auth(credential.bearer()))
}

#[cfg(test)]
mod decode_props;

#[cfg(test)]
mod tests {
    use super::{decode::decode, *};

    fn names(list: &[&str]) -> KeySelector {
        KeySelector::from_names(list.iter().copied())
    }

    #[test]
    fn selectors_should_widen_to_the_union_or_to_everything() {
        let mut frozen = names(&["a"]);
        frozen.widen(&names(&["b"]));
        assert_eq!(frozen, names(&["a", "b"]));
        assert!(frozen.covers(&names(&["b"])));
        assert!(!frozen.covers(&names(&["c"])));
        assert!(!frozen.covers(&KeySelector::All));
        frozen.widen(&KeySelector::All);
        assert_eq!(frozen, KeySelector::All);
        assert!(frozen.covers(&names(&["zzz"])));
        assert_eq!(names(&[]), KeySelector::All);
    }

    #[test]
    fn slice_should_give_each_caller_its_own_keys_and_missing() {
        let shared = Revealed {
            secrets: [("a", "1"), ("b", "2")]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), SecretValue(v.to_owned())))
                .collect(),
            versions: [("a".to_owned(), 1), ("b".to_owned(), 7)].into(),
            missing: ["z".to_owned()].into_iter().collect(),
        };
        let mine = shared.slice_for(&names(&["b", "z", "y"]));
        assert_eq!(mine.secrets.keys().collect::<Vec<_>>(), ["b"]);
        assert_eq!(mine.versions, [("b".to_owned(), 7)].into());
        assert_eq!(mine.missing.names(), ["y", "z"]);
        assert_eq!(shared.slice_for(&KeySelector::All), shared);
    }

    #[test]
    fn decode_should_read_both_wire_formats() {
        let fv = decode(
            &RevealScope::FerrVault,
            br#"{"hits":[{"name":"A","value":"1","version":3,"fetched_at":"2026-01-01T00:00:00Z"}],"missing":["B"]}"#,
        )
        .unwrap();
        assert_eq!(fv.secrets["A"].expose(), "1");
        assert_eq!(fv.versions, [("A".to_owned(), 3)].into());
        assert_eq!(fv.missing.names(), ["B"]);
        let cloud_scope = RevealScope::Cloud {
            organization: "o".into(),
            project: "p".into(),
            namespace: String::new(),
        };
        let cloud = decode(
            &cloud_scope,
            br#"{"secrets":{"A":"1"},"missing":null,"vault":{"id":"x"}}"#,
        )
        .unwrap();
        assert_eq!(cloud.secrets["A"].expose(), "1");
        assert!(cloud.versions.is_empty() && cloud.missing.is_empty());
    }

    #[test]
    fn revealed_debug_should_show_names_and_count_but_no_value() {
        let revealed = decode(
            &RevealScope::FerrVault,
            br#"{"hits":[{"name":"DB_PASSWORD","value":"hunter2-value","version":1,"fetched_at":"x"}]}"#,
        )
        .unwrap();
        let printed = format!("{revealed:?} {revealed:#?} {:?}", revealed.secrets);
        assert!(
            printed.contains("DB_PASSWORD") && printed.contains("count: 1"),
            "{printed}"
        );
        assert!(!printed.contains("hunter2"), "{printed}");
        let bad = decode(
            &RevealScope::FerrVault,
            br#"{"hits":[{"name":"A","value":42}],"x":"hunter2"}"#,
        );
        assert!(!format!("{bad:?}").contains("hunter2"));
    }
}
