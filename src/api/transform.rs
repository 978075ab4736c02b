//! The steps of a FerrVaultSecret's `spec.transforms`: [`Transform`] and its [`TransformType`].
//! What each step does to the revealed values is `reconcile::rules::content::transforms`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::bounds::{MAX_KEY_NAMES, MAX_SECRET_KEY};

/// One transform step. Which fields matter depends on `type`: `prefix`/`suffix` use `value` (none
/// is a no-op), `rename` needs `from` and `to`, `jsonExpand` needs `key`, `base64Decode` takes
/// optional `keys`. As in the Go CRD the schema does not require them: a missing one fails the
/// sync with `TransformError` naming it.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Transform {
    /// What the step does: `prefix`, `suffix`, `rename`, `base64Decode` or `jsonExpand`.
    #[serde(rename = "type")]
    pub type_: TransformType,
    /// `prefix`/`suffix`: the text added to every key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_SECRET_KEY))]
    pub value: Option<String>,
    /// `rename`: the key to move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_SECRET_KEY))]
    pub from: Option<String>,
    /// `rename`: its new name; must not exist yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_SECRET_KEY))]
    pub to: Option<String>,
    /// `jsonExpand`: the key whose JSON object value is flattened into `KEY_SUBKEY` keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_SECRET_KEY))]
    pub key: Option<String>,
    /// `base64Decode`: the keys to decode; empty means every key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_KEY_NAMES), inner(length(max = MAX_SECRET_KEY)))]
    pub keys: Vec<String>,
}

impl Transform {
    /// A step of `type_` with every parameter unset, as a manifest naming only its type reads.
    pub fn of_type(type_: TransformType) -> Self {
        Self {
            type_,
            value: None,
            from: None,
            to: None,
            key: None,
            keys: Vec::new(),
        }
    }
}

/// The transform types.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TransformType {
    /// Prepend `value` to every key.
    Prefix,
    /// Append `value` to every key.
    Suffix,
    /// Move key `from` to `to`.
    Rename,
    /// Base64-decode the values of `keys` (or all keys), standard then URL-safe alphabet.
    Base64Decode,
    /// Flatten the JSON object at `key` into upper-cased `KEY_SUBKEY` entries.
    JsonExpand,
    /// Any other `type`, stored by an API server that did not validate the schema. Read as this
    /// variant (not refused) so one such object fails alone with `TransformError` instead of
    /// failing the typed list of every FerrVaultSecret. Not part of the CRD schema.
    #[serde(other)]
    #[schemars(skip)]
    Unknown,
}

impl TransformType {
    /// The spelling used in the CRD, and in transform error messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Prefix => "prefix",
            Self::Suffix => "suffix",
            Self::Rename => "rename",
            Self::Base64Decode => "base64Decode",
            Self::JsonExpand => "jsonExpand",
            Self::Unknown => "unknown",
        }
    }
}
