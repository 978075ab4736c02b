//! The shard leadership actor: holds this replica's member Lease and its share of the shard
//! Leases (issue 39 point 5), each shard with its own write [`Fence`].
//!
//! Who sends to it: itself (a `Tick` every retry period, the results of the Lease calls it runs
//! in tasks) and its owner (`Release` on shutdown). What it sends: the set of shards it holds,
//! on every change (a `tokio::sync::watch` channel), and the per-shard fences it opens and
//! closes.
//!
//! One round per retry period: list the namespace's Leases into a [`LeaseBoard`], decide with
//! [`shard_rules::plan`], then, in one task and concurrently, renew the member Lease and every
//! held shard, acquire the shards to acquire, and free the shards to release.
//!
//! # Guarantees
//! - Every write carries the resourceVersion of the Lease as listed, so a 409 means someone
//!   else wrote first and the shard is not ours.
//! - A shard is acquired only when the board saw it free or expired (client-go timing); a
//!   shard to release has its fence closed and leaves the held set *before* its Lease is freed.
//! - Every successful write of a shard's Lease moves that shard's fence to the moment the round
//!   was decided plus the renew deadline; a shard with no successful renew for the renew
//!   deadline has its fence closed and leaves the held set at the next tick (the fence does not
//!   wait for it): the bound of `crate::fence`, per shard.
//! - A held shard whose listed Lease names someone else is dropped at once.
//! - `Release` (or a graceful stop) closes every fence, publishes the empty set, then frees
//!   the held shards' Leases and the member Lease; no round starts after it.
//!
//! # Invariants
//! - At most one round (a list, then its writes) is in flight; results of other rounds are
//!   ignored.
//! - A shard is in `held` exactly while this actor considers its fence open.
//!
//! # Failure
//! A panic or `Err` fails the actor; its fences stay as they were and lapse at their instant
//! (no renewal happens any more), and its Leases expire. A restarted actor starts holding
//! nothing; a shard Lease that still names its identity counts as free for it.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Client;
use ractor::{ActorProcessingErr, RpcReplyPort};
use tokio::{sync::watch, time::Instant};

use crate::{
    fence::Fence,
    leadership::LeaderElectionConfig,
    lease_api::{LeaseApi, LeaseCallError},
    lease_board::{LeaseBoard, member_lease_name},
    lease_rules::{self, LeaseRecord},
    mailbox::CountedRef,
    shard_rules::{self, ShardId, Shards},
    spawn::RuntimeActor,
};

/// Messages of the shard leadership actor.
#[derive(Debug)]
pub(crate) enum ShardLeadershipMsg {
    /// Sent by the actor to itself every retry period: drop the shards past their renew
    /// deadline and, if no round is in flight, start one.
    Tick,
    /// Sent by the list task of round `round`: the namespace's Leases.
    Listed {
        /// The round this answers.
        round: u64,
        /// The Leases, or why they could not be listed.
        result: Result<Vec<Lease>, LeaseCallError>,
    },
    /// Sent by the write task of round `round`: the shards whose Lease it wrote as ours.
    Written {
        /// The round this answers.
        round: u64,
        /// Renewed or acquired.
        ours: BTreeSet<ShardId>,
    },
    /// Sent by the owner on shutdown: close every fence, free the Leases, never compete again.
    /// The reply comes once the Leases are freed (or the calls timed out).
    Release(RpcReplyPort<()>),
}

/// What the shard leadership actor is started with.
pub(crate) struct ShardLeadershipArgs {
    /// Flags: `lease_name` is the election id the shard Lease names derive from.
    pub config: LeaderElectionConfig,
    /// This replica's pod name (its member Lease's name).
    pub pod: String,
    /// How many shards.
    pub shards: Shards,
    /// The client used for the Leases.
    pub client: Client,
    /// One fence per shard, indexed by shard number.
    pub fences: Arc<[Fence]>,
    /// Where the held set is published on every change.
    pub held: watch::Sender<BTreeSet<ShardId>>,
}

/// The write round in flight.
struct Round {
    /// Its number; results carrying another are stale.
    number: u64,
    /// When its writes were decided (`None` while listing): a renew time on success.
    decided_at: Option<Instant>,
}

