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
//! named caller joined stays in the table for [`WAVE_HORIZON`] after it arrived, and serves
//! every other named caller whose keys it covers, once each: the rest of the wave (the
//! FerrVaultSecrets of one vault refreshing, starting or resyncing together, whose passes the
//! worker pool runs a few at a time) costs no further request. A caller it already served (it
//! joined the flight, or was served since) starts a new flight: a FerrVaultSecret's own next
//! pass always reads FerrVault again.
//!
//! # Guarantees
//! - Each caller gets exactly its own keys and its own `missing` ([`Revealed::slice_for`]).
//! - Each caller waits no longer than its own deadline; the request itself runs until the
//!   latest deadline of the callers that joined it, and is cancelled when every caller is gone.
//! - Without named callers nothing outlives the request: the flight leaves the table before
//!   its answer is handed out, and the answer is dropped with the last caller's copy. With them,
//!   the answer is dropped [`WAVE_HORIZON`] after it arrived, by a timer, used or not; a newer
//!   answer replaces it at once. Failures are never kept.
//! - A value served from a kept answer is at most [`WAVE_HORIZON`] older than one read by the
//!   caller itself, and read for another caller of the same vault, credential and scope.
//!
//! # Invariants
//! - A flight is in its slot's `gathering` xor in its `sent` list, until it completes or is
//!   abandoned, then in neither. Lock order: the table, then a flight's `state`, then an
//!   answer's `served`.

use std::{
    collections::{HashMap, HashSet},
    future::Future,
    hash::Hash,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
    time::Duration,
};

use tokio::{sync::watch, task::AbortHandle, time::Instant};

use super::{
    DeadlineStage, FerrVaultError,
    deadline::Deadline,
    reveal::{KeySelector, Revealed},
};

type Shared = Arc<Result<Revealed, FerrVaultError>>;
type Table<K> = Arc<Mutex<HashMap<K, Slot>>>;

/// How long a successful answer serves the other named callers of its wave after it arrived.
/// Long enough for the worker pool to run a wave of a thousand FerrVaultSecrets (their passes
/// need no other request), short next to any refresh interval.
pub(crate) const WAVE_HORIZON: Duration = Duration::from_secs(10);

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

    /// The kept answer's slice for `caller`, if it covers `want` and has not served `caller` yet.
    fn serve(&self, caller: &str, want: &KeySelector) -> Option<Revealed> {
        let answer = self.answer.as_ref()?;
        if !answer.keys.covers(want) {
            return None;
        }
        let mut served = answer.served.lock().unwrap_or_else(PoisonError::into_inner);
        served
            .insert(caller.to_owned())
            .then(|| answer.revealed.slice_for(want))
    }
}

/// A successful answer kept for the rest of its wave.
struct Answer {
    revealed: Revealed,
    /// The selector it was requested with.
    keys: KeySelector,
    /// The named callers it served.
    served: Mutex<HashSet<String>>,
}

struct Flight {
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
    horizon: Duration,
}

