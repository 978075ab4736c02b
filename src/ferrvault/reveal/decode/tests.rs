use serde_json::json;

use super::*;
use crate::ferrvault::ResponseBound;

fn cloud() -> RevealScope {
    RevealScope::Cloud {
        organization: "o".into(),
        project: "p".into(),
        namespace: String::new(),
    }
}

/// A body of `scope`'s format with `keys` one-byte values named `K00000`…, and `missing` names.
fn body(scope: &RevealScope, keys: usize, missing: usize) -> Vec<u8> {
    fn names(prefix: &'static str, n: usize) -> impl Iterator<Item = String> {
        (0..n).map(move |i| format!("{prefix}{i:05}"))
    }
    let missing: Vec<String> = names("M", missing).collect();
    let answer = match scope {
        RevealScope::FerrVault => json!({
            "hits": names("K", keys).map(|n| json!({ "name": n, "value": "v" })).collect::<Vec<_>>(),
            "missing": missing,
        }),
        RevealScope::Cloud { .. } => json!({
            "secrets": names("K", keys).map(|n| (n, json!("v"))).collect::<serde_json::Map<_, _>>(),
            "missing": missing,
        }),
    };
    serde_json::to_vec(&answer).expect("JSON encodes")
}

fn too_large(result: Result<Revealed, FerrVaultError>) -> Option<ResponseBound> {
    match result {
        Err(FerrVaultError::ResponseTooLarge(bound)) => Some(bound),
        other => panic!("expected ResponseTooLarge, got {other:?}"),
    }
}

#[test]
fn an_answer_should_hold_at_most_the_key_bound_found_and_missing_together() {
    for scope in [RevealScope::FerrVault, cloud()] {
        let at = decode(&scope, &body(&scope, MAX_REVEAL_KEYS - 10, 10)).expect("at the bound");
        assert_eq!((at.secrets.len(), at.missing.total()), (MAX_REVEAL_KEYS - 10, 10));
        assert_eq!(
            too_large(decode(&scope, &body(&scope, MAX_REVEAL_KEYS + 1, 0))),
            Some(ResponseBound::Keys(MAX_REVEAL_KEYS))
        );
        assert_eq!(
            too_large(decode(&scope, &body(&scope, MAX_REVEAL_KEYS - 10, 11))),
            Some(ResponseBound::Keys(MAX_REVEAL_KEYS))
        );
        assert_eq!(
            too_large(decode(&scope, &body(&scope, 0, 300_000))),
            Some(ResponseBound::Keys(MAX_REVEAL_KEYS))
        );
    }
}

#[test]
fn an_answer_should_hold_at_most_the_byte_bound_of_names_and_values() {
    // One key "A" and one missing name "B": the value takes the rest of the bound exactly.
    let value = "v".repeat(MAX_REVEAL_BYTES - 2);
    let over = "v".repeat(MAX_REVEAL_BYTES - 1);
    for scope in [RevealScope::FerrVault, cloud()] {
        let answer = |value: &str| match scope {
            RevealScope::FerrVault => json!({ "hits": [{ "name": "A", "value": value }], "missing": ["B"] }),
            RevealScope::Cloud { .. } => json!({ "secrets": { "A": value }, "missing": ["B"] }),
        };
        let at = decode(&scope, answer(&value).to_string().as_bytes()).expect("at the bound");
        assert_eq!(at.secrets["A"].expose().len(), MAX_REVEAL_BYTES - 2);
        assert_eq!(
            too_large(decode(&scope, answer(&over).to_string().as_bytes())),
            Some(ResponseBound::Bytes(MAX_REVEAL_BYTES))
        );
    }
}

#[test]
fn decoding_should_stop_where_a_bound_is_crossed_not_at_the_end() {
    // Past the bound the body is not even JSON: a decoder that read on would report that.
    let mut body = body(&RevealScope::FerrVault, MAX_REVEAL_KEYS + 1, 0);
    body.truncate(body.len() - 20);
    body.extend_from_slice(b"\xff not json at all");
    assert_eq!(
        too_large(decode(&RevealScope::FerrVault, &body)),
        Some(ResponseBound::Keys(MAX_REVEAL_KEYS))
    );
}

#[test]
fn many_missing_names_should_be_kept_as_the_first_hundred_and_a_count() {
    let revealed = decode(&RevealScope::FerrVault, &body(&RevealScope::FerrVault, 1, 1000)).unwrap();
    assert_eq!(revealed.missing.total(), 1000);
    assert_eq!(revealed.missing.names().len(), MissingKeys::SHOWN);
    assert_eq!(revealed.missing.names()[0], "M00000");
    let repeated = br#"{"hits":[],"missing":["b","a","b",null]}"#;
    assert!(
        decode(&RevealScope::FerrVault, repeated).is_err(),
        "a null name is not a name"
    );
    let repeated = br#"{"hits":[],"missing":["b","a","b"]}"#;
    let revealed = decode(&RevealScope::FerrVault, repeated).unwrap();
    assert_eq!(
        (revealed.missing.names(), revealed.missing.total()),
        (&["a".to_owned(), "b".to_owned()][..], 2)
    );
}

#[test]
fn each_format_should_read_its_own_field_and_skip_the_other() {
    let both = br#"{"hits":[{"name":"H","value":"1"}],"secrets":{"S":"2"},"missing":null,"x":[{"y":[]}]}"#;
    let fv = decode(&RevealScope::FerrVault, both).unwrap();
    assert_eq!(fv.secrets.keys().collect::<Vec<_>>(), ["H"]);
    let cloud = decode(&cloud(), both).unwrap();
    assert_eq!(cloud.secrets.keys().collect::<Vec<_>>(), ["S"]);
    assert!(decode(&RevealScope::FerrVault, b"{}").unwrap().secrets.is_empty());
}

#[test]
fn malformed_answers_should_be_decode_errors_as_a_derived_decoder_reports_them() {
    for body in [
        &br#"{"hits":[{"name":"A"}]}"#[..],
        br#"{"hits":[{"value":"v"}]}"#,
        br#"{"hits":[{"name":"A","name":"B","value":"v"}]}"#,
        br#"{"hits":[],"hits":[]}"#,
        br#"{"hits":[],"missing":[],"missing":[]}"#,
        br#"{"hits":null}"#,
        br#"{"hits":[{"name":"A","value":42}]}"#,
        br#"[]"#,
        br#"{"hits":[]} trailing"#,
    ] {
        let error = decode(&RevealScope::FerrVault, body).unwrap_err();
        assert_eq!(error.reason(), "DecodeError", "{}", String::from_utf8_lossy(body));
    }
    let error = decode(&cloud(), br#"{"secrets":{"A":1}}"#).unwrap_err();
    assert_eq!(error.reason(), "DecodeError");
}
