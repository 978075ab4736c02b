//! Replicas running [`plan`] against a model of the shard Leases and their fences, one retry
//! period per tick, checked after every single Lease write: never two open fences on one
//! shard, balanced once things settle, no churn while nothing changes.
//!
//! The model is the worst case for safety: another replica may take a Lease as soon as
//! `lease_duration` has passed since its holder's last write (real candidates time it from
//! their own later observation), and a holder's fence stays open until its last write plus
//! the renew deadline, as `crate::fence` states.

use super::*;

/// Lease duration, renew deadline, in retry periods (client-go's 15 s, 10 s, 2 s, rounded
/// towards danger: 7 × 2 s = 14 s < 15 s).
const LEASE: u64 = 7;
const RENEW_DEADLINE: u64 = 5;

/// One Lease as the API server stores it.
#[derive(Clone, Copy, Default)]
struct Lease {
    holder: Option<usize>,
    written_at: u64,
}

impl Lease {
    fn valid_holder(self, now: u64) -> Option<usize> {
        self.holder.filter(|_| now < self.written_at + LEASE)
    }
}

/// What a replica process is doing.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Health {
    /// Reads and writes Leases every tick.
    Running,
    /// Cut off from the API server: no Lease call succeeds; it keeps writing to FerrVault-side
    /// objects only while its fences are open.
    Partitioned,
    /// Gone (SIGKILL or a clean exit): holds nothing.
    Dead,
}

struct Replica {
    health: Health,
    /// Shards it believes it holds, with the instant its fence for each closes.
    mine: BTreeMap<ShardId, u64>,
}

struct World {
    n: Shards,
    now: u64,
    shards: Vec<Lease>,
    members: Vec<Lease>,
    replicas: Vec<Replica>,
    /// Acquisitions and releases in the last tick.
    moves: usize,
}

impl World {
    fn new(n: u32, replicas: usize) -> Self {
        let n = shards(n);
        let mut world = Self {
            n,
            now: 0,
            shards: vec![Lease::default(); usize::from(n.count())],
            members: Vec::new(),
            replicas: Vec::new(),
            moves: 0,
        };
        (0..replicas).for_each(|_| world.join());
        world
    }

    fn join(&mut self) {
        self.members.push(Lease::default());
        self.replicas.push(Replica {
            health: Health::Running,
            mine: BTreeMap::new(),
        });
    }

    fn name(i: usize) -> String {
        format!("r{i}")
    }

    /// A graceful exit: every shard released (fence closed first, then the Lease freed), then
    /// the member Lease.
    fn leave(&mut self, i: usize) {
        for shard in std::mem::take(&mut self.replicas[i].mine).into_keys() {
            self.shards[usize::from(shard.0)].holder = None;
            self.check();
        }
        self.members[i].holder = None;
        self.replicas[i].health = Health::Dead;
    }

    fn kill(&mut self, i: usize) {
        self.replicas[i].mine.clear();
        self.replicas[i].health = Health::Dead;
    }

    fn partition(&mut self, i: usize) {
        self.replicas[i].health = Health::Partitioned;
    }

    /// One retry period: every replica, in an order rotating with time, takes its turn.
    fn tick(&mut self) {
        self.now += 1;
        self.moves = 0;
        let count = self.replicas.len();
        for k in 0..count {
            let i = (k + usize::try_from(self.now).expect("small")) % count;
            match self.replicas[i].health {
                Health::Running => self.turn(i),
                // The leadership actor steps down at the renew deadline without any call.
                Health::Partitioned => self.replicas[i].mine.retain(|_, until| self.now < *until),
                Health::Dead => {}
            }
            self.check();
        }
    }

    /// One running replica's turn: renew, observe, plan, release, acquire.
    fn turn(&mut self, i: usize) {
        let now = self.now;
        self.members[i] = Lease {
            holder: Some(i),
            written_at: now,
        };
        let mine: Vec<ShardId> = self.replicas[i].mine.keys().copied().collect();
        for shard in mine {
            let lease = &mut self.shards[usize::from(shard.0)];
            if lease.holder == Some(i) {
                lease.written_at = now;
                self.replicas[i].mine.insert(shard, now + RENEW_DEADLINE);
            } else {
                self.replicas[i].mine.remove(&shard);
            }
        }
        let members = (0..self.members.len())
            .filter(|m| self.members[*m].valid_holder(now).is_some())
            .map(Self::name)
            .collect();
        let holders = self
            .n
            .all()
            .filter_map(|s| Some((s, Self::name(self.shards[usize::from(s.0)].valid_holder(now)?))))
            .collect();
        let mine = self.replicas[i].mine.keys().copied().collect();
        let plan = plan(self.n, &Self::name(i), &members, &holders, &mine);
        for shard in plan.release {
            // The fence closes (controllers stopped) before the Lease is freed.
            self.replicas[i].mine.remove(&shard);
            self.shards[usize::from(shard.0)].holder = None;
            self.moves += 1;
            self.check();
        }
        for shard in plan.acquire {
            let lease = &mut self.shards[usize::from(shard.0)];
            // The Lease API: a valid Lease of someone else is never overwritten.
            if lease.valid_holder(now).is_none() {
                *lease = Lease {
                    holder: Some(i),
                    written_at: now,
                };
                self.replicas[i].mine.insert(shard, now + RENEW_DEADLINE);
                self.moves += 1;
                self.check();
            }
        }
    }

