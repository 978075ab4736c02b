//! The `ferrvault.com/force-sync` annotation as the operator keeps and records it: its value,
//! bounded, so a tenant's 256 KiB annotation never grows a store or a status.
//!
//! # Guarantees
//! - [`force_token`] is at most [`MAX_FORCE_SYNC_VALUE`] bytes: a value that fits is kept as
//!   it is (what `kubectl annotate` wrote is what `status.observedForceSync` shows); a longer one
//!   becomes `sha256:` and its digest (71 bytes), so changing it still forces a sync.
//! - Only this annotation is read: every other label or annotation change is free.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::api::{bounds::MAX_FORCE_SYNC_VALUE, names::FORCE_SYNC_ANNOTATION};

/// The prefix of a digested value.
const DIGEST_PREFIX: &str = "sha256:";

/// The force-sync token of an object with these `annotations`: the annotation's value, or its
/// digest when longer than [`MAX_FORCE_SYNC_VALUE`]; `None` without the annotation.
pub fn force_token(annotations: Option<&BTreeMap<String, String>>) -> Option<String> {
    let value = annotations?.get(FORCE_SYNC_ANNOTATION)?;
    Some(bounded(value))
}

/// `value` itself when it fits, else its digest.
fn bounded(value: &str) -> String {
    if value.len() <= MAX_FORCE_SYNC_VALUE {
        return value.to_owned();
    }
    let digest = Sha256::digest(value.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("{DIGEST_PREFIX}{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn annotated(value: &str) -> BTreeMap<String, String> {
        BTreeMap::from([
            (FORCE_SYNC_ANNOTATION.to_owned(), value.to_owned()),
            ("argocd.argoproj.io/tracking-id".to_owned(), "x".to_owned()),
        ])
    }

    #[test]
    fn force_token_should_keep_a_short_value_and_digest_a_long_one() {
        assert_eq!(force_token(None), None);
        assert_eq!(force_token(Some(&BTreeMap::new())), None);
        assert_eq!(
            force_token(Some(&annotated("2026-12-05T13:00:00Z"))).as_deref(),
            Some("2026-12-05T13:00:00Z")
        );
        let exact = "a".repeat(MAX_FORCE_SYNC_VALUE);
        assert_eq!(force_token(Some(&annotated(&exact))), Some(exact));
        let long = force_token(Some(&annotated(&"a".repeat(256 * 1024)))).expect("digested");
        let other = force_token(Some(&annotated(&"b".repeat(256 * 1024)))).expect("digested");
        assert!(long.starts_with(DIGEST_PREFIX) && long.len() == 71, "{long}");
        assert_ne!(long, other, "a changed long value still forces");
    }
}
