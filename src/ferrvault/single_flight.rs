//! Single-flight reveals: reveals of the same vault through the same credential share one
//! request — concurrent ones, and the named callers of one wave.
//!
//! # How
//! A flight is *gathering* from its creation until its request takes a token from the
//! credential's pacer (at least [`SingleFlight::window`], and as long as the pacer makes it
//! wait). Callers arriving meanwhile join it and widen its key selector (union, or everything
//! if anyone wants everything). When the token is granted the selector is *frozen* and the
//! request sent. A caller arriving while a request is in flight joins it if the frozen
//! selector covers what it wants, or else starts the next flight.
//!
//! A caller may name itself (a FerrVaultSecret's UID). The successful answer of a flight that a
//! named caller joined stays in the table until its wave is over ([`WAVE_HORIZON`]: nobody served
//! for 2s, at most 10s after it arrived), and serves every other named caller whose keys it
//! covers, once each: the rest of the wave (the FerrVaultSecrets of one vault refreshing,
//! starting or resyncing together, whose passes the worker pool runs a few at a time) costs no
//! further request. A caller it already served (it joined the flight, or was served since)
//! starts a new flight: a FerrVaultSecret's own next pass always reads FerrVault again.
//!
//! Kept answers share one byte budget per table ([`KEPT_ANSWER_BYTES`] for the client's): an
//! answer whose cost does not fit in what is left is not kept, so its wave costs more requests,
//! never more memory (issue 34: a tenant's many connections each answering megabytes).
//!
//! # Guarantees
//! - Each caller gets exactly its own keys and its own `missing` ([`Revealed::slice_for`]).
//! - Each caller waits no longer than its own deadline; the request itself runs until the
//!   latest deadline of the callers that joined it, and is cancelled when every caller is gone.
//! - Without named callers nothing outlives the request: the flight leaves the table before
//!   its answer is handed out, and the last caller to hold the answer takes it (no copy). With them,
//!   a timer drops the answer when its wave is over, at most [`WAVE_HORIZON`]'s cap after it
//!   arrived, used or not; a newer answer replaces (and frees) it at once. Failures are never
//!   kept.
//! - The kept answers of a table hold together at most its budget of names and values (each
//!   answer charged before it is kept, and given back when it is dropped). A newer answer is
//!   charged before the one it replaces gives its charge back. A kept answer is the flight's
//!   own decoded answer, shared, not a copy of it.
//! - A value served from a kept answer is at most that cap older than one read by the caller
//!   itself, and was read for another caller of the same vault, credential and scope.
//!
//! # Invariants
//! - A flight is in its slot's `gathering` xor in its `sent` list, until it completes or is
//!   abandoned, then in neither. Lock order: the table, then a flight's `state`, then an
//!   answer's `served`.

use std::{
    collections::{HashMap, HashSet},
    future::Future,
    hash::Hash,
    sync::{Arc, Mutex, MutexGuard, PoisonError, Weak},
    time::Duration,
};

use tokio::{sync::watch, task::AbortHandle, time::Instant};

pub(crate) use self::budget::KEPT_ANSWER_BYTES;
pub(crate) use self::wave::{Horizon, WAVE_HORIZON};
use self::{budget::KeptBudget, wave::Answer};
use super::{
    DeadlineStage, FerrVaultError,
    deadline::Deadline,
    reveal::{KeySelector, Revealed},
};

/// A flight's outcome as its callers and its kept answer share it: one decoded answer, never
/// copied whole to be shared.
type Shared = Result<Arc<Revealed>, FerrVaultError>;
type Table<K> = Arc<Mutex<HashMap<K, Slot>>>;

/// The flights of one key, and its kept answer.
#[derive(Default)]
struct Slot {
    gathering: Option<Arc<Flight>>,
    sent: Vec<Arc<Flight>>,
    answer: Option<Arc<Answer>>,
}

impl Slot {
    fn remove(&mut self, flight: &Arc<Flight>) {
        if self.gathering.as_ref().is_some_and(|g| Arc::ptr_eq(g, flight)) {
            self.gathering = None;
        }
        self.sent.retain(|f| !Arc::ptr_eq(f, flight));
    }

