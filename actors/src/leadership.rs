//! The leadership actor: competes for a `coordination.k8s.io/v1` Lease with client-go semantics,
//! starts the controllers while it holds the lease and stops them before anyone else may take it.
//!
//! Who sends to it: itself (a `Tick` every retry period, the results of the Lease calls it runs
//! in tasks) and the supervisor (`Release`, or a graceful stop, on shutdown or escalation; it
//! spawns the actor through [`crate::lease_source::LeaseLeadership`], a
//! [`LeadershipSource`](crate::seams::LeadershipSource)). What it sends: a [`LeaseStatus`] on
//! every change (a `tokio::sync::watch` channel), the [`Fence`] it opens and closes, and the
//! [`LeadershipHooks`] calls.
//!
//! # Guarantees
//! - Every decision is [`lease_rules::decide`]; every write carries the resourceVersion it was
//!   decided on, so a 409 means someone else won and we are not leader.
//! - Every successful Lease write moves the write [`Fence`] to the moment it was decided plus
//!   `renew_deadline`, so writes stop at that instant exactly when the renewals stop, before
//!   anyone else may acquire (the bound is in [`crate::fence`]).
//! - A leader with no successful renew for `renew_deadline` closes the fence, publishes
//!   `Standby`, awaits `stopped_leading` and only then competes again (the hook runs inside
//!   `handle`, so no attempt can start meanwhile). The tick notices this up to one retry period
//!   after the fence lapsed; the fence does not wait for it.
//! - No Lease call can freeze the actor: each runs in a task under [`Timings::api_timeout`] and
//!   its result comes back as a message; the renew deadline is checked on every tick, even
//!   while a call hangs.
//! - `Release`, or a graceful stop (`post_stop`), stops the controllers first (their in-flight
//!   writes still bounded by the fence: no renewal happens meanwhile), closes the fence, then
//!   frees the Lease (if we hold it) so a standby acquires it at its next retry. After
//!   `Release` the actor never competes again.
//! - Leader election disabled: leader, with the fence open without bound, from `post_start`
//!   until `Release`.
//!
//! # Invariants
//! - At most one Lease call is in flight (`State::in_flight`); results of other attempts are
//!   ignored.
//! - `started_leading` and `stopped_leading` alternate, starting with `started_leading`.
//!
//! # Failure
//! A panic or `Err` fails the actor; the supervisor restarts it. The new incarnation starts as a
//! candidate: if the Lease still names us it renews it and calls `started_leading` again, so
//! the hook must be idempotent. A kill does not release the Lease: others take over after it
//! expires.

use std::{sync::Arc, time::SystemTime};

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Client;
use ractor::{ActorProcessingErr, RpcReplyPort};
use tokio::{sync::watch, task::JoinHandle, time::Instant};

pub use self::config::{LeaderElectionConfig, identity};
use crate::{
    fence::Fence,
    lease_api::{LeaseApi, LeaseCallError},
    lease_rules::{self, Decision, LeaseRecord, Observed, Timings},
    mailbox::CountedRef,
    seams::{LeadershipHooks, LeaseStatus, Role},
    spawn::RuntimeActor,
};

/// Messages of the leadership actor.
#[derive(Debug)]
pub enum LeadershipMsg {
    /// Sent by the actor to itself every retry period: check the renew deadline and, if no call
    /// is in flight, read the Lease.
    Tick,
    /// Sent by the read task of attempt `attempt`: the Lease as read (`None`: absent).
    Read {
        /// The attempt this answers.
        attempt: u64,
        /// The Lease, or why it could not be read.
        result: Result<Option<Lease>, LeaseCallError>,
    },
    /// Sent by the write task of attempt `attempt`: the Lease as written.
    Written {
        /// The attempt this answers.
        attempt: u64,
        /// The stored Lease, or why the write failed (`Conflict`: someone else wrote first).
        result: Result<Lease, LeaseCallError>,
    },
    /// Sent by the supervisor on shutdown or escalation: stop the controllers, free the Lease,
    /// never compete again. The reply comes once both are done (or the API call timed out).
    Release(RpcReplyPort<()>),
}

/// What the leadership actor is started with.
pub(crate) struct LeadershipArgs {
    /// Flags.
    pub config: LeaderElectionConfig,
    /// The client used for the Lease (its identity is what the API server audits).
    pub client: Client,
    /// Called on winning and losing the lease.
    pub hooks: Arc<dyn LeadershipHooks>,
    /// Where every status change is published.
    pub status: watch::Sender<LeaseStatus>,
    /// Opened while the lease is provably ours.
    pub fence: Fence,
}

