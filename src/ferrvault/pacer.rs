//! The shared per-credential pacer: callers wait for a token of their credential's
//! [`TokenBucket`] within their deadline, in arrival order, instead of sending and failing.
//!
//! # Guarantees
//! - FIFO: tokens go to waiters in the order they started waiting.
//! - Only the head waiter sleeps on the bucket's timer; the others sleep on their own
//!   [`Notify`] and are woken one at a time as the head changes, so a token costs O(1) wakeups
//!   however many callers wait.
//! - A waiter whose deadline passes (or whose future is dropped) leaves the queue and wakes
//!   the next one; no token is consumed on its behalf.
//! - The head gives up at once when the next token comes after its deadline.
//!
//! # Invariants
//! - Every id in `queue` belongs to a live `acquire` future (its `QueueGuard` removes it).

use std::{
    collections::VecDeque,
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use tokio::{sync::Notify, time::Instant};

use super::{
    DeadlineStage, FerrVaultError, Fingerprint,
    deadline::Deadline,
    limiter::{Ticket, TokenBucket},
    snapshot::{LimiterSnapshot, RequestCounts, RequestResult},
};

/// A token taken from a credential's bucket: proof that a request may be sent now.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Permit {
    /// What the bucket learns from this request's answer (when it was sent, in which burst).
    ticket: Ticket,
}

/// One credential's pacing state, shared by every caller using the credential.
#[derive(Debug)]
pub(crate) struct Pacer {
    /// Printable identity of the credential (never the token).
    fingerprint: Fingerprint,
    /// The endpoint's base URL, for the snapshot.
    base_url: String,
    /// Bucket and wait queue, under one short-held lock (never held across an await).
    state: Mutex<PacerState>,
    /// Requests completed, by result.
    counts: [AtomicU64; RequestResult::ALL.len()],
}

#[derive(Debug)]
struct PacerState {
    bucket: TokenBucket,
    /// Paces a share of a shared credential's budget ([`Pacer::share`]).
    shared: bool,
    /// Waiters in arrival order: (id, its wake-up handle).
    queue: VecDeque<(u64, Arc<Notify>)>,
    next_id: u64,
    /// When a caller last asked for a token; idle pacers are dropped by the registry.
    last_used: Instant,
}

impl Pacer {
    /// A pacer with a full bucket.
    pub(crate) fn new(fingerprint: Fingerprint, base_url: String, rate: f64, burst: u32) -> Self {
        let state = PacerState {
            bucket: TokenBucket::new(rate, burst, Instant::now()),
            shared: false,
            queue: VecDeque::new(),
            next_id: 0,
            last_used: Instant::now(),
        };
        Self {
            fingerprint,
            base_url,
            state: Mutex::new(state),
            counts: Default::default(),
        }
    }

    /// Makes this pacer pace `rate` and `burst`, a share of a budget other replicas spend too,
    /// never above it ([`TokenBucket::rescale`]). The head waiter is woken to read the bucket's
    /// new timing.
    pub(crate) fn share(&self, rate: f64, burst: u32) {
        let mut state = self.lock();
        state.shared = true;
        state.bucket.rescale(rate, burst, Instant::now());
        wake_head(&state);
    }

    /// Whether [`Pacer::share`] was called: the pacer follows the replica's share of the budget.
    pub(crate) fn is_shared(&self) -> bool {
        self.lock().shared
    }

    /// Waits for a token in FIFO order.
    ///
    /// # Errors
    /// [`FerrVaultError::Deadline`] (`WaitingForBudget`) when the deadline passes first, or as
    /// soon as the next token is known to come after it.
    pub(crate) async fn acquire(&self, deadline: &Deadline) -> Result<Permit, FerrVaultError> {
        let notify = Arc::new(Notify::new());
        let id = {
            let mut state = self.lock();
            let id = state.next_id;
            state.next_id += 1;
            state.last_used = Instant::now();
            state.queue.push_back((id, notify.clone()));
            id
        };
        let mut guard = QueueGuard {
            pacer: self,
            id,
            armed: true,
        };
        let too_late = || FerrVaultError::Deadline {
            stage: DeadlineStage::WaitingForBudget,
        };
        loop {
            let now = Instant::now();
            let wake_at = {
                let mut state = self.lock();
                if state.queue.front().map(|(head, _)| *head) == Some(id) {
                    match state.bucket.try_take(now) {
                        Ok(ticket) => {
                            state.queue.pop_front();
                            wake_head(&state);
                            guard.armed = false;
                            return Ok(Permit { ticket });
                        }
                        Err(ready) => Some(ready),
                    }
                } else {
                    None
                }
            };
            let limit = deadline.get();
            if now >= limit || wake_at.is_some_and(|ready| ready > limit) {
                return Err(too_late());
            }
            let sleep_until = wake_at.map_or(limit, |ready| ready.min(limit));
            tokio::select! {
                () = notify.notified() => {}
                () = tokio::time::sleep_until(sleep_until) => {}
            }
        }
    }

