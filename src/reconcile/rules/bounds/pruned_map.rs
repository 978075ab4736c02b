//! A `HashMap` whose stale entries are dropped in amortized constant time: a full pruning pass
//! runs only once the map has doubled since the last one, so each insert pays for at most a
//! constant share of it.

use std::{
    collections::HashMap,
    hash::Hash,
    ops::{Deref, DerefMut},
};

/// The map is never pruned below this many entries (pruning a small map buys nothing).
pub(crate) const MIN_PRUNE_LEN: usize = 1024;

/// See the module doc.
#[derive(Debug)]
pub(crate) struct PrunedMap<K, V> {
    map: HashMap<K, V>,
    /// Size after the last pruning.
    pruned_at_len: usize,
}

impl<K, V> Default for PrunedMap<K, V> {
    fn default() -> Self {
        Self {
            map: HashMap::new(),
            pruned_at_len: 0,
        }
    }
}

impl<K: Eq + Hash, V> PrunedMap<K, V> {
    /// Drops the entries `stale` picks, if the map has doubled since it was last pruned (and
    /// holds at least [`MIN_PRUNE_LEN`]); call it before each insert.
    pub(crate) fn prune_if_doubled(&mut self, mut stale: impl FnMut(&K, &V) -> bool) {
        if self.map.len() < MIN_PRUNE_LEN.max(2 * self.pruned_at_len) {
            return;
        }
        self.map.retain(|key, value| !stale(key, value));
        self.pruned_at_len = self.map.len();
    }
}

impl<K, V> Deref for PrunedMap<K, V> {
    type Target = HashMap<K, V>;

    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

impl<K, V> DerefMut for PrunedMap<K, V> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(len: usize) -> PrunedMap<usize, bool> {
        let mut map = PrunedMap::default();
        map.extend((0..len).map(|n| (n, n % 2 == 0)));
        map
    }

    #[test]
    fn a_map_below_the_minimum_should_not_be_pruned() {
        let mut map = filled(MIN_PRUNE_LEN - 1);
        map.prune_if_doubled(|_, stale| *stale);
        assert_eq!(map.len(), MIN_PRUNE_LEN - 1);
    }

    #[test]
    fn a_map_should_be_pruned_again_only_once_it_has_doubled() {
        let first = 4 * MIN_PRUNE_LEN;
        let mut map = filled(first);
        map.prune_if_doubled(|_, stale| *stale);
        assert_eq!(map.len(), first / 2, "the first pruning drops the stale half");

        map.extend((first..first + first / 2 - 1).map(|n| (n, true)));
        map.prune_if_doubled(|_, stale| *stale);
        assert_eq!(map.len(), first - 1, "below twice the last size: not pruned");

        map.insert(usize::MAX, true);
        map.prune_if_doubled(|_, stale| *stale);
        assert_eq!(map.len(), first / 2, "doubled: pruned");
    }
}
