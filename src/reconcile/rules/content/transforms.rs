//! The `spec.transforms` pipeline (reference §3.7), over byte values.
//!
//! # Guarantees
//! - Transforms run in order on a copy; the input is never modified.
//! - On error nothing is returned but the error, so the caller writes nothing and workloads keep
//!   the last good value.
//! - Errors carry the transform's index and type and, at most, a key name: never a value. (The
//!   base64 and JSON parser errors are dropped on purpose: they can quote input bytes.)
//! - Values are bytes: `base64Decode` of binary data (a keystore, a DER certificate) survives.
//! - No step builds an output over [`MAX_SECRET_BYTES`] (issue 34): `prefix` and `suffix`
//!   compute their output's size before renaming anything, `jsonExpand` tracks it while
//!   expanding (and caps depth and leaves, see [`json_expand`]); `rename` (one key) and
//!   `base64Decode` (shrinks values) cannot grow the data they are given, and their output is
//!   measured after them. A step over the limit fails with [`TransformFailure::OutputTooLarge`]
//!   naming it, even when a later `base64Decode` would have shrunk the content again (put the
//!   decode first).
//! - Bounded work: with the output bound, a step's work grows with its input (about n log n in
//!   its keys), and the input of the first step is bounded by the reveal's own caps. Callers run the pipeline off the async runtime's
//!   threads all the same (`reconcile::secret::sync::payload`).
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
    MAX_SECRET_BYTES, SecretData,
    json_expand::{self, ExpandFailure},
    payload_bytes,
};
use crate::api::{Reason, Transform, TransformType};

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

impl TransformError {
    /// The condition reason: `SecretTooLarge` for an output over the limit, else `TransformError`.
    pub fn reason(&self) -> Reason {
        match self.failure {
            TransformFailure::OutputTooLarge { .. } => Reason::SecretTooLarge,
            TransformFailure::UnknownType
            | TransformFailure::RenameNeedsFromAndTo
            | TransformFailure::DestinationExists(_)
            | TransformFailure::NotBase64(_)
            | TransformFailure::JsonExpandNeedsKey
            | TransformFailure::JsonExpand(_) => Reason::TransformError,
        }
    }
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
    JsonExpand(ExpandFailure),
    /// The step's output would be over the limit of a Secret; it was not built (or, for steps
    /// that cannot grow their input, not kept).
    #[error("output over the {limit}-byte limit of a Secret")]
    OutputTooLarge {
        /// The limit, [`MAX_SECRET_BYTES`].
        limit: usize,
    },
}

impl From<ExpandFailure> for TransformFailure {
    fn from(failure: ExpandFailure) -> Self {
        match failure {
            ExpandFailure::OutputTooLarge { limit } => Self::OutputTooLarge { limit },
            other @ (ExpandFailure::NotJson(_)
            | ExpandFailure::NotJsonObject(_)
            | ExpandFailure::ExpandedKeyCollides(_)
            | ExpandFailure::TooDeep(_)
            | ExpandFailure::TooManyValues(_)
            | ExpandFailure::TooManyLeaves(_)) => Self::JsonExpand(other),
        }
    }
}

/// Applies `transforms` in order to a copy of `input`; no step's output is over
/// [`MAX_SECRET_BYTES`] (see the module guarantees).
///
/// # Errors
/// The first failing transform, as a [`TransformError`]; [`TransformError::reason`] says which
/// condition reason it is.
pub fn apply_transforms(input: &SecretData, transforms: &[Transform]) -> Result<SecretData, TransformError> {
    apply_transforms_owned(input.clone(), transforms)
}

/// [`apply_transforms`] on `input` itself, for a caller that has no further use for it (one copy
/// of the content fewer).
///
/// # Errors
/// As [`apply_transforms`].
pub(crate) fn apply_transforms_owned(
    input: SecretData,
    transforms: &[Transform],
) -> Result<SecretData, TransformError> {
    transforms
        .iter()
        .enumerate()
        .try_fold(input, |data, (index, transform)| {
            apply_one(data, transform).map_err(|failure| TransformError {
                index,
                transform: transform.type_,
                failure,
            })
        })
}