/// The shard leadership actor's state.
pub(crate) struct State {
    /// Flags.
    config: LeaderElectionConfig,
    /// How many shards.
    shards: Shards,
    /// For each Lease's calls.
    client: Client,
    /// The member Lease (its `list` lists the namespace).
    member: LeaseApi,
    /// The member Lease's name.
    member_name: String,
    /// What the last list showed.
    board: LeaseBoard,
    /// The last list, by name: the base (resourceVersion) of the next writes.
    listed: BTreeMap<String, Lease>,
    /// The per-shard fences.
    fences: Arc<[Fence]>,
    /// The shards held, with the start of their last successful renewal (invariant: exactly
    /// the shards whose fence this actor considers open).
    held: BTreeMap<ShardId, Instant>,
    /// Held-set channel.
    published: watch::Sender<BTreeSet<ShardId>>,
    /// At most one round at a time (invariant).
    round: Option<Round>,
    /// Round counter.
    rounds: u64,
    /// Released on request: final.
    is_released: bool,
    /// Our own mailbox, counted, for the call tasks and timers.
    mailbox: CountedRef<ShardLeadershipMsg>,
}

/// The shard leadership actor (no configuration of its own: see [`ShardLeadershipArgs`]).
#[derive(Debug, Default)]
pub(crate) struct ShardLeadership;

impl RuntimeActor for ShardLeadership {
    type Msg = ShardLeadershipMsg;
    type State = State;
    type Arguments = ShardLeadershipArgs;

    async fn pre_start(
        &self,
        myself: CountedRef<ShardLeadershipMsg>,
        args: ShardLeadershipArgs,
    ) -> Result<State, ActorProcessingErr> {
        args.config.timings.validate()?;
        let config = args.config;
        debug_assert_eq!(
            args.fences.len(),
            usize::from(args.shards.count()),
            "one fence per shard violated"
        );
        let member_name = member_lease_name(&config.lease_name, &args.pod);
        let member = lease_api(&args.client, &config, &member_name);
        Ok(State {
            board: LeaseBoard::new(&config.lease_name, args.shards),
            shards: args.shards,
            client: args.client,
            member,
            member_name,
            listed: BTreeMap::new(),
            fences: args.fences,
            held: BTreeMap::new(),
            published: args.held,
            round: None,
            rounds: 0,
            is_released: false,
            mailbox: myself,
            config,
        })
    }

    async fn post_start(
        &self,
        _: CountedRef<ShardLeadershipMsg>,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        // A failed cast means we are already stopping: nothing to compete for.
        let _ = state.mailbox.cast(ShardLeadershipMsg::Tick);
        Ok(())
    }

    async fn handle(
        &self,
        _: CountedRef<ShardLeadershipMsg>,
        msg: ShardLeadershipMsg,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            ShardLeadershipMsg::Tick => state.on_tick(),
            ShardLeadershipMsg::Listed { round, result } => state.on_listed(round, result),
            ShardLeadershipMsg::Written { round, ours } => state.on_written(round, ours),
            ShardLeadershipMsg::Release(reply) => {
                state.release().await;
                // The caller may have timed out and gone: nothing left to tell it.
                let _ = reply.send(());
            }
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _: CountedRef<ShardLeadershipMsg>,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        if !state.is_released {
            state.release().await;
        }
        Ok(())
    }
}

/// The calls on Lease `name` in the election's namespace.
fn lease_api(client: &Client, config: &LeaderElectionConfig, name: &str) -> LeaseApi {
    LeaseApi::new(
        client.clone(),
        &config.lease_namespace,
        name,
        &config.field_manager,
        config.timings.api_timeout(),
    )
}

/// What one round writes: a Lease (by name, with its listed base) and the record.
struct Write {
    /// The shard, or `None` for the member Lease.
    shard: Option<ShardId>,
    /// The Lease's name.
    name: String,
    /// The Lease as listed (`None`: create it).
    base: Option<Lease>,
    /// What to write.
    record: LeaseRecord,
}

// === impl State ===

