//! The answer a flight leaves for the rest of its wave (see the parent module): a success, kept
//! for the named callers that did not get it yet, until the wave is over, if its cost fits in
//! what is left of the client's [`KeptBudget`].

use std::{
    collections::HashSet,
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use tokio::time::Instant;

use super::budget::{Charge, KeptBudget, cost};
use crate::ferrvault::{
    FerrVaultError,
    reveal::{KeySelector, Revealed},
};

/// How long a kept answer serves its wave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Horizon {
    /// The wave is over when the answer served nobody for this long: the worker pool runs the
    /// passes of a wave back to back, milliseconds apart.
    pub(crate) idle: Duration,
    /// The answer is dropped this long after it arrived, however busy its wave.
    pub(crate) cap: Duration,
}

/// The horizon of every wave: over after 2s without a caller, and never longer than 10s, enough
/// for the worker pool to run a wave of a thousand FerrVaultSecrets and short next to any
/// refresh interval.
pub(crate) const WAVE_HORIZON: Horizon = Horizon {
    idle: Duration::from_secs(2),
    cap: Duration::from_secs(10),
};

/// A successful answer kept for the rest of its wave.
pub(super) struct Answer {
    /// The flight's decoded answer, shared with its callers.
    revealed: Arc<Revealed>,
    /// The selector it was requested with.
    keys: KeySelector,
    /// When its flight was made: its request went out at or after this.
    requested: Instant,
    arrived: Instant,
    state: Mutex<Served>,
    /// Its cost, taken from the client's budget and given back when it is dropped.
    _charge: Charge,
}

/// Whom a kept answer served, and when it last did.
struct Served {
    callers: HashSet<String>,
    last: Instant,
}

impl Answer {
    /// What a flight requested with `keys` leaves for its wave: its `outcome` when it succeeded,
    /// named `callers` joined it (they have it already) and its cost fits in what is left of
    /// `budget`; else nothing.
    pub(super) fn keep(
        outcome: &Result<Arc<Revealed>, FerrVaultError>,
        keys: &KeySelector,
        callers: &HashSet<String>,
        (requested, now): (Instant, Instant),
        budget: &KeptBudget,
    ) -> Option<Arc<Self>> {
        let Ok(revealed) = outcome else {
            return None;
        };
        if callers.is_empty() {
            return None;
        }
        let charge = budget.charge(cost(revealed, keys))?;
        Some(Arc::new(Self {
            revealed: revealed.clone(),
            keys: keys.clone(),
            requested,
            arrived: now,
            state: Mutex::new(Served {
                callers: callers.clone(),
                last: now,
            }),
            _charge: charge,
        }))
    }

    /// `caller`'s slice at `now`, if the wave is not over (see `horizon`), the answer covers
    /// `want` and it has not served `caller` yet (from now on it has).
    pub(super) fn serve(
        &self,
        caller: &str,
        want: &KeySelector,
        now: Instant,
        horizon: Horizon,
    ) -> Option<Revealed> {
        if !self.keys.covers(want) {
            return None;
        }
        let mut served = self.lock();
        if now >= self.ends(&served, horizon) || !served.callers.insert(caller.to_owned()) {
            return None;
        }
        served.last = now;
        Some(self.revealed.slice_for(want))
    }

    /// When its flight was made (its request went out at or after this).
    pub(super) fn requested(&self) -> Instant {
        self.requested
    }

    /// When its wave is over, as things stand (a caller served meanwhile moves it later).
    pub(super) fn ends_at(&self, horizon: Horizon) -> Instant {
        self.ends(&self.lock(), horizon)
    }

    fn ends(&self, served: &Served, horizon: Horizon) -> Instant {
        (served.last + horizon.idle).min(self.arrived + horizon.cap)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Served> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