fn apply_one(data: SecretData, transform: &Transform) -> Result<SecretData, TransformFailure> {
    let affix = non_empty(&transform.value);
    let output = match transform.type_ {
        TransformType::Prefix => affixed(data, affix, |affix, key| format!("{affix}{key}"))?,
        TransformType::Suffix => affixed(data, affix, |affix, key| format!("{key}{affix}"))?,
        TransformType::Rename => match (non_empty(&transform.from), non_empty(&transform.to)) {
            (Some(from), Some(to)) => rename(data, from, to)?,
            _ => return Err(TransformFailure::RenameNeedsFromAndTo),
        },
        TransformType::Base64Decode => base64_decode(data, &transform.keys)?,
        TransformType::JsonExpand => match non_empty(&transform.key) {
            Some(key) => json_expand::expand(data, key, MAX_SECRET_BYTES)?,
            None => return Err(TransformFailure::JsonExpandNeedsKey),
        },
        TransformType::Unknown => return Err(TransformFailure::UnknownType),
    };
    within_limit(payload_bytes(&output))?;
    Ok(output)
}

/// `Ok` when `size` fits in a Secret.
fn within_limit(size: usize) -> Result<(), TransformFailure> {
    if size > MAX_SECRET_BYTES {
        return Err(TransformFailure::OutputTooLarge {
            limit: MAX_SECRET_BYTES,
        });
    }
    Ok(())
}

/// `prefix`/`suffix`: every key renamed by `new_key(affix, key)`, once the output's size (each key
/// grows by the affix) is known to fit; no affix is a no-op.
fn affixed(
    data: SecretData,
    affix: Option<&str>,
    new_key: impl Fn(&str, &str) -> String,
) -> Result<SecretData, TransformFailure> {
    let Some(affix) = affix else {
        return Ok(data);
    };
    let grown = affix
        .len()
        .checked_mul(data.len())
        .and_then(|growth| growth.checked_add(payload_bytes(&data)));
    within_limit(grown.unwrap_or(usize::MAX))?;
    Ok(rename_all(data, |key| new_key(affix, key)))
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

/// Decodes the listed keys (missing ones ignored), or every key when `keys` is empty, in key
/// order. A key listed twice is decoded once: decoding already-decoded bytes again is never what
/// was meant.
fn base64_decode(mut data: SecretData, keys: &[String]) -> Result<SecretData, TransformFailure> {
    if keys.is_empty() {
        for (key, value) in &mut data {
            decode_value(key, value)?;
        }
        return Ok(data);
    }
    let selected: BTreeSet<&String> = keys.iter().collect();
    for key in selected {
        if let Some(value) = data.get_mut(key) {
            decode_value(key, value)?;
        }
    }
    Ok(data)
}

/// Replaces `value` (of `key`) by its base64 decoding.
fn decode_value(key: &str, value: &mut Vec<u8>) -> Result<(), TransformFailure> {
    *value = decode_base64(value).ok_or_else(|| TransformFailure::NotBase64(key.to_owned()))?;
    Ok(())
}

/// `encoded` decoded as Go's decoders would (`\r` and `\n` ignored, standard then URL-safe
/// alphabet), or `None` when it is base64 in neither; also the template filter `base64decode`.
pub(crate) fn decode_base64(encoded: &[u8]) -> Option<Vec<u8>> {
    let encoded: Vec<u8> = encoded
        .iter()
        .copied()
        .filter(|b| !matches!(b, b'\r' | b'\n'))
        .collect();
    STANDARD
        .decode(&encoded)
        .or_else(|_| URL_SAFE.decode(&encoded))
        .ok()
}

#[cfg(test)]
mod tests;
