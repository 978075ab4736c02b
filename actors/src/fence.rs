//! The write fence: "this replica may write until instant T", published by leadership and
//! enforced on every write (by [`FenceLayer`](crate::fence_layer::FenceLayer) on the operator's
//! Kubernetes client) and on every reconcile (cancelled when the fence lapses).
//!
//! # The bound
//! Let `s` be the moment the last successful Lease write of this replica (acquire or renew)
//! was decided, just before it was sent, and `LD`, `RD`, `RP` the lease duration, renew
//! deadline and retry period:
//! - The fence lets writes start until `T = s + RD`, and every write still unanswered at `T`
//!   is abandoned, so none of ours lands after `T` (as far as the client can tell; see the
//!   margin below). Each later successful renewal moves `T` forward.
//! - No other replica can acquire the Lease before `s + LD`: a candidate times a lease from
//!   when it first *observes* the holder's latest record, which is after that record was
//!   written, which is after `s` (reference §8 background: the Go operator kept writing for
//!   its whole shutdown grace after it had lost the Lease).
//! - The margin `LD − RD` covers a write the API server received just before `T` but applies
//!   after it (a client cannot recall a request already sent), and the leadership actor
//!   noticing the lapse at its next tick, up to `RP` later, to stop the watchers and queues.
//!   Settings must therefore keep `RD + RP ≤ LD`
//!   ([`Timings::validate`](crate::lease_rules::Timings::validate) refuses others).
//!
//! Without leader election the fence is open without bound.

use std::{future::Future, sync::Arc};

use tokio::{sync::watch, time::Instant};

/// Whether writes are allowed, and until when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allowance {
    /// No lease to prove (leader election disabled): writes take as long as they take.
    Unbounded,
    /// Allowed, but each write must be answered by this instant.
    Until(Instant),
    /// Refused: this replica cannot prove it holds the Lease.
    Refused,
}

/// What the fence says, as published.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Permit {
    /// Standby, or leadership lost: no writes.
    Closed,
    /// Leading: writes until this instant (in the past: lapsed, the renewals stopped).
    Until(Instant),
    /// Leader election disabled.
    Unbounded,
}

/// The fence of one replica. Cheap to clone; every clone sees the same permit.
#[derive(Clone, Debug)]
pub struct Fence {
    permit: Arc<watch::Sender<Permit>>,
}

impl Default for Fence {
    fn default() -> Self {
        Self::new()
    }
}

impl Fence {
    /// A closed fence: nothing may be written until leadership opens it.
    pub fn new() -> Self {
        Self {
            permit: Arc::new(watch::Sender::new(Permit::Closed)),
        }
    }

    /// Leader election is disabled: open for good.
    pub(crate) fn open_unbounded(&self) {
        self.permit.send_replace(Permit::Unbounded);
    }

    /// A Lease write decided at `decided_at` succeeded: writes are allowed until
    /// `decided_at + renew_deadline` (never moved back).
    pub(crate) fn extend_to(&self, until: Instant) {
        self.permit.send_if_modified(|permit| match *permit {
            Permit::Closed => {
                *permit = Permit::Until(until);
                true
            }
            Permit::Until(current) if current < until => {
                *permit = Permit::Until(until);
                true
            }
            Permit::Until(_) | Permit::Unbounded => false,
        });
    }

    /// Leadership is lost or given up: no more writes.
    pub(crate) fn close(&self) {
        self.permit.send_replace(Permit::Closed);
    }

    /// Whether a write starting at `now` is allowed, and until when.
    pub fn allowance(&self, now: Instant) -> Allowance {
        match *self.permit.borrow() {
            Permit::Unbounded => Allowance::Unbounded,
            Permit::Until(until) if now < until => Allowance::Until(until),
            Permit::Until(_) | Permit::Closed => Allowance::Refused,
        }
    }

    /// Resolves once writes are refused: the fence closed, or its instant passed without a
    /// renewal moving it. Never resolves while unbounded.
    pub fn lapsed(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut permit = self.permit.subscribe();
        async move {
            loop {
                let current = *permit.borrow_and_update();
                match current {
                    Permit::Closed => return,
                    Permit::Until(until) => {
                        tokio::select! {
                            () = tokio::time::sleep_until(until) => {
                                // Re-read: a renewal may have moved it at the same moment.
                                if *permit.borrow() == current {
                                    return;
                                }
                            }
                            changed = permit.changed() => if changed.is_err() { return },
                        }
                    }
                    Permit::Unbounded => {
                        if permit.changed().await.is_err() {
                            // The fence is gone with its runtime: nothing to write for any more.
                            return;
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn a_new_fence_should_refuse_and_an_opened_one_should_allow_until_its_instant() {
        let fence = Fence::new();
        let now = Instant::now();
        assert_eq!(fence.allowance(now), Allowance::Refused);
        fence.extend_to(now + MS(100));
        assert_eq!(fence.allowance(now), Allowance::Until(now + MS(100)));
        assert_eq!(fence.allowance(now + MS(100)), Allowance::Refused);
    }

    #[test]
    fn extending_should_only_move_the_instant_forward() {
        let fence = Fence::new();
        let now = Instant::now();
        fence.extend_to(now + MS(200));
        fence.extend_to(now + MS(100));
        assert_eq!(fence.allowance(now), Allowance::Until(now + MS(200)));
        fence.close();
        assert_eq!(fence.allowance(now), Allowance::Refused);
        fence.open_unbounded();
        assert_eq!(fence.allowance(now + MS(10_000)), Allowance::Unbounded);
    }

    #[tokio::test(start_paused = true)]
    async fn lapsed_should_resolve_at_the_instant_unless_a_renewal_moved_it() {
        let fence = Fence::new();
        let start = Instant::now();
        fence.extend_to(start + MS(100));
        let lapsed = tokio::spawn(fence.lapsed());
        tokio::time::sleep(MS(50)).await;
        fence.extend_to(start + MS(300));
        tokio::time::sleep(MS(100)).await;
        assert!(!lapsed.is_finished(), "the renewal moved the instant to 300ms");
        lapsed.await.expect("lapsed resolves");
        assert_eq!(Instant::now(), start + MS(300));
    }

    #[tokio::test(start_paused = true)]
    async fn lapsed_should_resolve_on_close_and_never_while_unbounded() {
        let fence = Fence::new();
        fence.open_unbounded();
        let lapsed = tokio::spawn(fence.lapsed());
        tokio::time::sleep(Duration::from_secs(3600)).await;
        assert!(!lapsed.is_finished(), "an unbounded fence never lapses");
        fence.close();
        lapsed.await.expect("lapsed resolves");
    }
}
