//! A small map whose entries expire, with a bound on its size: the review caches of the secure
//! metrics endpoint, which attacker-chosen tokens must not grow without end.

use std::{
    collections::HashMap,
    hash::Hash,
    sync::{Mutex, PoisonError},
    time::{Duration, Instant},
};

/// Entries expire after the time they were inserted with; at `capacity`, inserting first drops
/// the expired entries, then the one closest to expiry.
#[derive(Debug)]
pub(super) struct TtlCache<K, V> {
    capacity: usize,
    entries: Mutex<HashMap<K, (V, Instant)>>,
}

impl<K: Eq + Hash + Clone, V: Clone> TtlCache<K, V> {
    pub(super) fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            entries: Mutex::default(),
        }
    }

    /// The value of `key` while it has not expired.
    pub(super) fn get(&self, key: &K) -> Option<V> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries
            .get(key)
            .filter(|(_, expires)| *expires > Instant::now())
            .map(|(value, _)| value.clone())
    }

    pub(super) fn insert(&self, key: K, value: V, ttl: Duration) {
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= self.capacity && !entries.contains_key(&key) {
            entries.retain(|_, (_, expires)| *expires > now);
        }
        if entries.len() >= self.capacity
            && !entries.contains_key(&key)
            && let Some(soonest) = entries
                .iter()
                .min_by_key(|(_, (_, expires))| *expires)
                .map(|(key, _)| key.clone())
        {
            entries.remove(&soonest);
        }
        entries.insert(key, (value, now + ttl));
    }

    /// Forgets `key` (an answer that another, newer one replaced).
    pub(super) fn remove(&self, key: &K) {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key);
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_should_expire_and_the_size_stay_bounded() {
        let cache = TtlCache::new(3);
        cache.insert(1, "a", Duration::ZERO);
        assert_eq!(cache.get(&1), None, "expired at once");
        for key in 0..100 {
            cache.insert(key, "v", Duration::from_secs(60 + key));
        }
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.get(&99), Some("v"), "the newest is kept");
        assert_eq!(cache.get(&0), None, "the soonest to expire went first");
    }
}