    /// The server accepted a request on this credential.
    pub(crate) fn on_success(&self) {
        let mut state = self.lock();
        state.bucket.on_success(Instant::now());
        wake_head(&state);
    }

    /// The server answered 429 to the request sent with `permit`.
    pub(crate) fn on_rate_limited(&self, permit: Permit, retry_after: Option<Duration>) {
        let mut state = self.lock();
        state
            .bucket
            .on_rate_limited(permit.ticket, retry_after, Instant::now());
        tracing::info!(
            credential = %self.fingerprint,
            base_url = %self.base_url,
            ?retry_after,
            rate = state.bucket.rate(),
            "FerrVault throttled this credential: pausing it and slowing down"
        );
        wake_head(&state);
    }

    /// Whether forgetting this pacer loses nothing but counters: unused for `idle_for`, nobody
    /// waiting, not paused and back at the configured rate. OIDC bearers rotate every few
    /// minutes, so without this the registry (and the metric series) would grow forever.
    pub(crate) fn is_idle(&self, idle_for: Duration, now: Instant) -> bool {
        let mut state = self.lock();
        let rate_restored = state.bucket.rate() >= state.bucket.configured_rate();
        now.saturating_duration_since(state.last_used) >= idle_for
            && state.queue.is_empty()
            && state.bucket.paused_until(now).is_none()
            && rate_restored
    }