impl State {
    fn on_tick(&mut self) {
        if self.is_released {
            return;
        }
        let now = Instant::now();
        let timings = self.config.timings;
        let lapsed: Vec<ShardId> = (self.held.iter())
            .filter(|(_, renewed)| lease_rules::renew_deadline_passed(**renewed, now, &timings))
            .map(|(shard, _)| *shard)
            .collect();
        if !lapsed.is_empty() {
            tracing::warn!(?lapsed, "renew deadline passed: letting these shards go");
            self.drop_shards(&lapsed);
        }
        if self.round.is_none() {
            self.start_list();
        }
        self.mailbox
            .send_after(timings.retry_period, || ShardLeadershipMsg::Tick);
    }

    fn on_listed(&mut self, round: u64, result: Result<Vec<Lease>, LeaseCallError>) {
        if !self.is_current(round) || self.is_released {
            return;
        }
        let leases = match result {
            Ok(leases) => leases,
            Err(error) => {
                self.round = None;
                return tracing::warn!(%error, "listing the leases failed");
            }
        };
        let now = Instant::now();
        self.board.update(&leases, now);
        self.listed = leases
            .into_iter()
            .filter_map(|l| Some((l.metadata.name.clone()?, l)))
            .collect();
        let me = self.config.identity.clone();
        let lost: Vec<ShardId> = self
            .held
            .keys()
            .copied()
            .filter(|s| self.listed_record(*s).is_none_or(|r| !r.is_held_by(&me)))
            .collect();
        if !lost.is_empty() {
            tracing::warn!(?lost, "shard leases taken by another replica: letting them go");
            self.drop_shards(&lost);
        }
        let mine = self.held.keys().copied().collect();
        let (members, holders) = (self.board.members(now), self.board.holders(now));
        let plan = shard_rules::plan(self.shards, &me, &members, &holders, &mine);
        let release: Vec<ShardId> = plan.release.into_iter().collect();
        // Fence closed and out of the held set before the Lease is freed (the write below).
        self.drop_shards(&release);
        let writes = self.writes(&release, &plan.acquire);
        self.start_writes(round, now, writes);
    }

    fn on_written(&mut self, round: u64, ours: BTreeSet<ShardId>) {
        let Some(decided_at) = self
            .round
            .take_if(|r| r.number == round)
            .and_then(|r| r.decided_at)
        else {
            return;
        };
        if self.is_released {
            return;
        }
        let until = decided_at + self.config.timings.renew_deadline;
        for shard in ours {
            self.fences[usize::from(shard.0)].extend_to(until);
            self.held.insert(shard, decided_at);
        }
        self.publish();
    }

    /// Close every fence, publish nothing held, free the Leases. Final.
    async fn release(&mut self) {
        self.is_released = true;
        self.round = None;
        let held: Vec<ShardId> = self.held.keys().copied().collect();
        self.drop_shards(&held);
        for shard in &held {
            let api = lease_api(
                &self.client,
                &self.config,
                &self.shards.lease_name(&self.config.lease_name, *shard),
            );
            if let Err(error) = api.release(&self.config.identity).await {
                tracing::warn!(%error, %shard, "releasing a shard lease failed; it will expire");
            }
        }
        if let Err(error) = self.member.release(&self.config.identity).await {
            tracing::warn!(%error, "releasing the member lease failed; it will expire");
        }
    }

    /// Close the fences of `shards` and take them out of the held set.
    fn drop_shards(&mut self, shards: &[ShardId]) {
        for shard in shards {
            self.fences[usize::from(shard.0)].close();
            self.held.remove(shard);
        }
        self.publish();
    }