impl<K: Clone + Eq + Hash + Send + Sync + 'static> SingleFlight<K> {
    pub(crate) fn new(window: Duration, horizon: Duration) -> Self {
        Self {
            table: Arc::default(),
            window,
            horizon,
        }
    }

    /// Reveals `want` for `key` for `caller` (`None`: anonymous), sharing the request with
    /// concurrent callers and, for a named caller, with its wave.
    pub(crate) async fn reveal<F, Fut>(
        &self,
        key: K,
        caller: Option<&str>,
        want: KeySelector,
        deadline: Instant,
        fetch: F,
    ) -> Result<Revealed, FerrVaultError>
    where
        F: FnOnce(FlightHandle<K>) -> Fut,
        Fut: Future<Output = Result<Revealed, FerrVaultError>> + Send + 'static,
    {
        let flight = match self.join(&key, caller, &want, deadline, fetch) {
            Joined::Served(revealed) => return Ok(revealed),
            Joined::Flight(flight) => flight,
        };
        let _interest = Interest {
            flight: flight.clone(),
            table: self.table.clone(),
            key,
        };
        let mut done = flight.done.subscribe();
        match tokio::time::timeout_at(deadline, done.wait_for(Option::is_some)).await {
            Ok(Ok(answer)) => {
                let answer = answer
                    .clone()
                    .expect("invariant violated: wait_for returned None");
                match &*answer {
                    Ok(revealed) => Ok(revealed.slice_for(&want)),
                    Err(error) => Err(error.clone()),
                }
            }
            Ok(Err(_)) | Err(_) => {
                let stage = if flight.state().frozen {
                    DeadlineStage::InFlight
                } else {
                    DeadlineStage::WaitingForBudget
                };
                Err(FerrVaultError::Deadline { stage })
            }
        }
    }

    /// Serves a named caller from the kept answer, or joins a covering flight or the gathering
    /// one, or starts a new one.
    fn join<F, Fut>(
        &self,
        key: &K,
        caller: Option<&str>,
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
        if let Some(revealed) = caller.and_then(|caller| slot.serve(caller, want)) {
            return Joined::Served(revealed);
        }
        let existing = slot
            .sent
            .iter()
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
        let (table_ref, key_ref, flight_ref, window, horizon) = (
            self.table.clone(),
            key.clone(),
            flight.clone(),
            self.window,
            self.horizon,
        );
        let task = tokio::spawn(async move {
            if !window.is_zero() {
                tokio::time::sleep_until((Instant::now() + window).min(flight_ref.deadline.get())).await;
            }
            let outcome = request.await;
            let kept = keep_for_wave(&flight_ref, &outcome);
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
                tokio::spawn(forget_after(table_ref, key_ref, answer, horizon));
            }
            flight_ref.done.send_replace(Some(Arc::new(outcome)));
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
}

/// What [`SingleFlight::join`] found for a caller.
enum Joined {
    /// The kept answer served it.
    Served(Revealed),
    /// It waits for this flight.
    Flight(Arc<Flight>),
}

/// The answer to keep for the rest of the wave: a success, when named callers joined.
fn keep_for_wave(flight: &Flight, outcome: &Result<Revealed, FerrVaultError>) -> Option<Arc<Answer>> {
    let Ok(revealed) = outcome else {
        return None;
    };
    let state = flight.state();
    (!state.callers.is_empty()).then(|| {
        Arc::new(Answer {
            revealed: revealed.clone(),
            keys: state.keys.clone(),
            served: Mutex::new(state.callers.clone()),
        })
    })
}

/// Drops `answer` from `key`'s slot after `horizon`, unless a newer answer replaced it.
async fn forget_after<K: Eq + Hash>(table: Table<K>, key: K, answer: Arc<Answer>, horizon: Duration) {
    tokio::time::sleep(horizon).await;
    let mut table = lock(&table);
    if let Some(slot) = table.get_mut(&key) {
        if slot
            .answer
            .as_ref()
            .is_some_and(|kept| Arc::ptr_eq(kept, &answer))
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::ferrvault::reveal::SecretValue;

    fn names(list: &[&str]) -> KeySelector {
        KeySelector::from_names(list.iter().copied())
    }

    /// A caller revealing `want` from "vault" in a task of its own, through [`fake_fetch`].
    fn spawn_reveal(
        flights: &Arc<SingleFlight<&'static str>>,
        calls: &Arc<AtomicUsize>,
        want: KeySelector,
        deadline: Instant,
        fetch_takes: Duration,
    ) -> tokio::task::JoinHandle<Result<Revealed, FerrVaultError>> {
        let (flights, calls) = (flights.clone(), calls.clone());
        tokio::spawn(async move {
            flights
                .reveal("vault", None, want, deadline, fake_fetch(calls, fetch_takes))
                .await
        })
    }

    type FakeRequest = std::pin::Pin<Box<dyn Future<Output = Result<Revealed, FerrVaultError>> + Send>>;

    /// A fetch that answers every key except those starting with `missing`, after `delay`.
    fn fake_fetch(
        calls: Arc<AtomicUsize>,
        delay: Duration,
    ) -> impl FnOnce(FlightHandle<&'static str>) -> FakeRequest {
        move |handle| {
            Box::pin(async move {
                tokio::time::sleep(delay).await;
                calls.fetch_add(1, Ordering::SeqCst);
                let keys = handle.freeze();
                let all = ["a", "b", "c", "d"];
                let mut revealed = Revealed::default();
                for key in all {
                    if keys.covers(&names(&[key])) {
                        revealed
                            .secrets
                            .insert(key.to_owned(), SecretValue::test(&format!("v-{key}")));
                    }
                }
                if let KeySelector::Names(wanted) = keys {
                    revealed.missing = wanted
                        .into_iter()
                        .filter(|k| !all.contains(&k.as_str()))
                        .collect();
                }
                Ok(revealed)
            })
        }
    }

    #[tokio::test(start_paused = true)]
    async fn concurrent_reveals_should_share_one_request_and_get_their_own_keys() {
        let flights = Arc::new(SingleFlight::new(Duration::from_millis(20), WAVE_HORIZON));
        let calls = Arc::new(AtomicUsize::new(0));
        let deadline = Instant::now() + Duration::from_secs(5);
        let selectors = [
            names(&["a"]),
            names(&["b", "zz"]),
            KeySelector::All,
            names(&["c", "a"]),
        ];
        let mut handles = Vec::new();
        for want in selectors.clone() {
            handles.push(spawn_reveal(
                &flights,
                &calls,
                want,
                deadline,
                Duration::from_millis(50),
            ));
        }
        let results: Vec<_> = futures::future::join_all(handles)
            .await
            .into_iter()
            .map(|r| r.unwrap().unwrap())
            .collect();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        let keys = |r: &Revealed| r.secrets.keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&results[0]), ["a"]);
        assert_eq!(
            (keys(&results[1]), results[1].missing.clone()),
            (vec!["b".to_owned()], vec!["zz".to_owned()])
        );
        assert_eq!(keys(&results[2]), ["a", "b", "c", "d"]);
        assert_eq!(keys(&results[3]), ["a", "c"]);
        assert_eq!(
            flights.in_progress(),
            0,
            "nothing stays in the table after the request"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_caller_wanting_more_than_the_frozen_request_should_start_a_new_flight() {
        let flights = Arc::new(SingleFlight::new(Duration::ZERO, WAVE_HORIZON));
        let calls = Arc::new(AtomicUsize::new(0));
        let deadline = Instant::now() + Duration::from_secs(5);
        let first = spawn_reveal(&flights, &calls, names(&["a"]), deadline, Duration::ZERO);
        tokio::time::sleep(Duration::from_millis(1)).await;
        let covered = flights.reveal(
            "vault",
            None,
            names(&["b"]),
            deadline,
            fake_fetch(calls.clone(), Duration::ZERO),
        );
        let result = covered.await.unwrap();
        assert_eq!(result.secrets.keys().collect::<Vec<_>>(), ["b"]);
        assert!(first.await.unwrap().is_ok());
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn an_impatient_caller_should_time_out_alone_and_the_last_one_leaving_should_cancel() {
        let flights = Arc::new(SingleFlight::new(Duration::ZERO, WAVE_HORIZON));
        let calls = Arc::new(AtomicUsize::new(0));
        let now = Instant::now();
        let patient = spawn_reveal(
            &flights,
            &calls,
            names(&["a"]),
            now + Duration::from_secs(10),
            Duration::from_secs(2),
        );
        tokio::task::yield_now().await;
        let impatient = flights
            .reveal(
                "vault",
                None,
                names(&["a"]),
                now + Duration::from_secs(1),
                fake_fetch(calls.clone(), Duration::ZERO),
            )
            .await;
        assert_eq!(impatient.unwrap_err().reason(), "BudgetDeadline");
        assert!(
            patient.await.unwrap().is_ok(),
            "the other caller still gets its answer"
        );
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        let abandoned = spawn_reveal(
            &flights,
            &calls,
            names(&["a"]),
            now + Duration::from_secs(60),
            Duration::from_secs(30),
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
        abandoned.abort();
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert_eq!(
            calls.load(Ordering::SeqCst),
            1,
            "the abandoned request was cancelled"
        );
        assert_eq!(flights.in_progress(), 0);
    }
}
