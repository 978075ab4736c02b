//! The change detection's metrics (issue 38 point 7).
//!
//! | name | type | labels |
//! |---|---|---|
//! | `ferrvault_change_polls_total` | counter | `result` = `unchanged` \| `changed` \| `unsupported` \| `error` |
//! | `ferrvault_change_to_sync_seconds` | histogram | none: from a version's `updated_at` in the `list` answer to the target write |
//!
//! # Guarantees
//! - Every `result` series exists from the start, at zero.
//! - The histogram never sees a time a tenant's server made up beyond the bounds of
//!   [`change_age`](crate::reconcile::rules::schedule::source_version::change_age).

use std::time::Duration;

use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family, histogram::Histogram},
    registry::Registry,
};

/// How one `list` poll ended: the label `result` of `ferrvault_change_polls_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum PollResult {
    /// The answer holds the same versions as the last one.
    Unchanged,
    /// A version moved, appeared or disappeared (the first answer counts as changed).
    Changed,
    /// The server has no `list` (404 or 405): the connection falls back to polling.
    Unsupported,
    /// Any other failure (transport, 429, 5xx, an answer over the bounds): the last versions stay.
    Error,
}

impl PollResult {
    /// Every result, for series initialisation.
    const ALL: [PollResult; 4] = [Self::Unchanged, Self::Changed, Self::Unsupported, Self::Error];

    /// The label value.
    fn as_str(self) -> &'static str {
        match self {
            Self::Unchanged => "unchanged",
            Self::Changed => "changed",
            Self::Unsupported => "unsupported",
            Self::Error => "error",
        }
    }
}

/// `result` label of the poll counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabel {
    result: &'static str,
}

impl ResultLabel {
    fn of(result: PollResult) -> Self {
        Self {
            result: result.as_str(),
        }
    }
}

/// The freshness SLO's buckets: seconds from a change to its target write (1 s … 1 h).
const FRESHNESS_BUCKETS: [f64; 12] = [
    1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 45.0, 60.0, 120.0, 300.0, 900.0, 3600.0,
];

/// Handles to the change detection's metrics.
#[derive(Clone, Debug)]
pub(crate) struct ChangeMetrics {
    polls: Family<ResultLabel, Counter>,
    change_to_sync: Histogram,
}

impl ChangeMetrics {
    /// Registers both families in `registry`.
    pub(crate) fn register(registry: &mut Registry) -> Self {
        let metrics = Self {
            polls: Family::default(),
            change_to_sync: Histogram::new(FRESHNESS_BUCKETS),
        };
        registry.register(
            "ferrvault_change_polls",
            "GET /operator/secrets/list polls of connections with changeDetection Versions, by result \
             (unchanged, changed, unsupported, error)",
            metrics.polls.clone(),
        );
        registry.register(
            "ferrvault_change_to_sync_seconds",
            "Seconds from a value's change in FerrVault (updated_at in the list answer) to the write of its \
             target Secret, for syncs due to a version change",
            metrics.change_to_sync.clone(),
        );
        for result in PollResult::ALL {
            drop(metrics.polls.get_or_create(&ResultLabel::of(result)));
        }
        metrics
    }

    /// Counts one poll that ended with `result`.
    pub(crate) fn count_poll(&self, result: PollResult) {
        self.polls.get_or_create(&ResultLabel::of(result)).inc();
    }

    /// Records that a change `age` old reached its target.
    pub(crate) fn observe_change_to_sync(&self, age: Duration) {
        self.change_to_sync.observe(age.as_secs_f64());
    }
}
