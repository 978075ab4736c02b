//! How many reviews one client address may cost the API server: a token bucket per source IP
//! (issue 34 point 5). A flood of made-up tokens from one address gets 429s after the burst,
//! without a review; a scraper whose answers are cached never draws from its bucket.
//!
//! # Guarantees
//! - An address may start at most [`REVIEW_BURST`] reviews at once, then
//!   [`REVIEWS_PER_SECOND`] on average; each address has its own bucket.
//! - An IPv4 address and its IPv4-mapped IPv6 form share one bucket.
//! - At most [`SOURCES`] addresses are remembered. A bucket that has refilled is the same as no
//!   bucket and goes first; beyond that, the one that drew last longest ago. Only a client with
//!   more than [`SOURCES`] addresses can make another's bucket be forgotten (and so refilled).
//!
//! Pure: the caller passes the time, so the tests need no clock.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{Mutex, PoisonError},
    time::{Duration, Instant},
};

/// Reviews one address may start at once.
pub const REVIEW_BURST: f64 = 10.0;
/// Reviews one address may start per second, on average. Prometheus needs one TokenReview a
/// minute and one SubjectAccessReview every five (the cache lifetimes).
pub const REVIEWS_PER_SECOND: f64 = 1.0;
/// Addresses remembered at once.
pub const SOURCES: usize = 1024;

/// One address's bucket.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// Reviews it may start now, as of `at`.
    tokens: f64,
    /// When `tokens` was last brought up to date.
    at: Instant,
}

impl Bucket {
    /// The bucket brought up to `now`.
    fn refilled(self, now: Instant) -> Bucket {
        let earned = now.saturating_duration_since(self.at).as_secs_f64() * REVIEWS_PER_SECOND;
        Bucket {
            tokens: (self.tokens + earned).min(REVIEW_BURST),
            at: now.max(self.at),
        }
    }
}

/// The buckets of the addresses seen lately.
#[derive(Debug, Default)]
pub(super) struct SourceLimit {
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
}

impl SourceLimit {
    /// Takes one review from `source`'s bucket at `now`.
    ///
    /// # Errors
    /// How long until the bucket holds a review again, when it is empty (nothing is taken).
    pub(super) fn take(&self, source: IpAddr, now: Instant) -> Result<(), Duration> {
        let source = source.to_canonical();
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        if buckets.len() >= SOURCES && !buckets.contains_key(&source) {
            make_room(&mut buckets, now);
        }
        let full = Bucket {
            tokens: REVIEW_BURST,
            at: now,
        };
        let bucket = buckets.entry(source).or_insert(full);
        *bucket = bucket.refilled(now);
        if bucket.tokens < 1.0 {
            let wait = (1.0 - bucket.tokens) / REVIEWS_PER_SECOND;
            return Err(Duration::from_secs_f64(wait));
        }
        bucket.tokens -= 1.0;
        Ok(())
    }

    /// Addresses remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.buckets.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

/// Forgets the buckets that have refilled, or else the one that drew last longest ago.
fn make_room(buckets: &mut HashMap<IpAddr, Bucket>, now: Instant) {
    buckets.retain(|_, bucket| bucket.refilled(now).tokens < REVIEW_BURST);
    if buckets.len() < SOURCES {
        return;
    }
    if let Some(oldest) = buckets
        .iter()
        .min_by_key(|(_, bucket)| bucket.at)
        .map(|(source, _)| *source)
    {
        buckets.remove(&oldest);
    }
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, Ipv6Addr};

    use super::*;

    fn v4(last: u8) -> IpAddr {
        Ipv4Addr::new(10, 0, 0, last).into()
    }

    #[test]
    fn an_address_should_get_its_burst_then_429_with_the_wait_until_its_next_review() {
        let limit = SourceLimit::default();
        let now = Instant::now();
        for _ in 0..REVIEW_BURST as usize {
            assert_eq!(limit.take(v4(1), now), Ok(()));
        }
        let wait = limit.take(v4(1), now).expect_err("the burst is spent");
        assert_eq!(wait, Duration::from_secs(1));
        assert_eq!(
            limit.take(v4(2), now),
            Ok(()),
            "another address has its own bucket"
        );
        let later = now + Duration::from_secs(1);
        assert_eq!(limit.take(v4(1), later), Ok(()), "one review a second comes back");
        assert!(limit.take(v4(1), later).is_err());
    }

    #[test]
    fn a_flood_from_one_address_should_start_no_more_reviews_than_the_rate_allows() {
        let limit = SourceLimit::default();
        let start = Instant::now();
        // 10,000 attempts, one a millisecond: the burst, then one about every second after the
        // first (float rounding may move the one due at the 10th second's edge).
        let started = (0..10_000u64)
            .filter(|&i| limit.take(v4(1), start + Duration::from_millis(i)).is_ok())
            .count();
        let burst = REVIEW_BURST as usize;
        assert!(
            (burst + 9..=burst + 10).contains(&started),
            "{started} reviews started by 10,000 attempts in 10 s"
        );
    }

    #[test]
    fn an_ipv4_mapped_address_should_share_the_ipv4_bucket() {
        let limit = SourceLimit::default();
        let now = Instant::now();
        let mapped: IpAddr = Ipv4Addr::new(10, 0, 0, 1).to_ipv6_mapped().into();
        for _ in 0..REVIEW_BURST as usize {
            assert_eq!(limit.take(mapped, now), Ok(()));
        }
        assert!(limit.take(v4(1), now).is_err(), "the same address");
        assert_eq!(limit.take(Ipv6Addr::LOCALHOST.into(), now), Ok(()));
    }

    #[test]
    fn the_table_should_stay_bounded_and_forget_refilled_buckets_first() {
        let limit = SourceLimit::default();
        let start = Instant::now();
        let emptied: IpAddr = Ipv6Addr::LOCALHOST.into();
        for _ in 0..REVIEW_BURST as usize {
            limit.take(emptied, start).expect("the burst");
        }
        // A new address every millisecond, each drawing once: refilled a second later.
        let mut now = start;
        for i in 0..(SOURCES as u32 * 4) {
            now = start + Duration::from_millis(u64::from(i));
            let source = IpAddr::from(Ipv4Addr::from(0x0a00_0000 + i));
            limit.take(source, now).expect("a new address has its burst");
            assert!(limit.len() <= SOURCES);
        }
        let left = (0..REVIEW_BURST as usize)
            .filter(|_| limit.take(emptied, now).is_ok())
            .count();
        assert_eq!(
            left, 4,
            "4,096 addresses later the emptied bucket is remembered: refilled by 4 s, not reset"
        );
    }

    #[test]
    fn a_table_full_of_drawn_buckets_should_forget_the_one_that_drew_longest_ago() {
        let limit = SourceLimit::default();
        let now = Instant::now();
        for i in 0..SOURCES as u32 {
            let source = IpAddr::from(Ipv4Addr::from(0x0a00_0000 + i));
            let at = now + Duration::from_micros(u64::from(i));
            limit.take(source, at).expect("the burst");
        }
        let newcomer = IpAddr::from(Ipv4Addr::new(192, 0, 2, 1));
        limit
            .take(newcomer, now + Duration::from_millis(2))
            .expect("room made");
        assert_eq!(limit.len(), SOURCES);
        let oldest = IpAddr::from(Ipv4Addr::from(0x0a00_0000));
        let buckets = limit.buckets.lock().expect("lock");
        assert!(!buckets.contains_key(&oldest) && buckets.contains_key(&newcomer));
    }
}