    fn has_flights(&self) -> bool {
        self.gathering.is_some() || !self.sent.is_empty()
    }

    fn is_empty(&self) -> bool {
        !self.has_flights() && self.answer.is_none()
    }

    /// The kept answer's slice for `caller`, if its wave is not over, it covers `want`, it
    /// has not served `caller` yet and it was requested at or after `fresh_after`.
    fn serve(
        &self,
        caller: &str,
        want: &KeySelector,
        horizon: Horizon,
        fresh_after: Option<Instant>,
    ) -> Option<Revealed> {
        let answer = self.answer.as_ref()?;
        if fresh_after.is_some_and(|after| answer.requested() < after) {
            return None;
        }
        answer.serve(caller, want, Instant::now(), horizon)
    }
}

struct Flight {
    /// When the first caller made it: its request goes out at or after this.
    created: Instant,
    state: Mutex<FlightState>,
    /// The latest deadline of the callers that joined; the request runs until then.
    deadline: Deadline,
    /// `None` until the request completes.
    done: watch::Sender<Option<Shared>>,
    /// Cancels the request when every caller has gone.
    task: Mutex<Option<AbortHandle>>,
}

struct FlightState {
    /// The union of the joined callers' selectors (frozen once the request is sent).
    keys: KeySelector,
    frozen: bool,
    /// Callers still waiting for this flight.
    interested: usize,
    /// The named callers that joined it: its answer serves the rest of their wave.
    callers: HashSet<String>,
}

impl Flight {
    fn state(&self) -> MutexGuard<'_, FlightState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Handed to the fetch function: freezes the selector when the request is about to go out.
pub(crate) struct FlightHandle<K: Eq + Hash> {
    flight: Arc<Flight>,
    table: Table<K>,
    key: K,
}

impl<K: Eq + Hash> FlightHandle<K> {
    /// Freezes (on first call) and returns the selector to request. Later callers needing
    /// other keys start a new flight from now on.
    pub(crate) fn freeze(&self) -> KeySelector {
        let mut table = lock(&self.table);
        let mut state = self.flight.state();
        if !state.frozen {
            state.frozen = true;
            if let Some(slot) = table.get_mut(&self.key)
                && slot
                    .gathering
                    .as_ref()
                    .is_some_and(|g| Arc::ptr_eq(g, &self.flight))
            {
                slot.gathering = None;
                slot.sent.push(self.flight.clone());
            }
        }
        state.keys.clone()
    }

    /// The request's deadline (extended as callers join).
    pub(crate) fn deadline(&self) -> &Deadline {
        &self.flight.deadline
    }
}

/// The single-flight table, keyed by (endpoint, credential, scope, vault).
pub(crate) struct SingleFlight<K> {
    table: Table<K>,
    /// How long a new flight waits for company before asking for a token.
    window: Duration,
    /// How long a kept answer serves its wave ([`WAVE_HORIZON`]).
    horizon: Horizon,
    /// What the kept answers may hold together ([`KEPT_ANSWER_BYTES`] for the client's).
    budget: KeptBudget,
}

impl<K: Clone + Eq + Hash + Send + Sync + 'static> SingleFlight<K> {
    /// A table whose flights gather for `window`, whose answers serve their waves for `horizon`
    /// and hold together at most `budget_bytes`.
    pub(crate) fn new(window: Duration, horizon: Horizon, budget_bytes: usize) -> Self {
        Self {
            table: Arc::default(),
            window,
            horizon,
            budget: KeptBudget::new(budget_bytes),
        }
    }

