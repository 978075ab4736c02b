//! Shard assignment as pure functions: which shard an object belongs to, how many shards a
//! replica may hold, and which shard Leases one replica should release or try to acquire so
//! that the replicas end up balanced (issue 39 point 5).
//!
//! Nothing here does I/O or reads a clock: the caller passes in what it observed (the members
//! it sees and each shard Lease's holder), so every rule is a table test.
//!
//! # The rules
//! - An object belongs to shard `fnv1a64(namespace) % N` ([`Shards::of_namespace`]), the
//!   64-bit FNV-1a hash that KEP-5866's server-side sharded watches use; cluster-scoped
//!   objects hash the empty namespace.
//! - Each shard is one Lease. With `N = 1` it is the leader-election Lease itself, named as
//!   before sharding existed; with `N > 1` shard `i` is `<leader-election id>-shard-<i>`
//!   ([`Shards::lease_name`]).
//! - With `R` live replicas each holds at most `ceil(N / R)` shards ([`Shards::cap`]); exactly
//!   `N mod R` of them hold that many and the others `floor(N / R)` ([`target`]).
//!
//! # Guarantees
//! - [`target`] is a function of the observation only, so replicas that observe the same
//!   Leases and members compute the same assignment and race for different shards.
//! - It moves the fewest shards: a member keeps its shards up to its quota, and the larger
//!   quotas go to the members already holding the most. When every member already holds its
//!   quota, [`plan`] says nothing (no churn when nothing changes).
//! - [`plan`] only ever asks to acquire a shard whose Lease the replica observed free or
//!   expired; a shard moving from A to B is released by A first (A stops its controllers,
//!   closes that shard's fence, frees the Lease) and only then acquired by B. Whatever the
//!   views, two replicas never hold one shard at once: each shard Lease keeps the
//!   single-holder rules of `lease_rules` and the fence bound of `crate::fence`, per shard.

use std::collections::{BTreeMap, BTreeSet};

/// The FNV-1a 64-bit offset basis, `14695981039346656037` (FNV reference,
/// <http://www.isthe.com/chongo/tech/comp/fnv/>, and draft-eastlake-fnv §5).
pub const FNV1A64_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;

/// The FNV 64-bit prime, `2^40 + 2^8 + 0xb3 = 1099511628211` (same references).
pub const FNV1A64_PRIME: u64 = 0x0000_0100_0000_01b3;

/// The 64-bit FNV-1a hash of `bytes`: for each byte, xor it in, then multiply by the prime.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV1A64_OFFSET_BASIS, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(FNV1A64_PRIME)
    })
}

/// One shard's number, `0..N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct ShardId(pub u16);

impl std::fmt::Display for ShardId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Why a shard count is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShardsError {
    /// Zero shards, or more than [`Shards::MAX`].
    #[error("the number of shards must be between 1 and {max}, got {got}", max = Shards::MAX)]
    OutOfRange {
        /// The count asked for.
        got: u32,
    },
}

/// How many shards the objects are split into (`--shards`), at least one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shards {
    /// `N`, in `1..=MAX`.
    count: u16,
}

impl Shards {
    /// No sharding: one shard, the leader-election Lease, exactly the behaviour before shards.
    pub const ONE: Self = Self { count: 1 };

    /// The most shards allowed. Each held shard costs its holder one Lease call per retry
    /// period (128 calls a second at the default 2 s for a replica holding all of them), and
    /// the benchmark of issue 39 uses 8.
    pub const MAX: u16 = 256;

    /// `count` shards.
    ///
    /// # Errors
    /// [`ShardsError::OutOfRange`] unless `1 <= count <= MAX`.
    pub fn new(count: u32) -> Result<Self, ShardsError> {
        match u16::try_from(count) {
            Ok(count @ 1..=Self::MAX) => Ok(Self { count }),
            Ok(_) | Err(_) => Err(ShardsError::OutOfRange { got: count }),
        }
    }

    /// `N`.
    pub fn count(self) -> u16 {
        self.count
    }

    /// Whether objects are split at all (`N > 1`).
    pub fn is_sharded(self) -> bool {
        self.count > 1
    }

    /// Every shard, in order.
    pub fn all(self) -> impl Iterator<Item = ShardId> {
        (0..self.count).map(ShardId)
    }

    /// The shard of every object in `namespace`: `fnv1a64(namespace) % N`.
    pub fn of_namespace(self, namespace: &str) -> ShardId {
        let shard = fnv1a64(namespace.as_bytes()) % u64::from(self.count);
        ShardId(u16::try_from(shard).expect("shard < N <= u16::MAX violated"))
    }

