//! How a FerrVaultSecret shapes its target Secret beyond the content (issue 36, points 4-6):
//! immutability, who owns the Secret and what its deletion does, and the labels and annotations
//! put on it. The fields live in [`SecretTarget`](super::SecretTarget); the types are here.
//!
//! # Guarantees (enforced by the CRD schema; the reconciler checks the same again)
//! - Every field is optional and nothing is defaulted into stored objects (absent reads as
//!   today's behaviour: a mutable Secret, controlled by the FerrVaultSecret, deleted with it, with
//!   no metadata of the tenant's), so GitOps tools see no drift and Go-era manifests re-apply.
//! - `target.metadata.labels` and `.annotations` hold at most [`MAX_TARGET_LABELS`] and
//!   [`MAX_TARGET_ANNOTATIONS`] entries; each key is an optional prefix of at most 253 characters
//!   and `/`, then a name of 1 to 63 characters; label values are at most 63 characters,
//!   annotation values at most [`MAX_TARGET_ANNOTATION_VALUE`].
//! - No key under [`RESERVED_PREFIXES`]: `ferrvault.com/` is the operator's own (its managed-by,
//!   content-hash and adoption annotations must not be forged through a spec), `kubernetes.io/`
//!   and `k8s.io/` are Kubernetes' (ServiceAccount-token markers among them). Only these exact
//!   prefixes: `app.kubernetes.io/name` and its siblings stay usable.

use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// The key prefixes a target label or annotation may not carry (the part before `/`, exactly).
pub const RESERVED_PREFIXES: [&str; 3] = ["ferrvault.com/", "kubernetes.io/", "k8s.io/"];

/// `target.metadata.labels`: 32 entries, several times what a Secret's labels hold
/// (`app.kubernetes.io/*` are six).
pub const MAX_TARGET_LABELS: usize = 32;

/// `target.metadata.annotations`: 32 entries.
pub const MAX_TARGET_ANNOTATIONS: usize = 32;

/// A label value: 63 characters (Kubernetes' own rule).
pub const MAX_LABEL_VALUE: usize = 63;

/// An annotation value: 1,024 characters. Kubernetes allows 256 KiB for all of an object's
/// annotations together; 32 values of 1,024 characters (at most 4 bytes each) and their keys stay
/// far inside it, leaving room for the annotations others set.
pub const MAX_TARGET_ANNOTATION_VALUE: usize = 1024;

/// A label or annotation key's optional prefix (a DNS subdomain): 253 characters.
pub const MAX_KEY_PREFIX: usize = 253;

/// A label or annotation key's name (after the prefix): 63 characters.
pub const MAX_KEY_NAME: usize = 63;

/// The CEL rule refusing keys under [`RESERVED_PREFIXES`] (a unit test keeps the two equal).
const RESERVED_RULE: &str = "self.all(k, !(k.startsWith('ferrvault.com/') || k.startsWith('kubernetes.io/') || k.startsWith('k8s.io/')))";

/// The message of the CEL rule refusing keys under [`RESERVED_PREFIXES`].
pub const RESERVED_MESSAGE: &str = "keys under the reserved prefixes ferrvault.com/, kubernetes.io/ and k8s.io/ \
     are refused (app.kubernetes.io/ and other prefixes are fine)";

/// The CEL rule for a key's shape: [`MAX_KEY_PREFIX`] and [`MAX_KEY_NAME`].
const KEY_SHAPE_RULE: &str = "self.all(k, k.matches('^([^/]{1,253}/)?[^/]{1,63}$'))";

/// The message of the CEL rule on a key's shape ([`MAX_KEY_PREFIX`], [`MAX_KEY_NAME`]).
pub const KEY_SHAPE_MESSAGE: &str =
    "a key is an optional prefix of at most 253 characters and '/', then a name of 1 to 63 characters";

/// `target.metadata` when absent.
pub(crate) static NO_METADATA: TargetMetadata = TargetMetadata {
    labels: BTreeMap::new(),
    annotations: BTreeMap::new(),
};

/// What a change to an immutable target does.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum ImmutableChange {
    /// The target is left untouched and the FerrVaultSecret reports `Ready=False`,
    /// `TargetImmutable` until the content (or the spec) allows it again. The default.
    #[default]
    Refuse,
    /// The target is deleted (only the version read) and created again with the new content, and
    /// the rollout targets are restarted (the kubelet does not refresh an immutable Secret in
    /// running pods).
    Replace,
}

