//! Target `transforms`: `reconcile::rules::transforms::apply_transforms` over fuzzer-built content
//! and pipelines ([`case`], from realistic [`fixtures`]), within the bounds the reconciler works
//! under: the reveal's caps on the content, the CRD's bounds on the pipeline (checked with the
//! reconciler's own `spec_bounds`; a pipeline over them never reaches the transforms).
//!
//! # Properties checked
//! - No step's output is over a Secret's [`MAX_SECRET_BYTES`].
//! - An error shows no value ([`MARKER`] is planted in values, never in a key name: see
//!   [`case`]); it names the failing step and type; a key it quotes is the one at fault; its
//!   reason is `SecretTooLarge` exactly for an output over the limit.
//! - The whole pipeline gives what its steps give one after the other, and each step does what
//!   its type says ([`steps`]).

use ferrvault_operator::{
    api::{ConnectionRef, FerrVaultSecretSpec, Reason, Transform},
    rules::{
        MAX_SECRET_BYTES, SecretData, TransformError, TransformFailure, apply_transforms, payload_bytes,
        secret_spec_problem,
    },
};

use self::case::Case;

mod case;
mod fixtures;
mod steps;

/// Planted in values: lower-case letters around a `~`, which no key name can hold (see [`case`]).
pub const MARKER: &str = "s3cr3t~value";

/// Checks the pipeline of `data` (see the module's properties).
pub fn check(data: &[u8]) {
    let Some(case) = Case::from_bytes(data) else {
        return;
    };
    if !within_crd_bounds(&case.steps) {
        return;
    }
    let whole = apply_transforms(&case.data, &case.steps);
    let mut content = case.data;
    for (index, step) in case.steps.iter().enumerate() {
        match apply_transforms(&content, std::slice::from_ref(step)) {
            Ok(output) => {
                assert!(
                    payload_bytes(&output) <= MAX_SECRET_BYTES,
                    "step {index} built too much"
                );
                steps::assert_step(step, &content, &output);
                content = output;
            }
            Err(error) => {
                let error = TransformError { index, ..error };
                assert_error(&error, step, &content);
                assert_eq!(whole, Err(error), "the pipeline differs from its steps");
                return;
            }
        }
    }
    assert_eq!(whole, Ok(content), "the pipeline differs from its steps");
}

/// Whether the reconciler would run `steps`: a spec holding them is within the CRD's bounds.
fn within_crd_bounds(steps: &[Transform]) -> bool {
    let spec = FerrVaultSecretSpec {
        connection_ref: ConnectionRef::namespaced("ferrvault"),
        project: None,
        vault: "prod".into(),
        selector: None,
        target: None,
        refresh_interval: "1h".into(),
        rollout_restart: Vec::new(),
        transforms: steps.to_vec(),
        refresh_policy: None,
        suspend: None,
    };
    secret_spec_problem(&spec).is_ok()
}

/// `error`, from `step` over `input`, shows no value, and names what is at fault.
fn assert_error(error: &TransformError, step: &Transform, input: &SecretData) {
    for shown in [error.to_string(), format!("{error:?}")] {
        assert!(!shown.contains(MARKER), "an error shows a value: {shown}");
    }
    assert_eq!(error.transform, step.type_);
    let too_large = matches!(error.failure, TransformFailure::OutputTooLarge { .. });
    assert_eq!(error.reason() == Reason::SecretTooLarge, too_large, "{error}");
    steps::assert_failure(&error.failure, step, input);
}