    /// The Lease of `shard`: `election_id` itself when there is one shard (today's name),
    /// `<election_id>-shard-<i>` otherwise.
    pub fn lease_name(self, election_id: &str, shard: ShardId) -> String {
        debug_assert!(
            shard.0 < self.count,
            "shard < N violated: {shard} of {}",
            self.count
        );
        if self.is_sharded() {
            format!("{election_id}-shard-{shard}")
        } else {
            election_id.to_owned()
        }
    }

    /// The most shards one of `replicas` live replicas may hold: `ceil(N / replicas)` (a
    /// replica always counts itself, so zero reads as one).
    pub fn cap(self, replicas: usize) -> usize {
        usize::from(self.count).div_ceil(replicas.max(1))
    }
}

/// Who should hold each shard, given the live `members` and the observed `holders` (a shard
/// missing from `holders`, or held by someone not in `members`, counts as free).
///
/// Quotas: `floor(N / R)` each, plus one for the `N mod R` members holding the most shards
/// now (ties: the smaller identity). Each member keeps its lowest-numbered shards up to its
/// quota; the free shards fill the members in identity order. Empty when `members` is.
pub fn target<'m>(
    shards: Shards,
    members: &'m BTreeSet<String>,
    holders: &BTreeMap<ShardId, String>,
) -> BTreeMap<ShardId, &'m str> {
    let replicas = members.len();
    if replicas == 0 {
        return BTreeMap::new();
    }
    let mut held: BTreeMap<&'m str, Vec<ShardId>> =
        members.iter().map(|m| (m.as_str(), Vec::new())).collect();
    for shard in shards.all() {
        if let Some(list) = holders.get(&shard).and_then(|h| held.get_mut(h.as_str())) {
            list.push(shard);
        }
    }
    let (floor, heavy) = (
        usize::from(shards.count) / replicas,
        usize::from(shards.count) % replicas,
    );
    let mut by_load: Vec<&'m str> = held.keys().copied().collect();
    by_load.sort_by_key(|m| std::cmp::Reverse(held[m].len()));
    let quota: BTreeMap<&'m str, usize> = by_load
        .iter()
        .enumerate()
        .map(|(rank, m)| (*m, floor + usize::from(rank < heavy)))
        .collect();
    let mut assignment = BTreeMap::new();
    for (member, list) in &held {
        for &shard in list.iter().take(quota[member]) {
            assignment.insert(shard, *member);
        }
    }
    let free: Vec<ShardId> = shards.all().filter(|s| !assignment.contains_key(s)).collect();
    let mut free = free.into_iter();
    for (member, list) in &held {
        for _ in list.len().min(quota[member])..quota[member] {
            let shard = free.next().expect("the quotas sum to N violated");
            assignment.insert(shard, *member);
        }
    }
    assignment
}

/// What one replica should do with the shard Leases after observing them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Shards to let go: stop their controllers, close their fence, free their Lease.
    pub release: BTreeSet<ShardId>,
    /// Free (or expired) shards to try to acquire through their Lease.
    pub acquire: BTreeSet<ShardId>,
}

impl Plan {
    /// Nothing to do.
    pub fn is_idle(&self) -> bool {
        self.release.is_empty() && self.acquire.is_empty()
    }
}

/// What replica `me` should do, given the live `members` (itself included, whether or not
/// its own member Lease was seen), the holder of every shard Lease it observed as validly
/// held (`holders`), and the shards it holds itself (`mine`, which wins over `holders` for
/// its own shards).
///
/// Releases every shard of `mine` that [`target`] gives to someone else; acquires the shards
/// [`target`] gives to `me` that nobody validly holds.
pub fn plan(
    shards: Shards,
    me: &str,
    members: &BTreeSet<String>,
    holders: &BTreeMap<ShardId, String>,
    mine: &BTreeSet<ShardId>,
) -> Plan {
    let mut members = members.clone();
    members.insert(me.to_owned());
    let mut holders = holders.clone();
    holders.retain(|shard, holder| holder != me || mine.contains(shard));
    holders.extend(mine.iter().map(|&shard| (shard, me.to_owned())));
    let target = target(shards, &members, &holders);
    let is_mine = |shard: &ShardId| target.get(shard) == Some(&me);
    Plan {
        release: mine.iter().copied().filter(|s| !is_mine(s)).collect(),
        acquire: target
            .keys()
            .copied()
            .filter(|s| is_mine(s) && !holders.contains_key(s))
            .collect(),
    }
}

#[cfg(test)]
mod tests;
