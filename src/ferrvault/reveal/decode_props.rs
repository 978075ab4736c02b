//! Property tests of the reveal response decoder (issue 7, fuzzing): whatever a server sends,
//! [`decode`] returns instead of panicking, and neither its error nor the `Debug` of what it
//! returns ever carries a secret value; an answer decodes exactly when its keys and its bytes
//! are within the bounds, however they are split (issue 34).

use proptest::prelude::*;

use super::{decode::decode, *};
use crate::ferrvault::{MAX_REVEAL_BYTES, MAX_REVEAL_KEYS, ResponseBound};

fn scopes() -> [RevealScope; 2] {
    [
        RevealScope::FerrVault,
        RevealScope::Cloud {
            organization: "acme".into(),
            project: "shop".into(),
            namespace: "default".into(),
        },
    ]
}

/// A well-formed body of `scope` carrying `secrets`.
fn body(scope: &RevealScope, secrets: &[(String, String)]) -> Vec<u8> {
    let json = match scope {
        RevealScope::FerrVault => serde_json::json!({
            "hits": secrets.iter().map(|(k, v)| serde_json::json!({ "name": k, "value": v })).collect::<Vec<_>>(),
            "missing": ["absent"],
        }),
        RevealScope::Cloud { .. } => serde_json::json!({
            "secrets": secrets.iter().cloned().collect::<BTreeMap<_, _>>(),
            "missing": ["absent"],
        }),
    };
    serde_json::to_vec(&json).expect("JSON encodes")
}

/// How a body is broken: cut short, one byte replaced, or a value swapped for another JSON type.
#[derive(Debug, Clone)]
enum Damage {
    Truncate(usize),
    Replace(usize, u8),
    Retype(&'static str),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        any::<usize>().prop_map(Damage::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Damage::Replace(at, byte)),
        prop::sample::select(vec!["42", "true", "null", "[1]", "{\"x\":1}"]).prop_map(Damage::Retype),
    ]
}

fn apply(mut bytes: Vec<u8>, damage: &Damage, value: &str) -> Vec<u8> {
    match damage {
        Damage::Truncate(at) => bytes.truncate(at % (bytes.len() + 1)),
        Damage::Replace(at, byte) => {
            let at = at % bytes.len();
            bytes[at] = *byte;
        }
        Damage::Retype(other) => {
            let text = String::from_utf8(bytes).expect("our JSON is UTF-8");
            bytes = text.replacen(&format!("\"{value}\""), other, 1).into_bytes();
        }
    }
    bytes
}

/// Whether `text` shows `value` (or a long piece of it, as a truncated quote would).
fn shows(text: &str, value: &str) -> bool {
    let piece = &value[..value.len().min(12)];
    text.contains(piece)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_should_never_panic_the_decoder(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        for scope in scopes() {
            let _ = decode(&scope, &bytes);
        }
    }

    #[test]
    fn well_formed_bodies_should_decode_to_exactly_their_secrets(
        secrets in prop::collection::btree_map("[A-Z_]{1,12}", "\\PC{0,40}", 0..8),
    ) {
        let secrets: Vec<(String, String)> = secrets.into_iter().collect();
        for scope in scopes() {
            let revealed = decode(&scope, &body(&scope, &secrets)).expect("a well-formed body decodes");
            let got: Vec<(String, String)> = revealed
                .secrets
                .iter()
                .map(|(k, v)| (k.clone(), v.expose().to_owned()))
                .collect();
            prop_assert_eq!(&got, &secrets);
            prop_assert_eq!(revealed.missing.names(), &["absent".to_owned()]);
        }
    }

    #[test]
    fn damaged_bodies_should_never_put_a_value_in_an_error_or_debug_output(
        value in "SV[a-zA-Z0-9]{14,30}",
        damage in damage(),
    ) {
        for scope in scopes() {
            let secrets = [("DB_URL".to_owned(), value.clone())];
            let bytes = apply(body(&scope, &secrets), &damage, &value);
            let shown = match decode(&scope, &bytes) {
                Ok(revealed) => format!("{revealed:?}"),
                Err(error) => format!("{error} {error:?}"),
            };
            prop_assert!(!shows(&shown, &value), "{:?} showed the value: {}", damage, shown);
        }
    }
}

/// A body of `scope` with `found` one-byte values named `K…` and `missing` names `M…`.
fn counted_body(scope: &RevealScope, found: usize, missing: usize) -> Vec<u8> {
    let secrets: Vec<(String, String)> = (0..found).map(|i| (format!("K{i:05}"), "v".to_owned())).collect();
    let mut json: serde_json::Value = serde_json::from_slice(&body(scope, &secrets)).expect("our JSON");
    json["missing"] = (0..missing).map(|i| format!("M{i:05}")).collect();
    serde_json::to_vec(&json).expect("JSON encodes")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn answers_should_decode_exactly_when_their_keys_are_within_the_bound(
        total in (MAX_REVEAL_KEYS - 2)..=(MAX_REVEAL_KEYS + 2),
        found_share in 0.0f64..=1.0,
    ) {
        let found = (total as f64 * found_share) as usize;
        for scope in scopes() {
            match decode(&scope, &counted_body(&scope, found, total - found)) {
                Ok(revealed) => {
                    prop_assert!(total <= MAX_REVEAL_KEYS);
                    prop_assert_eq!(revealed.secrets.len() + revealed.missing.total(), total);
                }
                Err(error) => {
                    prop_assert!(total > MAX_REVEAL_KEYS, "{}", error);
                    prop_assert!(matches!(error, FerrVaultError::ResponseTooLarge(ResponseBound::Keys(_))));
                }
            }
        }
    }

    #[test]
    fn answers_should_decode_exactly_when_their_bytes_are_within_the_bound(
        over in -2i64..=2,
        first_share in 0.0f64..=1.0,
    ) {
        // Names "A" and "B" take two bytes; the values share the rest, plus `over`.
        let values = (MAX_REVEAL_BYTES as i64 - 2 + over) as usize;
        let first = (values as f64 * first_share) as usize;
        let (a, b) = ("a".repeat(first), "b".repeat(values - first));
        for scope in scopes() {
            let body = match scope {
                RevealScope::FerrVault => {
                    format!(r#"{{"hits":[{{"name":"A","value":"{a}"}},{{"name":"B","value":"{b}"}}]}}"#)
                }
                RevealScope::Cloud { .. } => format!(r#"{{"secrets":{{"A":"{a}","B":"{b}"}}}}"#),
            };
            match decode(&scope, body.as_bytes()) {
                Ok(_) => prop_assert!(over <= 0),
                Err(error) => {
                    prop_assert!(over > 0, "{}", error);
                    prop_assert!(matches!(error, FerrVaultError::ResponseTooLarge(ResponseBound::Bytes(_))));
                }
            }
        }
    }
}