    /// Reveals `want` for `key` for `caller` (`None`: anonymous), sharing the request with
    /// concurrent callers and, for a named caller, with its wave; with `fresh_after`, reading
    /// nothing requested before it: a kept answer, or a flight already sent, that was made earlier is not taken
    /// (a gathering flight is: its request has not gone out yet). A change hint's pass asks for
    /// the read to follow the hint, and shares it with the other passes of the same hints.
    pub(crate) async fn reveal<F, Fut>(
        &self,
        key: K,
        (caller, fresh_after): (Option<&str>, Option<Instant>),
        want: KeySelector,
        deadline: Instant,
        fetch: F,
    ) -> Result<Revealed, FerrVaultError>
    where
        F: FnOnce(FlightHandle<K>) -> Fut,
        Fut: Future<Output = Result<Revealed, FerrVaultError>> + Send + 'static,
    {
        let flight = match self.join(&key, (caller, fresh_after), &want, deadline, fetch) {
            Joined::Served(revealed) => return Ok(revealed),
            Joined::Flight(flight) => flight,
        };
        let interest = Interest {
            flight: flight.clone(),
            table: self.table.clone(),
            key,
        };
        let mut done = flight.done.subscribe();
        let outcome = match tokio::time::timeout_at(deadline, done.wait_for(Option::is_some)).await {
            Ok(Ok(answer)) => answer
                .clone()
                .expect("invariant violated: wait_for returned None"),
            Ok(Err(_)) | Err(_) => {
                let stage = if flight.state().frozen {
                    DeadlineStage::InFlight
                } else {
                    DeadlineStage::WaitingForBudget
                };
                return Err(FerrVaultError::Deadline { stage });
            }
        };
        // Let go of the flight (and the copy of the outcome it holds) first, so the last caller
        // holding the answer takes it without a copy.
        drop((done, interest, flight));
        outcome.map(|revealed| slice_of(revealed, &want))
    }

    /// Serves a named caller from the kept answer, or joins a covering flight or the gathering
    /// one, or starts a new one.
    fn join<F, Fut>(
        &self,
        key: &K,
        (caller, fresh_after): (Option<&str>, Option<Instant>),
        want: &KeySelector,
        deadline: Instant,
        fetch: F,
    ) -> Joined
    where
        F: FnOnce(FlightHandle<K>) -> Fut,
        Fut: Future<Output = Result<Revealed, FerrVaultError>> + Send + 'static,
    {
        let mut table = lock(&self.table);
        let slot = table.entry(key.clone()).or_default();
        if let Some(revealed) = caller.and_then(|caller| slot.serve(caller, want, self.horizon, fresh_after))
        {
            return Joined::Served(revealed);
        }
        let existing = slot
            .sent
            .iter()
            .filter(|f| fresh_after.is_none_or(|after| f.created >= after))
            .find(|f| f.state().keys.covers(want))
            .cloned()
            .or_else(|| {
                let gathering = slot.gathering.clone()?;
                gathering.state().keys.widen(want);
                Some(gathering)
            });
        if let Some(flight) = existing {
            let mut state = flight.state();
            state.interested += 1;
            state.callers.extend(caller.map(str::to_owned));
            drop(state);
            flight.deadline.extend_to(deadline);
            return Joined::Flight(flight);
        }
        let flight = Arc::new(Flight {
            created: Instant::now(),
            state: Mutex::new(FlightState {
                keys: want.clone(),
                frozen: false,
                interested: 1,
                callers: caller.map(str::to_owned).into_iter().collect(),
            }),
            deadline: Deadline::new(deadline),
            done: watch::Sender::new(None),
            task: Mutex::new(None),
        });
        slot.gathering = Some(flight.clone());
        let handle = FlightHandle {
            flight: flight.clone(),
            table: self.table.clone(),
            key: key.clone(),
        };
        let request = fetch(handle);
        let (table_ref, key_ref, flight_ref, window, horizon, budget) = (
            self.table.clone(),
            key.clone(),
            flight.clone(),
            self.window,
            self.horizon,
            self.budget.clone(),
        );
        let task = tokio::spawn(async move {
            if !window.is_zero() {
                tokio::time::sleep_until((Instant::now() + window).min(flight_ref.deadline.get())).await;
            }
            let outcome = request.await.map(Arc::new);
            let kept = {
                let state = flight_ref.state();
                let times = (flight_ref.created, Instant::now());
                Answer::keep(&outcome, &state.keys, &state.callers, times, &budget)
            };
            {
                let mut table = lock(&table_ref);
                if let Some(slot) = table.get_mut(&key_ref) {
                    slot.remove(&flight_ref);
                    if kept.is_some() {
                        slot.answer.clone_from(&kept);
                    }
                    if slot.is_empty() {
                        table.remove(&key_ref);
                    }
                }
            }
            if let Some(answer) = kept {
                tokio::spawn(forget_when_over(
                    table_ref,
                    key_ref,
                    Arc::downgrade(&answer),
                    horizon,
                ));
            }
            flight_ref.done.send_replace(Some(outcome));
        });
        *flight.task.lock().unwrap_or_else(PoisonError::into_inner) = Some(task.abort_handle());
        Joined::Flight(flight)
    }

