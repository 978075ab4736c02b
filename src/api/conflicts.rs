//! Settings of a FerrVaultSecret that contradict each other (issue 36, "Bad input"): each pair is
//! refused at admission by a CEL rule whose message names both fields, and again by the
//! reconciler (`InvalidSpec`) for an object stored past the schema.
//!
//! # Guarantees
//! - Each field alone stays admitted: only the pair is refused.
//! - The messages name fields and policies, never a value a tenant wrote.

/// The CEL rule (on `spec`) refusing `refreshPolicy: CreatedOnce` with
/// `target.immutableChange: Replace`.
pub(crate) const CREATED_ONCE_REPLACE_RULE: &str = "!has(self.refreshPolicy) || self.refreshPolicy != 'CreatedOnce' \
     || !has(self.target) || !has(self.target.immutableChange) || self.target.immutableChange != 'Replace'";

/// The message of [`CREATED_ONCE_REPLACE_RULE`]; the reconciler reports the same text.
pub const CREATED_ONCE_REPLACE_MESSAGE: &str = "refreshPolicy CreatedOnce conflicts with \
     target.immutableChange Replace: a CreatedOnce target is never overwritten, so never replaced";

/// The CEL rule (on `target`) refusing `creationPolicy: Merge` with `template.mergePolicy: Replace`.
pub(crate) const MERGE_REPLACE_RULE: &str = "!has(self.creationPolicy) || self.creationPolicy != 'Merge' \
     || !has(self.template) || !has(self.template.mergePolicy) || self.template.mergePolicy != 'Replace'";

/// The message of [`MERGE_REPLACE_RULE`]; the reconciler reports the same text.
pub const MERGE_REPLACE_MESSAGE: &str = "target.creationPolicy Merge conflicts with \
     target.template.mergePolicy Replace: Merge keeps the keys others wrote, Replace writes only the template's";
