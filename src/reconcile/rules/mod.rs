//! Pure reconcile rules: values in, values out. Nothing here does I/O or reads the clock (callers
//! pass `now`), so every rule is unit- and property-tested without a server. Grouped by what
//! they decide:
//!
//! - [`content`]: what a target Secret holds — [`SecretData`](content::SecretData), the
//!   `spec.transforms` pipeline (`transforms`, `json_expand`), the keyed content hash
//!   (`content_hash`).
//! - [`status`]: what status says — condition upserts (`conditions`), a FerrVaultSecret's status
//!   after each outcome (`secret_status`), the human-readable messages (`messages`).
//! - [`schedule`]: when a pass runs — Go durations (`duration`), the floor under tenants'
//!   intervals (`duration_floor`), whether anything is due and when the next refresh is
//!   (`freshness`), the requeue policy after each outcome (`requeue`).
//! - [`access`]: what may be used or written — whether a FerrVaultSecret may write its target
//!   (`target_access`), which Secrets may be a credential (`credential_opt_in`), the missing-keys
//!   and cloud-scope guards (`guards`).
//! - [`bounds`]: what keeps tenant-controlled sizes and rates bounded — text cut to 1 KiB
//!   (`bounded_text`), the CRD schema's bounds checked again (`spec_bounds`), token buckets
//!   (`token_bucket`), maps pruned in amortized constant time (`pruned_map`).
//! - [`rollout`]: when workloads must be restarted (and the rollout floor), and the patch that
//!   restarts them.

pub(crate) mod access;
pub(crate) mod bounds;
pub(crate) mod content;
pub(crate) mod rollout;
pub(crate) mod schedule;
pub(crate) mod status;