    /// The invariant: at every instant, at most one replica's fence is open on each shard.
    fn check(&self) {
        for shard in self.n.all() {
            let open: Vec<usize> = (0..self.replicas.len())
                .filter(|r| self.replicas[*r].health != Health::Dead)
                .filter(|r| {
                    self.replicas[*r]
                        .mine
                        .get(&shard)
                        .is_some_and(|until| self.now < *until)
                })
                .collect();
            assert!(
                open.len() <= 1,
                "two holders violated: shard {shard} open on {open:?} at {}",
                self.now
            );
        }
    }

    /// Ticks until the running replicas hold every shard and a tick moves nothing; panics
    /// after `limit` ticks. Returns the ticks taken.
    fn settle(&mut self, limit: u64) -> u64 {
        let start = self.now;
        loop {
            self.tick();
            if self.moves == 0 && self.is_fully_held() {
                return self.now - start;
            }
            assert!(self.now - start < limit, "did not settle within {limit} ticks");
        }
    }

    /// Whether every shard is held by exactly one running replica.
    fn is_fully_held(&self) -> bool {
        self.n.all().all(|s| {
            let running = self.replicas.iter().filter(|r| r.health == Health::Running);
            running.filter(|r| r.mine.contains_key(&s)).count() == 1
        })
    }

    /// Asserts balance over the running replicas and that many quiet ticks move nothing.
    fn assert_settled_and_quiet(&mut self, case: &str) {
        let live: BTreeSet<String> = (0..self.replicas.len())
            .filter(|r| self.replicas[*r].health == Health::Running)
            .map(Self::name)
            .collect();
        let assignment: BTreeMap<ShardId, &str> = self
            .n
            .all()
            .filter_map(|s| {
                let holder = (0..self.replicas.len()).find(|r| self.replicas[*r].mine.contains_key(&s))?;
                live.get(&Self::name(holder)).map(|name| (s, name.as_str()))
            })
            .collect();
        assert_balanced(self.n, &live, &assignment, case);
        for _ in 0..3 * LEASE {
            self.tick();
            assert_eq!(self.moves, 0, "{case}: churn while nothing changes");
        }
    }
}

#[test]
fn replicas_starting_together_should_settle_balanced_and_stay_quiet() {
    for (n, replicas) in [(1, 3), (8, 1), (8, 3), (8, 4), (16, 5), (3, 5)] {
        let mut world = World::new(n, replicas);
        world.settle(4 * LEASE);
        world.assert_settled_and_quiet(&format!("{n} shards, {replicas} replicas"));
    }
}

#[test]
fn a_joining_replica_should_get_its_share_without_two_holders_at_any_instant() {
    let mut world = World::new(8, 3);
    world.settle(4 * LEASE);
    world.join();
    // Seen by the holders at their next turn, released then, taken at the newcomer's next
    // turn, and one quiet tick: a few retry periods, not a lease expiry.
    let ticks = world.settle(4 * LEASE);
    assert!(
        ticks <= 4,
        "a newcomer waits on releases, not on expiries: {ticks} retry periods"
    );
    world.assert_settled_and_quiet("3 + 1 replicas");
}

#[test]
fn a_leaving_replica_should_hand_its_shards_over_within_a_retry_period() {
    let mut world = World::new(8, 4);
    world.settle(4 * LEASE);
    world.leave(1);
    let ticks = world.settle(4 * LEASE);
    assert!(
        ticks <= 2,
        "released shards are taken at the next turn: {ticks} retry periods"
    );
    world.assert_settled_and_quiet("4 − 1 replicas (graceful)");
}

#[test]
fn a_killed_replicas_shards_should_be_held_again_within_the_lease_and_a_retry_period() {
    let mut world = World::new(8, 3);
    world.settle(4 * LEASE);
    world.kill(0);
    let ticks = world.settle(4 * LEASE);
    assert!(ticks <= LEASE + 1, "held again after {ticks} retry periods");
    world.assert_settled_and_quiet("3 − 1 replicas (SIGKILL)");
}

#[test]
fn a_partitioned_holder_should_close_its_fences_before_anyone_takes_its_shards() {
    for (n, replicas) in [(8, 2), (8, 3), (4, 4)] {
        let mut world = World::new(n, replicas);
        world.settle(4 * LEASE);
        world.partition(0);
        // `check` runs after every write: another replica takes r0's shards only once r0's
        // fences have closed.
        world.settle(4 * LEASE);
        assert!(
            world.replicas[0].mine.is_empty(),
            "r0 stepped down at its renew deadline"
        );
        world.assert_settled_and_quiet(&format!("{n} shards, {replicas} replicas, r0 partitioned"));
    }
}

/// A change of membership.
enum Event {
    /// A new replica starts.
    Join,
    /// SIGKILL.
    Kill(usize),
    /// Cut off from the API server for good.
    Partition(usize),
    /// A clean exit (rolling update, scale down).
    Leave(usize),
}

#[test]
fn replicas_coming_and_going_should_never_leave_two_holders_of_a_shard() {
    let mut world = World::new(8, 2);
    let events = [
        Event::Join,
        Event::Join,
        Event::Kill(1),
        Event::Partition(2),
        Event::Join,
        Event::Leave(0),
        Event::Join,
        Event::Kill(3),
    ];
    for event in events {
        match event {
            Event::Join => world.join(),
            Event::Kill(who) => world.kill(who),
            Event::Partition(who) => world.partition(who),
            Event::Leave(who) => world.leave(who),
        }
        // Changes land mid-flight: only a few ticks between them, then a full settle at the end.
        for _ in 0..3 {
            world.tick();
        }
    }
    world.settle(6 * LEASE);
    world.assert_settled_and_quiet("after eight membership changes");
}
