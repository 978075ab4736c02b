//! The budgets and the limiter, decided at explicit instants.

use super::*;

const ONE_PER_SECOND_BURST_5: RateLimit = limit(1.0, 5);

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// A one-per-second bucket whose burst of 5 was just taken at `now`.
fn drained(now: Instant) -> TokenBucket {
    let mut bucket = TokenBucket::new(ONE_PER_SECOND_BURST_5, now);
    for _ in 0..5 {
        assert_eq!(bucket.try_acquire(now, RejectionCost::Free), Admission::Accepted);
    }
    bucket
}

const fn limit(per_second: f64, burst: u32) -> RateLimit {
    RateLimit { per_second, burst }
}

fn rejected(retry_after_secs: f64) -> Admission {
    Admission::Rejected {
        retry_after: secs(retry_after_secs),
    }
}

#[test]
fn bucket_should_admit_a_full_burst_then_reject_with_the_time_to_the_next_token() {
    let t0 = Instant::now();
    let mut bucket = drained(t0);
    assert_eq!(bucket.try_acquire(t0, RejectionCost::Free), rejected(1.0));
    let later = t0 + secs(0.25);
    assert_eq!(bucket.try_acquire(later, RejectionCost::Free), rejected(0.75));
}

#[test]
fn bucket_should_refill_at_its_rate_and_never_above_burst() {
    let t0 = Instant::now();
    let mut bucket = drained(t0);
    assert_eq!(
        bucket.try_acquire(t0 + secs(1.0), RejectionCost::Free),
        Admission::Accepted
    );
    assert!((bucket.tokens_at(t0 + secs(1000.0)) - 5.0).abs() < 1e-9);
}

#[test]
fn bucket_without_debt_should_not_charge_rejected_requests() {
    let t0 = Instant::now();
    let mut bucket = drained(t0);
    for _ in 0..10 {
        assert!(matches!(
            bucket.try_acquire(t0 + secs(0.5), RejectionCost::Free),
            Admission::Rejected { .. }
        ));
    }
    assert_eq!(
        bucket.try_acquire(t0 + secs(1.0), RejectionCost::Free),
        Admission::Accepted
    );
}

#[test]
fn bucket_in_debt_mode_should_charge_rejected_requests_and_push_retry_after_out() {
    let t0 = Instant::now();
    let mut bucket = drained(t0);
    assert_eq!(bucket.try_acquire(t0, RejectionCost::Debt), rejected(2.0));
    assert_eq!(bucket.try_acquire(t0, RejectionCost::Debt), rejected(3.0));
    assert!((bucket.tokens_at(t0) + 2.0).abs() < 1e-9);
    // One second later a non-debt bucket would admit; this one is still 2 tokens short.
    assert_eq!(
        bucket.try_acquire(t0 + secs(1.0), RejectionCost::Debt),
        rejected(3.0)
    );
}

#[test]
fn bucket_in_debt_mode_should_livelock_clients_retrying_faster_than_the_refill() {
    let t0 = Instant::now();
    let mut bucket = drained(t0);
    // 1.45 requests/s against 1/s: the incident's arithmetic (reference §2.5).
    let accepted = (1..=1000)
        .map(|i| t0 + secs(f64::from(i) / 1.45))
        .filter(|&now| bucket.try_acquire(now, RejectionCost::Debt) == Admission::Accepted)
        .count();
    assert_eq!(
        accepted, 0,
        "debt mode should never admit a client that outruns the refill"
    );
}

#[test]
fn bucket_should_keep_earned_tokens_capped_at_the_new_burst_when_reconfigured() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(ONE_PER_SECOND_BURST_5, t0);
    bucket.reconfigure(limit(0.5, 2), t0);
    assert!((bucket.tokens_at(t0) - 2.0).abs() < 1e-9);
    assert_eq!(bucket.try_acquire(t0, RejectionCost::Free), Admission::Accepted);
    assert_eq!(bucket.try_acquire(t0, RejectionCost::Free), Admission::Accepted);
    assert_eq!(bucket.try_acquire(t0, RejectionCost::Free), rejected(2.0));
}