/// Where this replica stands.
#[derive(Debug)]
enum Phase {
    /// Competing: read the Lease every retry period and acquire it when it is free or expired.
    /// Leaves to `Leader` on a successful write, to `Released` on `Release`.
    Candidate,
    /// Holding the lease; `renewed_at` is when the last successful write was decided. Leaves to
    /// `Candidate` (after `stopped_leading`) on a missed renew deadline or a lost Lease, to
    /// `Released` on `Release`.
    Leader {
        /// Start of the last successful renew (local clock).
        renewed_at: Instant,
    },
    /// Leader election disabled: leading without a Lease. Leaves only to `Released`.
    Unelected,
    /// Released on request: final, no more attempts.
    Released,
}

/// The Lease call in flight.
struct InFlight {
    /// Attempt number; results carrying another number are stale.
    attempt: u64,
    /// When the write (if this is one) was decided: the renew time on success.
    decided_at: Instant,
    /// The task running the call.
    task: JoinHandle<()>,
}

/// The leadership actor's state.
pub(crate) struct State {
    /// Flags.
    config: LeaderElectionConfig,
    /// The Lease calls, each under the API timeout.
    lease_api: LeaseApi,
    /// Winning/losing callbacks.
    hooks: Arc<dyn LeadershipHooks>,
    /// Status channel.
    status: watch::Sender<LeaseStatus>,
    /// The write fence.
    fence: Fence,
    /// Where we stand.
    phase: Phase,
    /// The Lease as last read or written, with our first observation time of its record.
    observed: Option<Observed>,
    /// The Lease object last read (its resourceVersion guards our next write).
    lease: Option<Lease>,
    /// At most one call at a time (invariant).
    in_flight: Option<InFlight>,
    /// Attempt counter.
    attempts: u64,
    /// Our own mailbox, counted, for the call tasks and timers.
    mailbox: CountedRef<LeadershipMsg>,
}

/// The leadership actor (no configuration of its own: everything is in [`LeadershipArgs`]).
#[derive(Debug, Default)]
pub(crate) struct Leadership;

impl RuntimeActor for Leadership {
    type Msg = LeadershipMsg;
    type State = State;
    type Arguments = LeadershipArgs;

    async fn pre_start(
        &self,
        myself: CountedRef<LeadershipMsg>,
        args: LeadershipArgs,
    ) -> Result<State, ActorProcessingErr> {
        args.config.timings.validate()?;
        let lease_api = LeaseApi::new(
            args.client,
            &args.config.lease_namespace,
            &args.config.lease_name,
            &args.config.field_manager,
            args.config.timings.api_timeout(),
        );
        Ok(State {
            config: args.config,
            lease_api,
            hooks: args.hooks,
            status: args.status,
            fence: args.fence,
            phase: Phase::Candidate,
            observed: None,
            lease: None,
            in_flight: None,
            attempts: 0,
            mailbox: myself,
        })
    }

    async fn post_start(
        &self,
        _: CountedRef<LeadershipMsg>,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        if state.config.enabled {
            state.publish(Role::Standby);
            // A failed cast means we are already stopping: nothing to compete for.
            let _ = state.mailbox.cast(LeadershipMsg::Tick);
        } else {
            state.phase = Phase::Unelected;
            state.fence.open_unbounded();
            state.publish(Role::Leader);
            state.hooks.started_leading().await;
        }
        Ok(())
    }

    async fn handle(
        &self,
        _: CountedRef<LeadershipMsg>,
        msg: LeadershipMsg,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            LeadershipMsg::Tick => state.on_tick().await,
            LeadershipMsg::Read { attempt, result } => state.on_read(attempt, result).await,
            LeadershipMsg::Written { attempt, result } => state.on_written(attempt, result).await,
            LeadershipMsg::Release(reply) => {
                state.release().await;
                // The caller may have timed out and gone: nothing left to tell it.
                let _ = reply.send(());
            }
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _: CountedRef<LeadershipMsg>,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match state.phase {
            Phase::Candidate | Phase::Leader { .. } | Phase::Unelected => state.release().await,
            Phase::Released => {}
        }
        Ok(())
    }
}

// === impl State ===

impl State {
    async fn on_tick(&mut self) {
        let now = Instant::now();
        match self.phase {
            Phase::Leader { renewed_at }
                if lease_rules::renew_deadline_passed(renewed_at, now, self.timings()) =>
            {
                tracing::warn!(identity = %self.config.identity, "renew deadline passed: stepping down");
                self.step_down().await;
            }
            Phase::Leader { .. } | Phase::Candidate => {}
            Phase::Unelected | Phase::Released => return,
        }
        if self.in_flight.is_none() {
            self.start_read();
        }
        self.mailbox
            .send_after(self.timings().retry_period, || LeadershipMsg::Tick);
    }