/// Who owns the target Secret.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum CreationPolicy {
    /// The FerrVaultSecret controls the Secret (an owner reference), which goes with it. The
    /// default.
    #[default]
    Owner,
    /// Created and kept without an owner reference, so it survives the FerrVaultSecret; it carries
    /// `ferrvault.com/adoptable-by` naming the FerrVaultSecret, which is what lets it write the
    /// Secret again.
    Orphan,
    /// Writes its keys into an existing Secret that opted in (`ferrvault.com/adoptable-by`) and
    /// that no controller owns, keeping the keys others wrote; never creates it.
    Merge,
}

/// What the FerrVaultSecret's deletion does to the target.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum DeletionPolicy {
    /// The Secret goes with the FerrVaultSecret (the garbage collector follows the owner
    /// reference). The default.
    #[default]
    Delete,
    /// The FerrVaultSecret's owner reference is removed and the Secret left in place.
    Retain,
}

/// Labels and annotations the target carries besides the operator's own. The keys written are
/// recorded in status (`ownedLabels`, `ownedAnnotations`): a key removed from here is removed
/// from the Secret, and keys set by others are never touched.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct TargetMetadata {
    /// Labels to set on the target.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "labels_schema")]
    pub labels: BTreeMap<String, String>,
    /// Annotations to set on the target.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "annotations_schema")]
    pub annotations: BTreeMap<String, String>,
}

/// Schema of `target.metadata.labels`.
fn labels_schema(_: &mut SchemaGenerator) -> Schema {
    key_value_map(MAX_TARGET_LABELS, MAX_LABEL_VALUE)
}

/// Schema of `target.metadata.annotations`.
fn annotations_schema(_: &mut SchemaGenerator) -> Schema {
    key_value_map(MAX_TARGET_ANNOTATIONS, MAX_TARGET_ANNOTATION_VALUE)
}

/// A string map of at most `entries` entries, values of at most `value` characters, keys shaped
/// and outside the reserved prefixes.
fn key_value_map(entries: usize, value: usize) -> Schema {
    json_schema!({
        "type": "object",
        "maxProperties": entries,
        "additionalProperties": { "type": "string", "maxLength": value },
        "x-kubernetes-validations": [
            { "rule": KEY_SHAPE_RULE, "message": KEY_SHAPE_MESSAGE },
            { "rule": RESERVED_RULE, "message": RESERVED_MESSAGE },
        ],
    })
}

/// Whether `key` is under one of [`RESERVED_PREFIXES`].
pub fn is_reserved_key(key: &str) -> bool {
    RESERVED_PREFIXES.iter().any(|prefix| key.starts_with(prefix))
}

/// Whether `key` has the shape the schema's CEL rule admits: an optional prefix of 1 to
/// [`MAX_KEY_PREFIX`] characters and `/`, then a name of 1 to [`MAX_KEY_NAME`] characters, neither
/// holding another `/`.
pub fn is_shaped_key(key: &str) -> bool {
    let within = |part: &str, max: usize| !part.is_empty() && part.chars().take(max + 1).count() <= max;
    match key.split_once('/') {
        None => within(key, MAX_KEY_NAME),
        Some((prefix, name)) => {
            within(prefix, MAX_KEY_PREFIX) && within(name, MAX_KEY_NAME) && !name.contains('/')
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cel_rule_should_refuse_exactly_the_reserved_prefixes() {
        let tests: Vec<String> = RESERVED_PREFIXES
            .iter()
            .map(|p| format!("k.startsWith('{p}')"))
            .collect();
        assert_eq!(RESERVED_RULE, format!("self.all(k, !({}))", tests.join(" || ")));
    }

    #[test]
    fn key_rules_should_sort_keys_as_the_schema_does() {
        let long = |n: usize| "a".repeat(n);
        for (key, reserved, shaped) in [
            ("team", false, true),
            ("app.kubernetes.io/name", false, true),
            ("kubernetes.io/service-account.name", true, true),
            ("k8s.io/x", true, true),
            ("ferrvault.com/content-hash", true, true),
            ("sub.ferrvault.com/x", false, true),
            ("", false, false),
            ("a/", false, false),
            ("/a", false, false),
            ("a/b/c", false, false),
            (&long(63), false, true),
            (&long(64), false, false),
            (&format!("{}/{}", long(253), long(63)), false, true),
            (&format!("{}/a", long(254)), false, false),
        ] {
            assert_eq!(
                (is_reserved_key(key), is_shaped_key(key)),
                (reserved, shaped),
                "{key}"
            );
        }
    }
}