    /// Counts one completed request.
    pub(crate) fn record(&self, result: RequestResult) {
        self.counts[result as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// What the pacer looks like now.
    pub(crate) fn snapshot(&self) -> LimiterSnapshot {
        let now = Instant::now();
        let mut state = self.lock();
        let paused_for = state
            .bucket
            .paused_until(now)
            .map(|until| until.saturating_duration_since(now));
        LimiterSnapshot {
            credential: self.fingerprint.clone(),
            base_url: self.base_url.clone(),
            tokens: state.bucket.tokens(now),
            rate: state.bucket.rate(),
            configured_rate: state.bucket.configured_rate(),
            burst: state.bucket.burst(),
            paused_for,
            waiters: state.queue.len(),
            rate_limited_total: state.bucket.rate_limited_total(),
            requests: RequestCounts::from_fn(|result| self.counts[result as usize].load(Ordering::Relaxed)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, PacerState> {
        // A panic while holding this lock leaves plain numbers behind, still usable.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Wakes the current head so it recomputes its wait (the bucket changed or the head moved).
fn wake_head(state: &PacerState) {
    if let Some((_, notify)) = state.queue.front() {
        notify.notify_one();
    }
}

/// Removes a waiter that gave up (deadline or dropped future) and hands its turn on.
struct QueueGuard<'a> {
    pacer: &'a Pacer,
    id: u64,
    armed: bool,
}

impl Drop for QueueGuard<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let mut state = self.pacer.lock();
        let was_head = state.queue.front().map(|(head, _)| *head) == Some(self.id);
        state.queue.retain(|(id, _)| *id != self.id);
        if was_head {
            wake_head(&state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pacer(rate: f64, burst: u32) -> Arc<Pacer> {
        Arc::new(Pacer::new(
            Fingerprint::test("abc"),
            "http://x".into(),
            rate,
            burst,
        ))
    }

    #[tokio::test(start_paused = true)]
    async fn pacer_should_serve_waiters_in_order_at_the_configured_rate() {
        let pacer = pacer(2.0, 3);
        let start = Instant::now();
        let far = Deadline::new(start + Duration::from_secs(60));
        let mut handles = Vec::new();
        for i in 0..6 {
            let (pacer, far) = (pacer.clone(), far.clone());
            handles.push(tokio::spawn(async move {
                pacer.acquire(&far).await.unwrap();
                (i, Instant::now() - start)
            }));
            tokio::task::yield_now().await;
        }
        let mut times = Vec::new();
        for handle in handles {
            times.push(handle.await.unwrap());
        }
        // capacity 2 (burst 3 minus headroom), then one every 0.5s, in arrival order.
        let expected = [0.0, 0.0, 0.5, 1.0, 1.5, 2.0];
        for ((i, took), want) in times.iter().zip(expected) {
            assert!(
                (took.as_secs_f64() - want).abs() < 0.01,
                "waiter {i} got its token at {took:?}"
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn pacer_should_give_up_at_the_deadline_without_spending_a_token() {
        let pacer = pacer(1.0, 2);
        let start = Instant::now();
        pacer
            .acquire(&Deadline::new(start + Duration::from_secs(10)))
            .await
            .unwrap();
        let err = pacer
            .acquire(&Deadline::new(start + Duration::from_millis(500)))
            .await
            .unwrap_err();
        assert_eq!(err.reason(), "BudgetDeadline");
        assert_eq!(
            Instant::now() - start,
            Duration::ZERO,
            "the head gives up at once when it cannot make it"
        );
        assert_eq!(pacer.snapshot().waiters, 0);
        pacer
            .acquire(&Deadline::new(start + Duration::from_secs(10)))
            .await
            .unwrap();
        assert_eq!(Instant::now() - start, Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn pacer_should_pass_the_turn_on_when_a_waiter_is_dropped() {
        let pacer = pacer(1.0, 2);
        let start = Instant::now();
        let far = Deadline::new(start + Duration::from_secs(60));
        pacer.acquire(&far).await.unwrap();
        let dropped = {
            let (pacer, far) = (pacer.clone(), far.clone());
            tokio::spawn(async move { pacer.acquire(&far).await })
        };
        tokio::task::yield_now().await;
        let second = {
            let (pacer, far) = (pacer.clone(), far.clone());
            tokio::spawn(async move { pacer.acquire(&far).await.map(|_| Instant::now() - start) })
        };
        tokio::task::yield_now().await;
        assert_eq!(pacer.snapshot().waiters, 2);
        dropped.abort();
        assert_eq!(second.await.unwrap().unwrap(), Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn pacer_should_pause_after_a_429_until_retry_after() {
        let pacer = pacer(1.0, 5);
        let start = Instant::now();
        let far = Deadline::new(start + Duration::from_secs(60));
        let permit = pacer.acquire(&far).await.unwrap();
        pacer.on_rate_limited(permit, Some(Duration::from_secs(4)));
        let snapshot = pacer.snapshot();
        assert_eq!(snapshot.paused_for, Some(Duration::from_secs(4)));
        assert_eq!(snapshot.rate_limited_total, 1);
        pacer.acquire(&far).await.unwrap();
        // Paused 4s; `Retry-After: 4` says the server earns under 1/3 per second, so slow start
        // restarts from half of that: one token in 6s.
        assert_eq!(Instant::now() - start, Duration::from_secs(10));
    }

    #[tokio::test(start_paused = true)]
    async fn pacer_should_count_as_idle_only_when_unused_unpaused_and_at_full_rate() {
        let pacer = pacer(1.0, 5);
        let start = Instant::now();
        let idle = Duration::from_secs(60);
        let permit = pacer.acquire(&Deadline::new(start + idle)).await.unwrap();
        assert!(!pacer.is_idle(idle, start + Duration::from_secs(59)));
        pacer.on_rate_limited(permit, Some(Duration::from_secs(120)));
        assert!(!pacer.is_idle(idle, start + Duration::from_secs(100)), "paused");
        assert!(
            !pacer.is_idle(idle, start + Duration::from_secs(200)),
            "rate still cut"
        );
        // Callers keep it busy: slow start brings the rate back up.
        let far = Deadline::new(start + Duration::from_secs(3600));
        while pacer.snapshot().rate < 1.0 {
            pacer.acquire(&far).await.unwrap();
            pacer.on_success();
        }
        assert!(pacer.is_idle(idle, Instant::now() + idle));
    }
}