    async fn on_read(&mut self, attempt: u64, result: Result<Option<Lease>, LeaseCallError>) {
        if !self.is_current(attempt) {
            return;
        }
        self.in_flight = None;
        let lease = match result {
            Ok(lease) => lease,
            Err(error) => return tracing::warn!(%error, "reading the lease failed"),
        };
        let now = Instant::now();
        self.observed = lease
            .as_ref()
            .map(|l| Observed::update(self.observed.take(), LeaseRecord::from_spec(l.spec.as_ref()), now));
        self.lease = lease;
        let leading = matches!(self.phase, Phase::Leader { .. });
        let decision = lease_rules::decide(
            self.observed.as_ref(),
            &self.config.identity,
            leading,
            now,
            Timestamp::now(),
            self.timings(),
        );
        match decision {
            // Create exactly when nothing was read (`observed` and `lease` are both `None`).
            Decision::Create(record) | Decision::Write { record, .. } => self.start_write(record, now),
            Decision::Wait { .. } => self.publish(Role::Standby),
            Decision::Lost { holder } => {
                tracing::warn!(%holder, "lease taken by another candidate: stepping down");
                self.step_down().await;
            }
        }
    }

    async fn on_written(&mut self, attempt: u64, result: Result<Lease, LeaseCallError>) {
        let Some(call) = self.in_flight.take_if(|c| c.attempt == attempt) else {
            return;
        };
        let lease = match result {
            Ok(lease) => lease,
            Err(error) => return tracing::info!(%error, "lease write failed"),
        };
        let record = LeaseRecord::from_spec(lease.spec.as_ref());
        self.observed = Some(Observed::update(self.observed.take(), record, Instant::now()));
        self.lease = Some(lease);
        let was_leading = matches!(self.phase, Phase::Leader { .. });
        match self.phase {
            Phase::Candidate | Phase::Leader { .. } => {
                self.phase = Phase::Leader {
                    renewed_at: call.decided_at,
                };
            }
            Phase::Unelected | Phase::Released => return,
        }
        self.fence
            .extend_to(call.decided_at + self.timings().renew_deadline);
        self.publish(Role::Leader);
        if !was_leading {
            tracing::info!(identity = %self.config.identity, "acquired the lease: leading");
            self.hooks.started_leading().await;
        }
    }

    /// Stop the controllers (awaited), then free the Lease if it names us. Final.
    async fn release(&mut self) {
        if let Some(call) = self.in_flight.take() {
            // Let a write that may already have reached the server land first, so the read below
            // sees it; the task is bounded by the API timeout.
            let _ = call.task.await;
        }
        let was_leading = match std::mem::replace(&mut self.phase, Phase::Released) {
            Phase::Leader { .. } | Phase::Unelected => true,
            Phase::Candidate | Phase::Released => false,
        };
        self.publish(Role::Standby);
        if was_leading {
            self.hooks.stopped_leading().await;
        }
        self.fence.close();
        if self.config.enabled {
            match self.lease_api.release(&self.config.identity).await {
                Ok(()) => tracing::info!(identity = %self.config.identity, "lease released"),
                Err(error) => tracing::warn!(%error, "releasing the lease failed; it will expire"),
            }
        }
    }

    /// Close the fence, publish `Standby`, stop the controllers (awaited) and go back to
    /// competing.
    async fn step_down(&mut self) {
        self.fence.close();
        if let Some(call) = self.in_flight.take() {
            call.task.abort();
        }
        self.phase = Phase::Candidate;
        self.publish(Role::Standby);
        self.hooks.stopped_leading().await;
    }

    fn start_read(&mut self) {
        let api = self.lease_api.clone();
        self.spawn_call(Instant::now(), move |attempt, mailbox| async move {
            let result = api.read().await;
            // A failed cast means the actor is gone: nobody wants the answer.
            let _ = mailbox.cast(LeadershipMsg::Read { attempt, result });
        });
    }

    fn start_write(&mut self, record: LeaseRecord, decided_at: Instant) {
        let (api, base) = (self.lease_api.clone(), self.lease.clone());
        self.spawn_call(decided_at, move |attempt, mailbox| async move {
            let result = api.write(base, &record).await;
            // A failed cast means the actor is gone: nobody wants the answer.
            let _ = mailbox.cast(LeadershipMsg::Written { attempt, result });
        });
    }

    fn spawn_call<F, Fut>(&mut self, decided_at: Instant, call: F)
    where
        F: FnOnce(u64, CountedRef<LeadershipMsg>) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        debug_assert!(
            self.in_flight.is_none(),
            "at most one lease call in flight violated"
        );
        self.attempts += 1;
        let task = tokio::spawn(call(self.attempts, self.mailbox.clone()));
        self.in_flight = Some(InFlight {
            attempt: self.attempts,
            decided_at,
            task,
        });
    }

    fn is_current(&self, attempt: u64) -> bool {
        self.in_flight.as_ref().is_some_and(|c| c.attempt == attempt)
    }

    fn timings(&self) -> &Timings {
        &self.config.timings
    }

    fn publish(&self, role: Role) {
        let status = lease_rules::status(
            self.observed.as_ref(),
            role,
            &self.config.identity,
            Instant::now(),
            SystemTime::now(),
            self.timings(),
        );
        self.status.send_if_modified(|current| {
            let changed = *current != status;
            *current = status;
            changed
        });
    }
}

mod config;
