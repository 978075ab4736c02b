//! A shared credential's part of its budget under shards (docs/sharding.md, "Shared
//! credentials"): the ClusterFerrVaultConnection token every shard's holder reveals with. Pure.
//!
//! # Guarantees
//! - Per shard: `rate / N` requests per second. A replica holding `k` of the `N` shards paces
//!   the credential at `rate × k / N`, so the replicas together (each shard held by at most one
//!   of them) never pace it above `rate`.
//! - Burst: a replica holding `k` shards gets `max(1, ⌊burst × k / N⌋)`. Rounding the product
//!   down (rather than `k × ⌊burst / N⌋`) loses at most one token per replica, and the sum over
//!   the replicas is at most `burst` whenever each of them gets at least one by the product
//!   itself. The floor of 1 exists because a bucket of 0 tokens never sends: with fewer burst
//!   tokens than replicas holding shards, the first requests after a simultaneous start of
//!   every replica can together exceed the server's burst (by at most one request per replica),
//!   never its rate.
//! - `N = 1`: the whole budget, [`BudgetShare::is_split`] false: nothing changes.
//!
//! # Assumptions
//! Every replica runs with the same `--ferrvault-rate`, `--ferrvault-burst` and `--shards` (the
//! chart gives them one set of flags).

/// The part of a shared credential's budget one replica spends: `held` of `shards` shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetShare {
    /// Shards held, `1..=shards`: a replica holding none sends nothing, so its idle pacers keep
    /// the share of the last held set (at least one shard's).
    held: u32,
    /// Shards in all (`--shards`), at least 1.
    shards: u32,
}

impl BudgetShare {
    /// The whole budget (`--shards 1`).
    pub const WHOLE: Self = Self { held: 1, shards: 1 };

    /// `held` of `shards` shards; `shards` is taken as at least 1 and `held` as within
    /// `1..=shards`.
    pub fn new(held: u32, shards: u32) -> Self {
        let shards = shards.max(1);
        Self {
            held: held.clamp(1, shards),
            shards,
        }
    }

    /// Whether the budget is split at all (more than one shard).
    pub fn is_split(&self) -> bool {
        self.shards > 1
    }

    /// Shards held.
    pub fn held(&self) -> u32 {
        self.held
    }

    /// This replica's rate out of the credential's `rate` (requests per second).
    pub fn rate(&self, rate: f64) -> f64 {
        rate * f64::from(self.held) / f64::from(self.shards)
    }

    /// This replica's burst out of the credential's `burst` (see the module doc).
    pub fn burst(&self, burst: u32) -> u32 {
        let product = u64::from(burst) * u64::from(self.held) / u64::from(self.shards);
        u32::try_from(product).unwrap_or(burst).max(1)
    }
}

/// What `status.budgetShare` of a ClusterFerrVaultConnection says of a token shared by `shards`
/// shards, under the client's `rate` and `burst`; `None` with one shard (the whole budget, as
/// before shards).
pub fn describe_split(shards: u32, rate: f64, burst: u32) -> Option<String> {
    (shards > 1).then(|| {
        let per_shard = BudgetShare::new(1, shards);
        format!(
            "1/{shards} of {rate} requests/s per shard ({:.3}/s), over {shards} shards; a replica \
             holding k shards sends at most k/{shards} of it with a burst of \
             max(1, floor({burst}k/{shards})) (the burst of one shard: {})",
            per_shard.rate(rate),
            per_shard.burst(burst)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way `shards` shards can be held by replicas: each composition of `shards` into
    /// parts of at most `cap` (the runtime's ceil(N / R)), as the held counts.
    fn splits(shards: u32) -> Vec<Vec<u32>> {
        fn go(left: u32, prefix: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
            if left == 0 {
                out.push(prefix.clone());
                return;
            }
            for part in 1..=left {
                prefix.push(part);
                go(left - part, prefix, out);
                prefix.pop();
            }
        }
        let mut out = Vec::new();
        go(shards, &mut Vec::new(), &mut out);
        out
    }

    #[test]
    fn share_should_give_each_shard_rate_over_n_and_k_shards_k_times_that() {
        for (held, shards, rate, want) in [
            (1, 1, 1.0, 1.0),
            (1, 8, 1.0, 0.125),
            (2, 6, 1.0, 1.0 / 3.0),
            (3, 3, 2.5, 2.5),
            (0, 4, 4.0, 1.0), // none held: one shard's share (it sends nothing anyway)
            (9, 4, 4.0, 4.0), // more than N: clamped to the whole
        ] {
            let share = BudgetShare::new(held, shards);
            assert!(
                (share.rate(rate) - want).abs() < 1e-12,
                "{held} of {shards} at {rate}/s: {} not {want}",
                share.rate(rate)
            );
        }
    }

    #[test]
    fn share_should_round_the_burst_down_but_never_below_one() {
        for (held, shards, burst, want) in [
            (1, 1, 5, 5),
            (1, 6, 5, 1), // 5/6 rounds to 0: one token, the least that sends
            (2, 6, 5, 1), // 10/6
            (3, 6, 5, 2), // 15/6
            (6, 6, 5, 5), // every shard: the whole burst
            (4, 8, 3, 1), // 12/8
            (7, 8, 16, 14),
        ] {
            assert_eq!(
                BudgetShare::new(held, shards).burst(burst),
                want,
                "{held} of {shards} with a burst of {burst}"
            );
        }
    }

    #[test]
    fn shares_of_every_split_should_never_sum_above_the_budget() {
        for shards in 1..=9 {
            for split in splits(shards) {
                let rate: f64 = split.iter().map(|&k| BudgetShare::new(k, shards).rate(1.0)).sum();
                assert!(rate <= 1.0 + 1e-12, "{split:?} of {shards}: {rate}/s");
                for burst in 1..=20 {
                    let bursts: Vec<u32> = split
                        .iter()
                        .map(|&k| BudgetShare::new(k, shards).burst(burst))
                        .collect();
                    let sum: u32 = bursts.iter().sum();
                    // The floor of one per replica is the only excess (module doc).
                    let floored = split
                        .iter()
                        .filter(|&&k| u64::from(burst) * u64::from(k) < u64::from(shards))
                        .count();
                    let floored = u32::try_from(floored).expect("few replicas");
                    assert!(
                        sum <= burst + floored,
                        "{split:?} of {shards} with a burst of {burst}: {bursts:?}"
                    );
                    if floored == 0 {
                        assert!(sum <= burst, "{split:?} of {shards}, burst {burst}: {bursts:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn one_shard_should_be_the_whole_budget_and_say_nothing() {
        assert!(!BudgetShare::WHOLE.is_split());
        assert_eq!(BudgetShare::WHOLE.rate(1.5), 1.5);
        assert_eq!(BudgetShare::WHOLE.burst(5), 5);
        assert_eq!(describe_split(1, 1.0, 5), None);
    }

    #[test]
    fn split_should_be_described_with_the_per_shard_share() {
        let text = describe_split(8, 1.0, 5).expect("split");
        assert!(
            text.starts_with("1/8 of 1 requests/s per shard (0.125/s), over 8 shards"),
            "{text}"
        );
        assert!(text.ends_with("(the burst of one shard: 1)"), "{text}");
    }
}
