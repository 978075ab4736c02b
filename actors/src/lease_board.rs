//! What one replica knows of the shard and member Leases: the live members and the valid
//! holder of each shard, from the Leases it lists in the leader-election namespace every retry
//! period. [`plan`](crate::shard_rules::plan) decides from it.
//!
//! Nothing here does I/O or reads a clock: the caller passes the listed Leases and `now`.
//!
//! # Names
//! - Shard `i`'s Lease: `<election id>-shard-<i>`, or the election id itself with one shard
//!   ([`Shards::lease_name`]).
//! - A replica's member Lease: `<election id>-member-<pod>` ([`member_lease_name`]), held by
//!   the replica's identity and renewed every retry period like a shard Lease. A replica is a
//!   member while its member Lease is valid.
//!
//! # Guarantees
//! - Validity follows client-go (see `lease_rules`): a Lease is valid until `lease_duration`
//!   after this replica first observed its current record, never by comparing its
//!   `renewTime` with our clock, so clock skew cannot shorten a lease; a released Lease (no
//!   holder) is free at once.
//! - A Lease no longer listed is forgotten (deleted: free); a shard Lease numbered `N` or more
//!   (left over from a larger `--shards`) and other Leases of the namespace are ignored.
//! - Members and holders are identities (pod name and per-process uid), so a restarted pod is
//!   a new member, and the holders of the shard Leases are found among the members by the
//!   same string.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::coordination::v1::Lease;
use tokio::time::Instant;

use crate::{
    lease_rules::{LeaseRecord, Observed},
    shard_rules::{ShardId, Shards},
};

/// The member Lease of pod `pod`: `<election_id>-member-<pod>`.
pub fn member_lease_name(election_id: &str, pod: &str) -> String {
    format!("{election_id}-member-{pod}")
}

/// What a Lease of the leader-election namespace is to the shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LeaseRole {
    /// The Lease of this shard.
    Shard(ShardId),
    /// A replica's member Lease.
    Member,
}

/// The shard and member Leases as one replica observed them.
#[derive(Debug)]
pub struct LeaseBoard {
    /// The election id: with one shard, the name of its Lease.
    election_id: String,
    /// `<election id>-shard-`.
    shard_prefix: String,
    /// `<election id>-member-`.
    member_prefix: String,
    /// How many shards there are.
    shards: Shards,
    /// Each relevant Lease by name, with when we first saw its current record; only Leases
    /// present in the last list.
    observed: BTreeMap<String, (LeaseRole, Observed)>,
}

impl LeaseBoard {
    /// A board for `shards` shards of election `election_id`, knowing no Lease yet.
    pub fn new(election_id: &str, shards: Shards) -> Self {
        Self {
            election_id: election_id.to_owned(),
            shard_prefix: format!("{election_id}-shard-"),
            member_prefix: format!("{election_id}-member-"),
            shards,
            observed: BTreeMap::new(),
        }
    }

    /// Record a complete list of the namespace's Leases, taken at `now`.
    pub fn update(&mut self, leases: &[Lease], now: Instant) {
        let mut previous = std::mem::take(&mut self.observed);
        for lease in leases {
            let Some(name) = lease.metadata.name.as_deref() else {
                continue;
            };
            let Some(role) = self.role_of(name) else {
                continue;
            };
            let record = LeaseRecord::from_spec(lease.spec.as_ref());
            let seen = previous.remove(name).map(|(_, observed)| observed);
            self.observed
                .insert(name.to_owned(), (role, Observed::update(seen, record, now)));
        }
    }

    /// The identities holding a valid member Lease at `now`.
    pub fn members(&self, now: Instant) -> BTreeSet<String> {
        self.valid(now)
            .filter(|(role, _)| *role == LeaseRole::Member)
            .map(|(_, holder)| holder.to_owned())
            .collect()
    }

    /// The valid holder of each shard Lease at `now` (free and expired shards are absent).
    pub fn holders(&self, now: Instant) -> BTreeMap<ShardId, String> {
        self.valid(now)
            .filter_map(|(role, holder)| match role {
                LeaseRole::Shard(shard) => Some((shard, holder.to_owned())),
                LeaseRole::Member => None,
            })
            .collect()
    }

    /// Every valid Lease's role and holder at `now`.
    fn valid(&self, now: Instant) -> impl Iterator<Item = (LeaseRole, &str)> {
        self.observed.values().filter_map(move |(role, observed)| {
            let holder = observed.record.holder.as_deref()?;
            observed.is_valid_at(now).then_some((*role, holder))
        })
    }

    /// What Lease `name` is to the shards, if anything.
    fn role_of(&self, name: &str) -> Option<LeaseRole> {
        if !self.shards.is_sharded() && name == self.election_id {
            Some(LeaseRole::Shard(ShardId(0)))
        } else if let Some(number) = name
            .strip_prefix(&self.shard_prefix)
            .filter(|_| self.shards.is_sharded())
        {
            let shard = number.parse::<u16>().ok().filter(|s| *s < self.shards.count())?;
            // Only the canonical spelling: "-shard-07" is not shard 7's Lease.
            (shard.to_string() == number).then_some(LeaseRole::Shard(ShardId(shard)))
        } else {
            name.starts_with(&self.member_prefix).then_some(LeaseRole::Member)
        }
    }
}

#[cfg(test)]
mod tests;
