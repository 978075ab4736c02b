//! Target `template`: `reconcile::rules::content::template::render_template` (the template
//! language's parser and renderer, and `dockerConfig`) over a fuzzer-written template and two
//! values.
//!
//! The input is `TEMPLATE \0 A \0 B \0 FLAGS`: the template (UTF-8, else skipped) of target key
//! `OUT`, the values of keys `A` (as given) and `B` ([`MARKER`] then the bytes given), and flag
//! bits: `1` for `mergePolicy: Replace`, `2` for a `dockerConfig` reading `A` and `B`.
//!
//! # Properties checked
//! - A value never escapes into a key: the output's keys are exactly `OUT` (and
//!   `.dockerconfigjson`), plus `A` and `B` under `Merge`.
//! - An error never quotes a value ([`MARKER`] never appears in it); its reason is
//!   `SecretTooLarge` exactly for an output over the limit.
//! - The output is within the bound computed before it is built (`output_bound`), and within a
//!   Secret's [`MAX_SECRET_BYTES`]; a bound over the limit is always refused.

use std::collections::BTreeMap;

use ferrvault_operator::{
    api::{DOCKER_CONFIG_KEY, DockerConfigTemplate, Reason, SecretTemplate, TemplateMergePolicy},
    rules::{MAX_SECRET_BYTES, SecretData, TemplateFailure, output_bound, payload_bytes, render_template},
};

/// Planted at the start of value `B`: `~` is no key or filter character, so no error can hold it
/// unless it quotes the value.
pub const MARKER: &str = "s3cr3t~value";

/// Checks the template of `data` (see the module's properties).
pub fn check(data: &[u8]) {
    let mut parts = data.splitn(4, |byte| *byte == 0);
    let Ok(text) = std::str::from_utf8(parts.next().unwrap_or_default()) else {
        return;
    };
    let a = parts.next().unwrap_or_default().to_vec();
    let mut b = MARKER.as_bytes().to_vec();
    b.extend_from_slice(parts.next().unwrap_or_default());
    let flags = parts.next().and_then(|f| f.first().copied()).unwrap_or(0);
    let replace = flags & 1 != 0;
    let docker = flags & 2 != 0;
    let template = SecretTemplate {
        data: BTreeMap::from([("OUT".to_owned(), text.to_owned())]),
        merge_policy: Some(if replace {
            TemplateMergePolicy::Replace
        } else {
            TemplateMergePolicy::Merge
        }),
        docker_config: docker.then(|| DockerConfigTemplate {
            server: "registry.example".into(),
            username_key: "A".into(),
            password_key: "B".into(),
            email_key: None,
        }),
    };
    let values: SecretData = BTreeMap::from([("A".to_owned(), a), ("B".to_owned(), b)]);
    let bound = output_bound(&values, &template);
    match render_template(values, &template) {
        Ok(output) => {
            let mut expected = vec!["OUT"];
            if docker {
                expected.push(DOCKER_CONFIG_KEY);
            }
            if !replace {
                expected.extend(["A", "B"]);
            }
            expected.sort_unstable();
            let keys: Vec<&str> = output.keys().map(String::as_str).collect();
            assert_eq!(keys, expected, "a value escaped into a key");
            let size = payload_bytes(&output);
            let bound = bound.expect("a template that renders has a bound");
            assert!(
                size <= bound,
                "output of {size} bytes over its computed bound {bound}"
            );
            assert!(size <= MAX_SECRET_BYTES, "output over a Secret's limit");
        }
        Err(error) => {
            let message = error.to_string();
            assert!(!message.contains(MARKER), "an error quotes a value: {message}");
            let too_large = matches!(error.failure, TemplateFailure::OutputTooLarge { .. });
            assert_eq!(error.reason() == Reason::SecretTooLarge, too_large);
            if let Ok(bound) = bound {
                assert!(
                    too_large == (bound > MAX_SECRET_BYTES),
                    "refused as too large exactly when the bound is over the limit"
                );
            }
        }
    }
}