    /// This round's writes: the member Lease, every held shard (renew), the shards to acquire,
    /// the shards to release.
    fn writes(&self, release: &[ShardId], acquire: &BTreeSet<ShardId>) -> Vec<Write> {
        let wall = Timestamp::now();
        let me = Some(self.config.identity.clone());
        let lease_duration = self.config.timings.lease_duration;
        let ours = |current: Option<LeaseRecord>, acquiring: bool| match current {
            Some(current) if !acquiring => LeaseRecord {
                renew_time: Some(wall),
                lease_duration,
                ..current
            },
            Some(_) | None => LeaseRecord {
                holder: me.clone(),
                lease_duration,
                acquire_time: Some(wall),
                renew_time: Some(wall),
                transitions: current.map_or(0, |c| c.transitions.saturating_add(1)),
            },
        };
        // Our pod's member Lease: renewed when it names us, taken over when it names an
        // earlier process of the same pod.
        let member = self.listed.get(&self.member_name).cloned();
        let current = member.as_ref().map(|l| LeaseRecord::from_spec(l.spec.as_ref()));
        let is_ours = current
            .as_ref()
            .is_some_and(|r| r.is_held_by(&self.config.identity));
        let mut writes = vec![Write {
            shard: None,
            name: self.member_name.clone(),
            record: ours(current, !is_ours),
            base: member,
        }];
        for shard in self.held.keys().chain(acquire) {
            let acquiring = acquire.contains(shard);
            writes.push(self.write_for(*shard, |current| ours(current, acquiring)));
        }
        for shard in release {
            writes.push(self.write_for(*shard, |current| {
                lease_rules::released(&current.unwrap_or_else(|| ours(None, true)), wall)
            }));
        }
        writes
    }

    /// A write of shard `shard`'s Lease, `record` computed from its listed record.
    fn write_for(&self, shard: ShardId, record: impl FnOnce(Option<LeaseRecord>) -> LeaseRecord) -> Write {
        let name = self.shards.lease_name(&self.config.lease_name, shard);
        let base = self.listed.get(&name).cloned();
        Write {
            shard: Some(shard),
            record: record(base.as_ref().map(|l| LeaseRecord::from_spec(l.spec.as_ref()))),
            name,
            base,
        }
    }

    /// The record of shard `shard`'s Lease as last listed.
    fn listed_record(&self, shard: ShardId) -> Option<LeaseRecord> {
        let name = self.shards.lease_name(&self.config.lease_name, shard);
        self.listed
            .get(&name)
            .map(|l| LeaseRecord::from_spec(l.spec.as_ref()))
    }

    fn start_list(&mut self) {
        self.rounds += 1;
        let round = self.rounds;
        self.round = Some(Round {
            number: round,
            decided_at: None,
        });
        let (api, mailbox) = (self.member.clone(), self.mailbox.clone());
        tokio::spawn(async move {
            let result = api.list().await;
            // A failed cast means the actor is gone: nobody wants the answer.
            let _ = mailbox.cast(ShardLeadershipMsg::Listed { round, result });
        });
    }

    fn start_writes(&mut self, round: u64, decided_at: Instant, writes: Vec<Write>) {
        self.round = Some(Round {
            number: round,
            decided_at: Some(decided_at),
        });
        let (client, config, mailbox) = (self.client.clone(), self.config.clone(), self.mailbox.clone());
        let member = self.member.clone();
        let renewing: BTreeSet<ShardId> = self.held.keys().copied().collect();
        tokio::spawn(async move {
            // All at once: each call is bounded by the API timeout, so a round takes one call's
            // time whatever the number of shards.
            let results = futures::future::join_all(writes.into_iter().map(|write| {
                let api = match write.shard {
                    Some(_) => lease_api(&client, &config, &write.name),
                    None => member.clone(),
                };
                async move {
                    let result = api.write(write.base, &write.record).await;
                    (write.shard, write.record, result)
                }
            }))
            .await;
            let mut ours = BTreeSet::new();
            for (shard, record, result) in results {
                match (shard, result) {
                    (Some(shard), Ok(_)) if record.is_held_by(&config.identity) => {
                        ours.insert(shard);
                    }
                    (Some(shard), Err(error)) if renewing.contains(&shard) => {
                        tracing::info!(%error, %shard, "renewing a shard lease failed");
                    }
                    (Some(_) | None, Ok(_) | Err(_)) => {}
                }
            }
            // A failed cast means the actor is gone: nobody wants the answer.
            let _ = mailbox.cast(ShardLeadershipMsg::Written { round, ours });
        });
    }

    fn is_current(&self, round: u64) -> bool {
        self.round.as_ref().is_some_and(|r| r.number == round)
    }

    fn publish(&self) {
        let held: BTreeSet<ShardId> = self.held.keys().copied().collect();
        self.published.send_if_modified(|current| {
            let changed = *current != held;
            *current = held;
            changed
        });
    }
}

#[cfg(test)]
mod tests;
