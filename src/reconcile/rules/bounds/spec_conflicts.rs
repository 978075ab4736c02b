//! The CRD schema's cross-field rules ([`conflicts`](crate::api::conflicts)) checked again, for a
//! FerrVaultSecret stored past the schema: such an object is reported `InvalidSpec` (as
//! [`spec_bounds`](super::spec_bounds) does for a bound) before anything is read or written.
//!
//! # Guarantees
//! - Exactly the schema's rules: an object the API server admits is never refused here, and one
//!   it would refuse for a conflict is, with the CEL rule's own message (naming both fields).

use crate::api::{
    CREATED_ONCE_REPLACE_MESSAGE, CreationPolicy, FerrVaultSecretSpec, ImmutableChange,
    MERGE_REPLACE_MESSAGE, RefreshPolicy, SpecProblem, TemplateMergePolicy,
};

/// The first pair of settings in `spec` that contradict each other, if any.
///
/// # Errors
/// The [`SpecProblem`] at `spec` whose message names both fields.
pub(super) fn secret_spec_conflict(spec: &FerrVaultSecretSpec) -> Result<(), SpecProblem> {
    let Some(target) = &spec.target else {
        return Ok(());
    };
    if spec.refresh_policy == Some(RefreshPolicy::CreatedOnce)
        && target.immutable_change == Some(ImmutableChange::Replace)
    {
        return Err(at_spec(CREATED_ONCE_REPLACE_MESSAGE));
    }
    let template_replaces = target
        .template
        .as_ref()
        .is_some_and(|t| t.merge_policy == Some(TemplateMergePolicy::Replace));
    if target.creation_policy == Some(CreationPolicy::Merge) && template_replaces {
        return Err(at_spec(MERGE_REPLACE_MESSAGE));
    }
    Ok(())
}

fn at_spec(message: &str) -> SpecProblem {
    SpecProblem {
        path: "spec".to_owned(),
        expected: message.to_owned(),
    }
}
