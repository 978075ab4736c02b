//! `ferrvault_hints_total{result}`: every request to the hint endpoint, by what became of it.

use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family},
    registry::Registry,
};

/// What became of one request to the hint endpoint: the `result` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum HintResult {
    /// Signed, fresh, new and well-formed: its objects are marked (if any match).
    Accepted,
    /// Not signed with the hint key (or no key is loaded): 401.
    Unauthorized,
    /// Signed, with a timestamp outside the window: 401.
    Stale,
    /// Signed, with a MAC already taken within the window: 401.
    Replayed,
    /// A body longer than the bound, or of unstated length: 413 (411), unread.
    TooLarge,
    /// The endpoint's bucket is empty: 429 with `Retry-After`, unread.
    RateLimited,
    /// Signed, but not a hint (or the body did not arrive in time): 400.
    Malformed,
    /// This replica does not lead: 503 with `Retry-After`, unread.
    Unavailable,
}

impl HintResult {
    /// Every result, for the series created at zero.
    pub(crate) const ALL: [HintResult; 8] = [
        Self::Accepted,
        Self::Unauthorized,
        Self::Stale,
        Self::Replayed,
        Self::TooLarge,
        Self::RateLimited,
        Self::Malformed,
        Self::Unavailable,
    ];

    /// The metric label.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Accepted => "accepted",
            Self::Unauthorized => "unauthorized",
            Self::Stale => "stale",
            Self::Replayed => "replayed",
            Self::TooLarge => "too_large",
            Self::RateLimited => "rate_limited",
            Self::Malformed => "malformed",
            Self::Unavailable => "unavailable",
        }
    }
}

/// `result` label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabel {
    result: &'static str,
}

/// The endpoint's counter.
#[derive(Clone, Debug)]
pub(crate) struct HintMetrics {
    hints: Family<ResultLabel, Counter>,
}

impl HintMetrics {
    /// Registers `ferrvault_hints_total` in `registry`, every result at zero.
    pub(crate) fn register(registry: &mut Registry) -> HintMetrics {
        let metrics = HintMetrics {
            hints: Family::default(),
        };
        registry.register(
            "ferrvault_hints",
            "Requests to the change-hint endpoint (POST /hooks/ferrvault), by result (accepted, \
             unauthorized, stale, replayed, too_large, rate_limited, malformed, unavailable)",
            metrics.hints.clone(),
        );
        for result in HintResult::ALL {
            drop(metrics.hints.get_or_create(&ResultLabel {
                result: result.as_str(),
            }));
        }
        metrics
    }

    /// Counts one request that ended as `result`.
    pub(crate) fn count(&self, result: HintResult) {
        self.hints
            .get_or_create(&ResultLabel {
                result: result.as_str(),
            })
            .inc();
    }
}
