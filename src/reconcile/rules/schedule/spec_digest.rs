//! The digest of a FerrVaultSecret's spec without `spec.suspend`: what lets a resume with nothing
//! else changed count as no spec change (issue 36 point 2). `suspend` is a spec field, so pausing
//! and resuming bump `metadata.generation`; a sync records this digest
//! (`status.observedSpecDigest`), and the freshness rule counts a later generation with the same
//! digest as the one synced ([`synced_now`]).
//!
//! # Guarantees
//! - Every status write that sets `observedGeneration` from the spec (a sync, missing keys, a
//!   kept `CreatedOnce` target) records the digest of that spec with it.
//! - Bounded: 64 hex characters (SHA-256), whatever the spec's size.
//! - `spec.suspend` alone never changes the digest; any other field does.
//! - Pure, and the same in every process (the spec's JSON with sorted keys, not a process hash).
//! - An object whose status has no digest (synced before this field) behaves as before: only
//!   its recorded generation counts.

use sha2::{Digest, Sha256};

use super::freshness::synced_here;
use crate::api::{FerrVaultSecret, FerrVaultSecretSpec, FerrVaultSecretStatus};

/// The SHA-256 (lowercase hex) of `spec`'s canonical JSON with `suspend` removed.
pub(crate) fn spec_digest(spec: &FerrVaultSecretSpec) -> String {
    digest_without(spec, &["suspend"])
}

/// The SHA-256 (lowercase hex) of `spec`'s canonical JSON without its top-level `fields`: the
/// digest of the part of a spec that matters to someone (see also
/// [`input_generation`](super::input_generation)).
pub(crate) fn digest_without(spec: &impl serde::Serialize, fields: &[&str]) -> String {
    let mut json = serde_json::to_value(spec).unwrap_or_default();
    if let Some(object) = json.as_object_mut() {
        for field in fields {
            object.remove(*field);
        }
    }
    let digest = Sha256::digest(canonical(&json).as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// `value` as JSON with every object's keys sorted (whatever order the map keeps them in).
fn canonical(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Object(fields) => {
            let mut sorted: Vec<_> = fields.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = sorted
                .into_iter()
                .map(|(key, value)| format!("{}:{}", serde_json::Value::from(key.as_str()), canonical(value)))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        serde_json::Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", inner.join(","))
        }
        other => other.to_string(),
    }
}

/// The first condition of the freshness rule for `cr`: it synced at its generation
/// ([`synced_here`]), or its last sync succeeded at the generation it recorded and recorded the
/// digest its spec has now (only `spec.suspend` changed since).
pub fn synced_now(cr: &FerrVaultSecret, status: &FerrVaultSecretStatus) -> bool {
    synced_here(status, cr.metadata.generation)
        || (status.observed_spec_digest.is_some()
            && synced_here(status, status.observed_generation)
            && status.observed_spec_digest.as_deref() == Some(spec_digest(&cr.spec).as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::fixtures;

    #[test]
    fn spec_digest_should_ignore_suspend_and_only_suspend() {
        let spec = fixtures::secret(1, None).spec;
        let digest = spec_digest(&spec);
        assert_eq!(digest.len(), 64);
        let suspended = FerrVaultSecretSpec {
            suspend: Some(true),
            ..spec.clone()
        };
        assert_eq!(spec_digest(&suspended), digest);
        let other_vault = FerrVaultSecretSpec {
            vault: "other".into(),
            ..spec
        };
        assert_ne!(spec_digest(&other_vault), digest);
    }
}
