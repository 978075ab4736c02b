//! What one transform step must have done (reference §3.7 and the guarantees of
//! `reconcile::rules::transforms`), said independently of how it is done.

use ferrvault_operator::{
    api::{Transform, TransformType},
    rules::{
        MAX_SECRET_BYTES, SecretData, TransformFailure,
        json_expand::{ExpandFailure, MAX_LEAVES},
        payload_bytes,
    },
};

/// `step` turned `input` into `output` as its type says.
pub fn assert_step(step: &Transform, input: &SecretData, output: &SecretData) {
    match step.type_ {
        TransformType::Prefix | TransformType::Suffix => assert_affixed(step, input, output),
        TransformType::Rename => assert_renamed(field(&step.from), field(&step.to), input, output),
        TransformType::Base64Decode => assert_decoded(&step.keys, input, output),
        TransformType::JsonExpand => assert_expanded(field(&step.key), input, output),
        TransformType::Unknown => panic!("a step of unknown type succeeded"),
    }
}

/// The text of an optional field, "" when unset.
fn field(text: &Option<String>) -> &str {
    text.as_deref().unwrap_or_default()
}

/// Every key has the affix added (none: unchanged), values kept.
fn assert_affixed(step: &Transform, input: &SecretData, output: &SecretData) {
    let affix = field(&step.value);
    let expected: SecretData = input
        .iter()
        .map(|(key, value)| {
            let key = match step.type_ {
                TransformType::Prefix => format!("{affix}{key}"),
                _ => format!("{key}{affix}"),
            };
            (key, value.clone())
        })
        .collect();
    assert_eq!(output, &expected, "{} {affix:?}", step.type_.as_str());
}

/// `from` moved to `to` (a missing `from` or `from == to`: unchanged).
fn assert_renamed(from: &str, to: &str, input: &SecretData, output: &SecretData) {
    let mut expected = input.clone();
    if from != to
        && let Some(value) = expected.remove(from)
    {
        assert!(!input.contains_key(to), "rename onto an existing key succeeded");
        expected.insert(to.to_owned(), value);
    }
    assert_eq!(output, &expected, "rename {from:?} to {to:?}");
}

/// Same keys; the selected ones (all when none is) shrunk to at most 3/4 of their text, the
/// others unchanged.
fn assert_decoded(keys: &[String], input: &SecretData, output: &SecretData) {
    assert!(input.keys().eq(output.keys()), "base64Decode changed the keys");
    for (key, value) in input {
        let decoded = &output[key];
        if keys.is_empty() || keys.contains(key) {
            assert!(
                decoded.len() <= value.len() * 3 / 4,
                "key {key:?} grew when decoded"
            );
        } else {
            assert_eq!(decoded, value, "key {key:?} was not selected");
        }
    }
}

/// The source key replaced by at most [`MAX_LEAVES`] keys under its upper-cased name, the other
/// keys unchanged (a missing source: unchanged).
fn assert_expanded(key: &str, input: &SecretData, output: &SecretData) {
    if !input.contains_key(key) {
        assert_eq!(output, input, "jsonExpand of a missing key changed the content");
        return;
    }
    assert!(!output.contains_key(key), "jsonExpand kept its source key");
    for (other, value) in input.iter().filter(|(other, _)| *other != key) {
        assert_eq!(output.get(other), Some(value), "jsonExpand changed key {other:?}");
    }
    let stem = format!("{}_", key.to_uppercase());
    let added = output.keys().filter(|name| !input.contains_key(*name));
    assert!(
        added.clone().all(|name| name.starts_with(&stem)),
        "a leaf outside {stem:?}"
    );
    assert!(added.count() <= MAX_LEAVES, "more leaves than the cap");
}

/// The failure of `step` over `input` is its own, and any key it quotes is the one at fault.
pub fn assert_failure(failure: &TransformFailure, step: &Transform, input: &SecretData) {
    let (key, to) = (field(&step.key), field(&step.to));
    match failure {
        TransformFailure::UnknownType => assert_eq!(step.type_, TransformType::Unknown),
        TransformFailure::RenameNeedsFromAndTo => assert!(field(&step.from).is_empty() || to.is_empty()),
        TransformFailure::DestinationExists(name) => assert!(name == to && input.contains_key(to)),
        TransformFailure::NotBase64(name) => assert!(
            input.contains_key(name) && (step.keys.is_empty() || step.keys.contains(name)),
            "{name:?}"
        ),
        TransformFailure::JsonExpandNeedsKey => assert!(key.is_empty()),
        TransformFailure::JsonExpand(expand) => assert_expand_failure(expand, key, input),
        TransformFailure::OutputTooLarge { limit } => {
            assert_eq!(*limit, MAX_SECRET_BYTES);
            assert_too_large(step, input);
        }
    }
}

fn assert_expand_failure(failure: &ExpandFailure, key: &str, input: &SecretData) {
    match failure {
        ExpandFailure::NotJson(name)
        | ExpandFailure::NotJsonObject(name)
        | ExpandFailure::TooDeep(name)
        | ExpandFailure::TooManyValues(name)
        | ExpandFailure::TooManyLeaves(name) => assert!(name == key && input.contains_key(key), "{name:?}"),
        ExpandFailure::ExpandedKeyCollides(name) => {
            assert!(name.starts_with(&format!("{}_", key.to_uppercase())), "{name:?}")
        }
        ExpandFailure::OutputTooLarge { .. } => panic!("jsonExpand's limit is reported as the step's"),
    }
}

/// An output over the limit: prefix and suffix compute it before building (every key grows by
/// the affix); rename and base64Decode cannot grow their input, so it was over already.
fn assert_too_large(step: &Transform, input: &SecretData) {
    let size = payload_bytes(input);
    match step.type_ {
        TransformType::Prefix | TransformType::Suffix => {
            let grown = size + field(&step.value).len() * input.len();
            assert!(grown > MAX_SECRET_BYTES, "{grown} bytes refused");
        }
        TransformType::Rename | TransformType::Base64Decode => {
            assert!(size > MAX_SECRET_BYTES, "{size} bytes refused")
        }
        TransformType::JsonExpand => {}
        TransformType::Unknown => panic!("a step of unknown type measured its output"),
    }
}
