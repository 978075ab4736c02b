//! Which Secrets a FerrVaultConnection may use as its credential (its token, its CA bundle)
//! when the operator runs with `--require-credential-opt-in` (issue 34, point 7).
//!
//! Without it, a tenant who may create a FerrVaultConnection but may not read Secrets can name
//! any Secret of its namespace as `tokenSecretRef` and point `url` at its own server: the operator
//! sends that Secret's value there as the bearer (a confused deputy). With it, a Secret is a
//! credential only when whoever controls the Secret says so.
//!
//! # Guarantees
//! - A Secret is opted in when it carries the label [`CREDENTIAL_LABEL`]`: "true"` or its `type`
//!   starts with [`CREDENTIAL_TYPE_PREFIX`]; nothing a connection's spec says opts it in.
//! - Decided from the Secret's labels and type only: its data is not looked at.

use std::collections::BTreeMap;

/// The label opting a Secret in as a connection's credential, with the value
/// [`CREDENTIAL_LABEL_VALUE`].
pub(crate) const CREDENTIAL_LABEL: &str = "ferrvault.com/credential";

/// The value of [`CREDENTIAL_LABEL`] that opts a Secret in.
pub(crate) const CREDENTIAL_LABEL_VALUE: &str = "true";

/// Secret types that are credentials by construction (`ferrvault.com/token`, …): only their
/// creator chose the type, and a Secret's type is immutable.
pub(crate) const CREDENTIAL_TYPE_PREFIX: &str = "ferrvault.com/";

/// Whether a Secret with `labels` and `type_` opted in as a connection's credential.
pub(crate) fn is_opted_in(labels: Option<&BTreeMap<String, String>>, type_: Option<&str>) -> bool {
    labels
        .and_then(|labels| labels.get(CREDENTIAL_LABEL))
        .is_some_and(|value| value == CREDENTIAL_LABEL_VALUE)
        || type_.is_some_and(|type_| type_.starts_with(CREDENTIAL_TYPE_PREFIX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn only_the_label_set_to_true_or_a_ferrvault_type_should_opt_a_secret_in() {
        let cases = [
            (Some(labels(&[(CREDENTIAL_LABEL, "true")])), None, true),
            (None, Some("ferrvault.com/token"), true),
            (Some(labels(&[(CREDENTIAL_LABEL, "false")])), None, false),
            (Some(labels(&[(CREDENTIAL_LABEL, "True")])), None, false),
            (Some(labels(&[("ferrvault.com/other", "true")])), None, false),
            (None, Some("Opaque"), false),
            (None, Some("kubernetes.io/ferrvault.com/token"), false),
            (None, Some("ferrvault.com"), false),
            (None, None, false),
        ];
        for (labels, type_, opted_in) in cases {
            assert_eq!(
                is_opted_in(labels.as_ref(), type_),
                opted_in,
                "{labels:?} {type_:?}"
            );
        }
    }
}