#[test]
fn limiter_should_keep_one_bucket_per_token_and_apply_overrides_at_runtime() {
    let t0 = Instant::now();
    let limiter = RateLimiter::new(limit(1.0, 1), HashMap::new(), false, LimiterMode::TokenBucket);
    assert_eq!(limiter.admit("a", t0), Admission::Accepted);
    assert_eq!(limiter.admit("b", t0), Admission::Accepted);
    assert!(matches!(limiter.admit("a", t0), Admission::Rejected { .. }));
    limiter.set_token_limit("a", limit(0.5, 1), t0);
    assert_eq!(limiter.admit("a", t0 + secs(1.0)), rejected(1.0));
    assert_eq!(limiter.admit("a", t0 + secs(2.0)), Admission::Accepted);
    assert_eq!(limiter.limit_for("b"), limit(1.0, 1));
}

#[test]
fn capped_debt_should_charge_rejections_only_down_to_the_floor() {
    let t0 = Instant::now();
    let mut bucket = drained(t0);
    let capped = RejectionCost::CappedDebt(2.0);
    assert_eq!(bucket.try_acquire(t0, capped), rejected(2.0));
    assert_eq!(bucket.try_acquire(t0, capped), rejected(3.0));
    for _ in 0..100 {
        assert_eq!(bucket.try_acquire(t0, capped), rejected(3.0));
    }
    assert!((bucket.tokens_at(t0) + 2.0).abs() < 1e-9);
    // However hard a client hammered, 3 seconds of refill admit it again (unbounded debt
    // would now need 102 seconds).
    assert_eq!(bucket.try_acquire(t0 + secs(3.0), capped), Admission::Accepted);
}

#[test]
fn sliding_window_should_admit_its_capacity_per_rolling_window() {
    let t0 = Instant::now();
    // 1/s over a 10s window: 10 requests per any 10 seconds, however they are spread.
    let mut window = SlidingWindow::new(limit(1.0, 5), secs(10.0));
    for i in 0..10 {
        assert_eq!(
            window.try_acquire(t0 + secs(f64::from(i) * 0.1)),
            Admission::Accepted
        );
    }
    assert_eq!(window.try_acquire(t0 + secs(1.0)), rejected(9.0));
    // The first request leaves the window at t0 + 10s, the second at t0 + 10.1s.
    assert_eq!(window.try_acquire(t0 + secs(10.0)), Admission::Accepted);
    assert_eq!(window.try_acquire(t0 + secs(10.0)), rejected(0.1));
    window.reconfigure(limit(2.0, 5));
    assert_eq!(window.try_acquire(t0 + secs(10.0)), Admission::Accepted);
}

#[test]
fn limiter_should_enforce_its_mode_per_token() {
    let t0 = Instant::now();
    let window = LimiterMode::SlidingWindow { window_seconds: 2.0 };
    let limiter = RateLimiter::new(limit(1.0, 5), HashMap::new(), true, window);
    assert_eq!(limiter.admit("a", t0), Admission::Accepted);
    assert_eq!(limiter.admit("a", t0), Admission::Accepted);
    // Burst 5 is not used by a window; debt mode neither: the rejection is free.
    assert_eq!(limiter.admit("a", t0), rejected(2.0));
    assert_eq!(limiter.admit("b", t0), Admission::Accepted);
    let capped = LimiterMode::CappedDebt { max_debt: 1 };
    let limiter = RateLimiter::new(limit(1.0, 1), HashMap::new(), false, capped);
    assert_eq!(limiter.admit("a", t0), Admission::Accepted);
    assert_eq!(limiter.admit("a", t0), rejected(2.0));
    assert_eq!(limiter.admit("a", t0), rejected(2.0));
}

#[test]
fn modes_should_parse_from_yaml_and_refuse_an_empty_window() {
    let mode: LimiterMode = serde_norway::from_str("{ type: capped_debt, max_debt: 5 }").unwrap();
    assert_eq!(mode, LimiterMode::CappedDebt { max_debt: 5 });
    let mode: LimiterMode = serde_norway::from_str("{ type: sliding_window, window_seconds: 60 }").unwrap();
    assert!(mode.validate().is_ok());
    assert!(
        LimiterMode::SlidingWindow { window_seconds: 0.0 }
            .validate()
            .is_err()
    );
    assert!(LimiterMode::default().validate().is_ok());
}

#[test]
fn rate_limit_should_refuse_zero_rate_and_zero_burst() {
    assert!(limit(0.0, 5).validate().is_err());
    assert!(limit(f64::NAN, 5).validate().is_err());
    assert!(limit(1.0, 0).validate().is_err());
    assert!(RateLimit::default().validate().is_ok());
}
