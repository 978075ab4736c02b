//! When a pass runs: durations as Go writes them, the floor under every interval a tenant sets,
//! whether a pass has anything to do and when the next refresh is due, and the requeue policy.
//!
//! - [`duration`]: Go `time.Duration` parsing and formatting (`refreshInterval`, flags).
//! - [`duration_floor`]: the operator's floor under every interval a tenant sets, and its
//!   condition.
//! - [`explain`]: is a pass due, why, and when is the next one: suspension, force-sync, the
//!   refresh policy, then the freshness rule (the plugin's `explain` calls it too).
//! - [`force_sync`]: the `ferrvault.com/force-sync` annotation's value, bounded.
//! - [`freshness`]: whether a pass has anything to do, and when the next refresh is due.
//! - [`source_version`]: the hash of a selection's versions (`list` or reveal), and how old
//!   a listed change is.
//! - [`spec_digest`]: the spec's digest without `suspend`, so a resume is no spec change.
//! - [`input_generation`]: the generation of a connection its FerrVaultSecrets record, which a
//!   resume of the connection leaves alone.
//! - [`requeue`]: when a pass runs again after each outcome; the refresh interval it runs on.

pub(crate) mod duration;
pub(crate) mod duration_floor;
pub(crate) mod explain;
pub(crate) mod force_sync;
pub(crate) mod freshness;
pub(crate) mod input_generation;
pub(crate) mod requeue;
pub(crate) mod source_version;
pub(crate) mod spec_digest;
