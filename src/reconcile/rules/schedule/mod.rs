//! When a pass runs: durations as Go writes them, the floor under every interval a tenant sets,
//! whether a pass has anything to do and when the next refresh is due, and the requeue policy.
//!
//! - [`duration`]: Go `time.Duration` parsing and formatting (`refreshInterval`, flags).
//! - [`duration_floor`]: the operator's floor under every interval a tenant sets, and its
//!   condition.
//! - [`freshness`]: whether a pass has anything to do, and when the next refresh is due.
//! - [`requeue`]: when a pass runs again after each outcome; the refresh interval it runs on.

pub(crate) mod duration;
pub(crate) mod duration_floor;
pub(crate) mod freshness;
pub(crate) mod requeue;
