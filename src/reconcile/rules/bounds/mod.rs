//! What keeps the sizes and rates a tenant controls bounded: text, specs stored past the schema,
//! request rates and maps of remembered objects.
//!
//! - [`bounded_text`]: the 1 KiB bound of condition messages and log fields.
//! - [`spec_bounds`]: the CRD schema's length bounds, checked again for objects stored past it.
//! - [`cluster_bounds`]: the same for a ClusterFerrVaultConnection (its `allowedNamespaces`).
//! - [`token_bucket`]: a token bucket over instants the caller passes (write budget, Event spam
//!   filter).
//! - [`pruned_map`]: a map whose stale entries are dropped in amortized constant time (the Event
//!   ledger, the write budget, our written versions).

pub(crate) mod bounded_text;
pub(crate) mod cluster_bounds;
pub(crate) mod pruned_map;
pub(crate) mod spec_bounds;
pub(crate) mod token_bucket;
