//! The `spec.transforms` pipeline (reference §3.7), over byte values.
//!
//! # Guarantees
//! - Transforms run in order on a copy; the input is never modified.
//! - On error nothing is returned but the error, so the caller writes nothing and workloads keep
//!   the last good value.
//! - Errors carry the transform's index and type and, at most, a key name: never a value. (The
//!   base64 and JSON parser errors are dropped on purpose: they can quote input bytes.)
//! - Values are bytes: `base64Decode` of binary data (a keystore, a DER certificate) survives.
//!
//! # Assumptions
//! The CRD's CEL rules already refuse items missing their fields; the same checks are repeated
//! here with the same messages in case validation was bypassed.

use std::collections::BTreeSet;

use base64::{
    Engine as _, alphabet,
    engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig},
};

use super::{
    SecretData,
    json_expand::{self, ExpandFailure},
};
use crate::api::{Transform, TransformType};

/// A transform that failed: which one, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("transforms[{index}] ({}): {failure}", transform.as_str())]
pub struct TransformError {
    /// Position in `spec.transforms`, from 0.
    pub index: usize,
    /// The failing transform's type.
    pub transform: TransformType,
    /// What went wrong.
    pub failure: TransformFailure,
}

/// Why one transform failed. Texts follow the Go operator's; key names only, never values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransformFailure {
    /// A `type` outside the CRD's enum (stored without schema validation).
    #[error("unknown transform type; expected prefix, suffix, rename, base64Decode or jsonExpand")]
    UnknownType,
    /// `rename` without a non-empty `from` and `to`.
    #[error("rename requires both `from` and `to`")]
    RenameNeedsFromAndTo,
    /// `rename` onto a key that already exists.
    #[error("destination key {0:?} already exists")]
    DestinationExists(String),
    /// `base64Decode` of a value that is base64 in neither the standard nor the URL-safe alphabet.
    #[error("key {0:?}: not valid base64")]
    NotBase64(String),
    /// `jsonExpand` without a non-empty `key`.
    #[error("jsonExpand requires `key`")]
    JsonExpandNeedsKey,
    /// `jsonExpand` failed on its value.
    #[error(transparent)]
    JsonExpand(#[from] ExpandFailure),
}

/// Applies `transforms` in order to a copy of `input`.
///
/// # Errors
/// The first failing transform, as a [`TransformError`].
pub fn apply_transforms(input: &SecretData, transforms: &[Transform]) -> Result<SecretData, TransformError> {
    transforms
        .iter()
        .enumerate()
        .try_fold(input.clone(), |data, (index, transform)| {
            apply_one(data, transform).map_err(|failure| TransformError {
                index,
                transform: transform.type_,
                failure,
            })
        })
}

fn apply_one(data: SecretData, transform: &Transform) -> Result<SecretData, TransformFailure> {
    let affix = non_empty(&transform.value).unwrap_or_default();
    match transform.type_ {
        TransformType::Prefix => Ok(rename_all(data, |key| format!("{affix}{key}"))),
        TransformType::Suffix => Ok(rename_all(data, |key| format!("{key}{affix}"))),
        TransformType::Rename => match (non_empty(&transform.from), non_empty(&transform.to)) {
            (Some(from), Some(to)) => rename(data, from, to),
            _ => Err(TransformFailure::RenameNeedsFromAndTo),
        },
        TransformType::Base64Decode => base64_decode(data, &transform.keys),
        TransformType::JsonExpand => match non_empty(&transform.key) {
            Some(key) => Ok(json_expand::expand(data, key)?),
            None => Err(TransformFailure::JsonExpandNeedsKey),
        },
        TransformType::Unknown => Err(TransformFailure::UnknownType),
    }
}

/// An optional field's text, treating "" like absent (as the Go operator's empty checks do).
fn non_empty(field: &Option<String>) -> Option<&str> {
    field.as_deref().filter(|text| !text.is_empty())
}

/// Renames every key; used by prefix and suffix, which are injective, so no key is lost.
fn rename_all(data: SecretData, new_key: impl Fn(&str) -> String) -> SecretData {
    data.into_iter()
        .map(|(key, value)| (new_key(&key), value))
        .collect()
}

/// Moves `from` to `to`: a missing `from` or `from == to` is a no-op; an existing `to` fails.
fn rename(mut data: SecretData, from: &str, to: &str) -> Result<SecretData, TransformFailure> {
    if from == to || !data.contains_key(from) {
        return Ok(data);
    }
    if data.contains_key(to) {
        return Err(TransformFailure::DestinationExists(to.to_owned()));
    }
    let value = data.remove(from).expect("presence checked above");
    data.insert(to.to_owned(), value);
    Ok(data)
}

/// Go's `base64.StdEncoding`/`URLEncoding` decoders: padding required, non-zero trailing bits
/// accepted, `\r` and `\n` ignored.
const GO_DECODER: GeneralPurposeConfig = GeneralPurposeConfig::new()
    .with_decode_allow_trailing_bits(true)
    .with_decode_padding_mode(DecodePaddingMode::RequireCanonical);
const STANDARD: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, GO_DECODER);
const URL_SAFE: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, GO_DECODER);

/// Decodes the listed keys (missing ones ignored), or every key when `keys` is empty. A key
/// listed twice is decoded once: decoding already-decoded bytes again is never what was meant.
fn base64_decode(mut data: SecretData, keys: &[String]) -> Result<SecretData, TransformFailure> {
    let selected: BTreeSet<String> = if keys.is_empty() {
        data.keys().cloned().collect()
    } else {
        keys.iter()
            .filter(|key| data.contains_key(*key))
            .cloned()
            .collect()
    };
    for key in selected {
        let value = data.get_mut(&key).expect("selected keys exist");
        let encoded: Vec<u8> = value
            .iter()
            .copied()
            .filter(|b| !matches!(b, b'\r' | b'\n'))
            .collect();
        *value = STANDARD
            .decode(&encoded)
            .or_else(|_| URL_SAFE.decode(&encoded))
            .map_err(|_| TransformFailure::NotBase64(key.clone()))?;
    }
    Ok(data)
}

#[cfg(test)]
mod tests;