    /// Number of keys with a flight gathering or in flight (for tests and the admin dump).
    pub(crate) fn in_progress(&self) -> usize {
        lock(&self.table)
            .values()
            .filter(|slot| slot.has_flights())
            .count()
    }

    /// Number of answers kept for their wave (for tests).
    pub(crate) fn answers_kept(&self) -> usize {
        lock(&self.table)
            .values()
            .filter(|slot| slot.answer.is_some())
            .count()
    }

    /// The bytes of the budget the kept answers leave now.
    #[cfg(test)]
    fn bytes_left(&self) -> usize {
        self.budget.left()
    }
}

/// What [`SingleFlight::join`] found for a caller.
enum Joined {
    /// The kept answer served it.
    Served(Revealed),
    /// It waits for this flight.
    Flight(Arc<Flight>),
}

/// `want`'s slice of a shared answer: taken without a copy when nobody else holds it.
fn slice_of(revealed: Arc<Revealed>, want: &KeySelector) -> Revealed {
    match (Arc::try_unwrap(revealed), want) {
        (Ok(whole), KeySelector::All) => whole,
        (Ok(whole), KeySelector::Names(_)) => whole.slice_for(want),
        (Err(shared), _) => shared.slice_for(want),
    }
}

/// Drops `answer` from `key`'s slot when its wave is over. Holds it weakly, so an answer a newer
/// one replaced is freed (and its charge given back) at once, and this ends on waking.
async fn forget_when_over<K: Eq + Hash>(table: Table<K>, key: K, answer: Weak<Answer>, horizon: Horizon) {
    loop {
        let Some(ends_at) = answer.upgrade().map(|kept| kept.ends_at(horizon)) else {
            return;
        };
        if Instant::now() >= ends_at {
            break;
        }
        tokio::time::sleep_until(ends_at).await;
    }
    let mut table = lock(&table);
    if let Some(slot) = table.get_mut(&key) {
        if slot
            .answer
            .as_ref()
            .is_some_and(|kept| std::ptr::eq(Arc::as_ptr(kept), answer.as_ptr()))
        {
            slot.answer = None;
        }
        if slot.is_empty() {
            table.remove(&key);
        }
    }
}

/// One caller's interest in a flight; the last one to leave an unfinished flight cancels it.
struct Interest<K: Eq + Hash> {
    flight: Arc<Flight>,
    table: Table<K>,
    key: K,
}

impl<K: Eq + Hash> Drop for Interest<K> {
    fn drop(&mut self) {
        let mut table = lock(&self.table);
        let mut state = self.flight.state();
        state.interested -= 1;
        if state.interested > 0 || self.flight.done.borrow().is_some() {
            return;
        }
        drop(state);
        if let Some(slot) = table.get_mut(&self.key) {
            slot.remove(&self.flight);
            if slot.is_empty() {
                table.remove(&self.key);
            }
        }
        if let Some(task) = self
            .flight
            .task
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            task.abort();
        }
    }
}

fn lock<K>(table: &Table<K>) -> MutexGuard<'_, HashMap<K, Slot>> {
    table.lock().unwrap_or_else(PoisonError::into_inner)
}

mod budget;
#[cfg(test)]
mod tests;
mod wave;
