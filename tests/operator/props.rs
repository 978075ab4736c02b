//! Property tests (the CI-run equivalent of fuzzing, issue 7 item 10) for the pure reconcile
//! rules that read user- or server-controlled input: transforms and duration parsing.

use std::time::Duration;

use base64::Engine as _;
use ferrvault_operator::{
    api::{GO_DURATION_PATTERN, Transform, TransformType},
    rules::{DurationProblem, SecretData, apply_transforms, format_go_duration, parse_go_duration},
};
use proptest::{collection, prelude::*};

/// Marks every generated value; keys and transform fields never contain it, so finding it in an
/// error means a value leaked.
const VALUE_MARKER: &str = "\u{1f512}";

fn key() -> impl Strategy<Value = String> {
    "[A-Za-z_.]{0,6}"
}

/// A value that is opaque, base64, or a JSON object (so every transform gets exercised), always
/// carrying [`VALUE_MARKER`] in plain text or inside JSON strings.
fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        collection::vec(any::<u8>(), 0..24).prop_map(|mut bytes| {
            bytes.extend_from_slice(VALUE_MARKER.as_bytes());
            bytes
        }),
        collection::vec(any::<u8>(), 0..24).prop_map(|bytes| base64::engine::general_purpose::STANDARD
            .encode(bytes)
            .into_bytes()),
        collection::btree_map(key(), "[a-z]{0,4}", 0..4).prop_map(|object| {
            let object: serde_json::Map<String, serde_json::Value> = object
                .into_iter()
                .map(|(k, v)| (k, format!("{v}{VALUE_MARKER}").into()))
                .collect();
            serde_json::Value::Object(object).to_string().into_bytes()
        }),
    ]
}

fn data() -> impl Strategy<Value = SecretData> {
    collection::btree_map(key(), value(), 0..6)
}

fn transform_type() -> impl Strategy<Value = TransformType> {
    prop_oneof![
        Just(TransformType::Prefix),
        Just(TransformType::Suffix),
        Just(TransformType::Rename),
        Just(TransformType::Base64Decode),
        Just(TransformType::JsonExpand),
    ]
}

fn transform(types: impl Strategy<Value = TransformType>) -> impl Strategy<Value = Transform> {
    (
        types,
        proptest::option::of(key()),
        proptest::option::of(key()),
        proptest::option::of(key()),
    )
        .prop_flat_map(|(type_, value, from, to)| {
            (proptest::option::of(key()), collection::vec(key(), 0..3)).prop_map(move |(key, keys)| {
                Transform {
                    type_,
                    value: value.clone(),
                    from: from.clone(),
                    to: to.clone(),
                    key,
                    keys,
                }
            })
        })
}

fn sorted_values(data: &SecretData) -> Vec<Vec<u8>> {
    let mut values: Vec<Vec<u8>> = data.values().cloned().collect();
    values.sort();
    values
}

proptest! {
    #[test]
    fn transforms_should_never_panic_nor_leak_a_value_into_an_error(
        input in data(),
        steps in collection::vec(transform(transform_type()), 0..5),
    ) {
        let before = input.clone();
        if let Err(error) = apply_transforms(&input, &steps) {
            prop_assert!(!error.to_string().contains(VALUE_MARKER), "{error}");
            prop_assert!(!format!("{error:?}").contains(VALUE_MARKER), "{error:?}");
            prop_assert!(error.index < steps.len());
            prop_assert_eq!(error.transform, steps[error.index].type_);
        }
        prop_assert_eq!(input, before, "the input must never be modified");
    }

    #[test]
    fn prefix_suffix_and_rename_should_preserve_the_values(
        input in data(),
        steps in collection::vec(
            transform(prop_oneof![Just(TransformType::Prefix), Just(TransformType::Suffix), Just(TransformType::Rename)]),
            0..6,
        ),
    ) {
        if let Ok(output) = apply_transforms(&input, &steps) {
            prop_assert_eq!(sorted_values(&output), sorted_values(&input));
        }
    }

    #[test]
    fn base64_decode_should_round_trip_any_bytes_in_either_alphabet(
        raw in collection::btree_map(key(), collection::vec(any::<u8>(), 0..64), 0..6),
        url_safe in any::<bool>(),
    ) {
        let engine = if url_safe {
            base64::engine::general_purpose::URL_SAFE
        } else {
            base64::engine::general_purpose::STANDARD
        };
        let encoded: SecretData = raw.iter().map(|(k, v)| (k.clone(), engine.encode(v).into_bytes())).collect();
        let decode_all = Transform {
            type_: TransformType::Base64Decode,
            value: None, from: None, to: None, key: None, keys: Vec::new(),
        };
        prop_assert_eq!(apply_transforms(&encoded, &[decode_all]).unwrap(), raw);
    }

    #[test]
    fn duration_parsing_should_never_panic(text in "\\PC{0,24}") {
        let _ = parse_go_duration(&text); // the property is "returns"; the value is irrelevant here
    }

    #[test]
    fn formatted_durations_should_parse_back_to_the_same_value(nanos in 0..=i64::MAX as u64) {
        let duration = Duration::from_nanos(nanos);
        prop_assert_eq!(parse_go_duration(&format_go_duration(duration)), Ok(duration));
    }

    #[test]
    fn the_crd_pattern_and_the_parser_should_accept_the_same_language(
        text in "(0|[0-9.]{0,3}(ns|us|µs|μs|ms|s|m|h|d|x|)){0,3}[ +-]?",
    ) {
        let pattern = regex::Regex::new(GO_DURATION_PATTERN).unwrap();
        let parsed = parse_go_duration(&text);
        let in_language = match &parsed {
            Ok(_) => true,
            Err(error) => error.problem == DurationProblem::Overflow,
        };
        prop_assert_eq!(pattern.is_match(&text), in_language, "{:?} parsed as {:?}", text, parsed);
    }
}
