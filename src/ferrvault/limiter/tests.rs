//! The bucket alone, then against model servers in virtual time (one request at a time, answers
//! instantaneous, `Retry-After` in whole seconds rounded up as FerrVault sends it).

use std::time::Duration;

use tokio::time::Instant;

use super::*;

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

fn take(bucket: &mut TokenBucket, now: Instant) -> Ticket {
    bucket.try_take(now).expect("a token is available")
}

#[test]
fn bucket_should_hand_out_its_burst_minus_headroom_then_pace_at_the_rate() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(1.0, 5, t0);
    for _ in 0..4 {
        take(&mut bucket, t0);
    }
    let ready = bucket.try_take(t0).unwrap_err();
    assert_eq!(ready, t0 + secs(1.0));
    take(&mut bucket, ready);
    assert!(bucket.try_take(ready + secs(0.5)).is_err());
    take(&mut bucket, ready + secs(1.0));
}

#[test]
fn bucket_should_never_refill_above_capacity() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(2.0, 5, t0);
    assert_eq!(bucket.tokens(t0 + secs(100.0)), 4.0);
    let mut single = TokenBucket::new(1.0, 1, t0);
    assert_eq!(single.tokens(t0), 1.0, "a burst of 1 still allows one request");
}

#[test]
fn a_429_should_pause_until_retry_after_and_probe_again_below_the_rate_retry_after_allows() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(1.0, 5, t0);
    let ticket = take(&mut bucket, t0);
    bucket.on_rate_limited(ticket, Some(secs(3.0)), t0);
    assert_eq!(bucket.paused_until(t0), Some(t0 + secs(3.0)));
    // Needing more than 2s for a token, the server earns under 0.5/s; nothing else is known,
    // so slow start restarts from half of that.
    assert_eq!(bucket.rate(), 0.25);
    assert_eq!(bucket.phase, Phase::SlowStart { from_trusted: false });
    assert_eq!(bucket.try_take(t0 + secs(2.9)).unwrap_err(), t0 + secs(7.0));
    assert_eq!(bucket.tokens(t0 + secs(3.0)), 0.0, "nothing accrues while paused");
    take(&mut bucket, t0 + secs(7.0));
    assert_eq!(bucket.rate_limited_total(), 1);
}

#[test]
fn echoes_of_one_congestion_should_cut_the_rate_once_and_extend_the_pause() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(1.0, 5, t0 - secs(10.0));
    let tickets: Vec<Ticket> = (0..3).map(|_| take(&mut bucket, t0)).collect();
    let answered = t0 + secs(0.1);
    for ticket in tickets {
        bucket.on_rate_limited(ticket, None, answered);
    }
    assert_eq!(bucket.rate(), 0.5);
    // One token interval for the fresh 429, one more per echo: a server charging rejected
    // requests is owed three tokens.
    assert_eq!(bucket.paused_until(answered), Some(answered + secs(6.0)));
    let later = take(&mut bucket, answered + secs(8.0));
    bucket.on_rate_limited(later, None, answered + secs(8.0));
    assert!(
        bucket.rate() < 0.5,
        "a request sent after the cut that still hits 429 cuts again"
    );
}

#[test]
fn a_429_inside_the_opening_burst_should_shrink_the_burst_not_the_rate() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(1.0, 5, t0);
    let tickets: Vec<Ticket> = (0..4).map(|_| take(&mut bucket, t0)).collect();
    bucket.on_rate_limited(tickets[3], Some(secs(1.0)), t0);
    assert_eq!(bucket.server_burst, 3, "three were accepted");
    assert_eq!(bucket.rate(), 1.0);
    assert_eq!(bucket.phase, Phase::SlowStart { from_trusted: false });
    assert_eq!(
        bucket.tokens(t0 + secs(100.0)),
        2.0,
        "capacity is the learned burst minus headroom"
    );
}

#[test]
fn a_burst_answered_out_of_order_should_count_its_refusals_not_read_their_positions() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(1.0, 5, t0);
    let tickets: Vec<Ticket> = (0..4).map(|_| take(&mut bucket, t0)).collect();
    // Four connections: the server saw the first request last, when its 3 tokens were spent.
    bucket.on_rate_limited(tickets[0], Some(secs(1.0)), t0);
    assert_eq!(bucket.server_burst, 3, "three may have been accepted");
    assert_eq!(bucket.rate(), 1.0, "a burst signal, not a rate signal");
    bucket.on_rate_limited(tickets[2], Some(secs(1.0)), t0);
    assert_eq!(bucket.server_burst, 2, "each refusal lowers the bound");
}

#[test]
fn a_burst_refused_whole_should_say_nothing_about_the_burst() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(1.0, 5, t0);
    let tickets: Vec<Ticket> = (0..2).map(|_| take(&mut bucket, t0)).collect();
    // Answered after they were sent: the second 429 is an echo of the first.
    let answered = t0 + secs(0.01);
    bucket.on_rate_limited(tickets[0], Some(secs(1.0)), answered);
    assert_eq!(
        bucket.rate(),
        1.0,
        "the other may have been accepted: a burst signal"
    );
    bucket.on_rate_limited(tickets[1], Some(secs(1.0)), answered);
    assert_eq!(bucket.server_burst, 5);
    assert!(
        bucket.rate() < 1.0,
        "refused whole: the server was empty, a rate signal"
    );
    let mut single = TokenBucket::new(1.0, 5, t0);
    let only = take(&mut single, t0);
    single.on_rate_limited(only, Some(secs(1.0)), t0);
    assert_eq!(single.server_burst, 5);
    assert!(
        single.rate() < 1.0,
        "a lone request refused is a rate signal: cut"
    );
}

#[test]
fn only_saturated_successes_should_move_the_rate_up() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(1.0, 5, t0);
    let tickets: Vec<Ticket> = (0..4).map(|_| take(&mut bucket, t0)).collect();
    bucket.on_rate_limited(tickets[3], Some(secs(1.0)), t0);
    let idle = t0 + secs(60.0);
    bucket.on_success(idle);
    assert_eq!(bucket.rate(), 1.0, "tokens to spare: nobody is waiting");
    take(&mut bucket, idle);
    take(&mut bucket, idle);
    bucket.on_success(idle);
    assert_eq!(bucket.rate(), 1.0 + SLOW_START_GROWTH);
}

#[test]
fn the_rate_should_stay_between_its_floor_and_its_ceiling() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(1.0, 5, t0);
    let mut now = t0;
    for _ in 0..50 {
        now += secs(700.0);
        let ticket = take(&mut bucket, now);
        bucket.on_rate_limited(ticket, Some(MAX_RETRY_AFTER_FOR_TESTS), now);
    }
    assert_eq!(bucket.rate(), MIN_RATE_FRACTION);
    let mut fast = TokenBucket::new(1.0, 5, t0);
    let tickets: Vec<Ticket> = (0..4).map(|_| take(&mut fast, t0)).collect();
    fast.on_rate_limited(tickets[3], Some(secs(1.0)), t0);
    let mut now = t0 + secs(1.0);
    for _ in 0..200 {
        now = match fast.try_take(now) {
            Ok(_) => {
                fast.on_success(now);
                now
            }
            Err(ready) => ready,
        };
    }
    assert_eq!(fast.rate(), MAX_RATE_FACTOR);
}

const MAX_RETRY_AFTER_FOR_TESTS: Duration = Duration::from_secs(600);

/// How a model server counts what it refuses.
#[derive(Clone, Copy, Debug)]
enum Rejections {
    Free,
    Debt,
    CappedDebt(f64),
}

/// A server as FerrVault (or the simulator's other limiters) runs it.
#[derive(Clone, Debug)]
enum ServerModel {
    Bucket {
        rate: f64,
        burst: f64,
        tokens: f64,
        at: Instant,
        rejections: Rejections,
    },
    Window {
        capacity: usize,
        window: Duration,
        admitted: std::collections::VecDeque<Instant>,
    },
}

impl ServerModel {
    fn bucket(rate: f64, burst: u32, rejections: Rejections, now: Instant) -> Self {
        Self::Bucket {
            rate,
            burst: f64::from(burst),
            tokens: f64::from(burst),
            at: now,
            rejections,
        }
    }

    /// `Ok`, or the whole-second `Retry-After` (at least 1s) a real server sends.
    fn admit(&mut self, now: Instant) -> Result<(), Duration> {
        let wait = match self {
            Self::Bucket {
                rate,
                burst,
                tokens,
                at,
                rejections,
            } => {
                *tokens = (*tokens + *rate * (now - *at).as_secs_f64()).min(*burst);
                *at = now;
                if *tokens >= 1.0 {
                    *tokens -= 1.0;
                    return Ok(());
                }
                *tokens = match *rejections {
                    Rejections::Free => *tokens,
                    Rejections::Debt => *tokens - 1.0,
                    Rejections::CappedDebt(max) => (*tokens - 1.0).max(-max).min(*tokens),
                };
                (1.0 - *tokens) / *rate
            }
            Self::Window {
                capacity,
                window,
                admitted,
            } => {
                while admitted.front().is_some_and(|&t| t + *window <= now) {
                    admitted.pop_front();
                }
                if admitted.len() < *capacity {
                    admitted.push_back(now);
                    return Ok(());
                }
                (admitted[admitted.len() - *capacity] + *window - now).as_secs_f64()
            }
        };
        Err(secs(wait.ceil().max(1.0)))
    }
}

/// What a run of `n` saturated requests cost.
#[derive(Debug)]
struct Run {
    rejected: usize,
    seconds: f64,
    bucket: TokenBucket,
}

impl Run {
    fn rejected_share(&self, n: usize) -> f64 {
        self.rejected as f64 / (n + self.rejected) as f64
    }
}

/// Drives `n` back-to-back requests through a bucket configured at 1/s burst 5.
fn run_against(mut server: ServerModel, n: usize, t0: Instant) -> Run {
    let mut bucket = TokenBucket::new(1.0, 5, t0);
    let (mut now, mut done, mut rejected) = (t0, 0, 0);
    while done < n {
        if exchange(&mut bucket, &mut server, &mut now) {
            rejected += 1;
        } else {
            done += 1;
        }
    }
    Run {
        rejected,
        seconds: (now - t0).as_secs_f64(),
        bucket,
    }
}

/// One request sent as soon as the bucket allows, its answer reported; whether it was refused.
fn exchange(bucket: &mut TokenBucket, server: &mut ServerModel, now: &mut Instant) -> bool {
    let ticket = take_when_ready(bucket, now);
    match server.admit(*now) {
        Ok(()) => {
            bucket.on_success(*now);
            false
        }
        Err(retry_after) => {
            bucket.on_rate_limited(ticket, Some(retry_after), *now);
            true
        }
    }
}

#[test]
fn a_server_as_configured_should_see_no_429_and_no_probe_for_a_thousand_requests() {
    let t0 = Instant::now();
    for rejections in [Rejections::Free, Rejections::Debt] {
        let run = run_against(ServerModel::bucket(1.0, 5, rejections, t0), 1000, t0);
        assert_eq!(run.rejected, 0, "{rejections:?}");
        assert!(run.seconds <= 996.0 + 1e-6, "took {}s", run.seconds);
        assert_eq!(run.bucket.rate(), 1.0);
    }
}

#[test]
fn a_trusted_bucket_should_probe_once_per_2000_saturated_successes_and_come_back() {
    let t0 = Instant::now();
    let server = ServerModel::bucket(1.0, 5, Rejections::Debt, t0);
    let run = run_against(server, 4100, t0);
    assert_eq!(run.rejected, 2, "one probe per 2000 saturated successes");
    assert_eq!(run.bucket.rate(), 1.0);
    assert!(matches!(run.bucket.phase, Phase::Trusted { .. }));
}

#[test]
fn a_trusted_bucket_should_find_a_faster_server_that_never_contradicted_it() {
    let t0 = Instant::now();
    let run = run_against(ServerModel::bucket(2.0, 5, Rejections::Free, t0), 2400, t0);
    assert!(run.rejected <= 2, "{} 429s", run.rejected);
    let rate = run.bucket.rate();
    assert!((1.7..=2.1).contains(&rate), "settled at {rate}/s");
}

/// Issue 13's misconfigured rows at real speed: a server at `factor` × the configured rate with
/// a burst of 3, N = 100. The benchmark runs them through the real client and simulator.
#[test]
fn limiter_should_find_the_budget_of_a_misconfigured_server_within_issue_13s_target() {
    let t0 = Instant::now();
    let n = 100;
    for factor in [0.25, 0.5, 2.0, 4.0] {
        for rejections in [Rejections::Free, Rejections::Debt] {
            let run = run_against(ServerModel::bucket(factor, 3, rejections, t0), n, t0);
            let ideal = (n - 3) as f64 / factor;
            let label = format!("{factor}x {rejections:?}: {run:?}");
            assert!(run.seconds <= 1.15 * ideal + 5.0, "{label}");
            assert!(run.rejected_share(n) <= 0.02, "{label}");
        }
    }
}

#[test]
fn limiter_should_not_livelock_on_a_capped_debt_or_a_sliding_window_server() {
    let t0 = Instant::now();
    let n = 100;
    let capped = ServerModel::bucket(1.0, 3, Rejections::CappedDebt(5.0), t0);
    let window = ServerModel::Window {
        capacity: 60,
        window: secs(60.0),
        admitted: Default::default(),
    };
    let capped = run_against(capped, n, t0);
    assert!(capped.seconds <= 1.15 * 97.0 + 5.0, "{capped:?}");
    assert!(capped.rejected_share(n) <= 0.02, "{capped:?}");
    let window = run_against(window, n, t0);
    assert!(window.seconds <= 2.0 * 60.0, "{window:?}");
    assert!(window.rejected_share(n) <= 0.02, "{window:?}");
}

#[test]
fn a_squeezed_credential_should_recover_its_known_good_rate_within_a_hundred_successes() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(1.0, 5, t0);
    let mut now = t0;
    saturated_successes(&mut bucket, &mut now, 100);
    // Another user of the token drains it: one 429, Retry-After 5s.
    let ticket = take_when_ready(&mut bucket, &mut now);
    bucket.on_rate_limited(ticket, Some(secs(5.0)), now);
    let squeezed = bucket.rate();
    assert!(squeezed <= 0.5, "cut to {squeezed}");
    saturated_successes(&mut bucket, &mut now, 100);
    assert!(bucket.rate() >= 1.0, "back at the rate it held before");
    // The same again: the known-good rate is now doubtful, and a third 429 forgets it.
    for _ in 0..2 {
        let ticket = take_when_ready(&mut bucket, &mut now);
        bucket.on_rate_limited(ticket, Some(secs(5.0)), now);
        saturated_successes(&mut bucket, &mut now, 10);
    }
    assert!(bucket.known_good.is_none());
    assert!(
        bucket.rate() < 0.6,
        "no fast recovery once forgotten: {}",
        bucket.rate()
    );
}

fn take_when_ready(bucket: &mut TokenBucket, now: &mut Instant) -> Ticket {
    loop {
        match bucket.try_take(*now) {
            Ok(ticket) => return ticket,
            Err(ready) => *now = ready,
        }
    }
}

/// `count` requests taken as soon as possible and answered 200 at once.
fn saturated_successes(bucket: &mut TokenBucket, now: &mut Instant, count: usize) {
    for _ in 0..count {
        take_when_ready(bucket, now);
        bucket.on_success(*now);
    }
}

/// The 0.5× row without debt: the probe after the opening burst's 429 starts at twice the
/// server's rate and is refused after one answer, which alone brackets the rate loosely.
#[test]
fn retry_after_should_bound_the_probe_after_a_loose_bracket_below_the_servers_rate() {
    let t0 = Instant::now();
    let mut server = ServerModel::bucket(0.5, 3, Rejections::Free, t0);
    let mut bucket = TokenBucket::new(1.0, 5, t0);
    let mut now = t0;
    let mut refused = 0;
    while refused < 2 {
        refused += usize::from(exchange(&mut bucket, &mut server, &mut now));
    }
    let ceiling = bucket.probe_ceiling.expect("the second 429 proves a bound");
    assert!(
        (0.45..0.5).contains(&ceiling),
        "the Retry-Afters bound the rate below 0.54/s: probe up to {ceiling}"
    );
    let refused_later = (0..100)
        .filter(|_| exchange(&mut bucket, &mut server, &mut now))
        .count();
    assert_eq!(refused_later, 0, "no third 429");
    assert_eq!(bucket.phase, Phase::Steady);
    assert!(bucket.rate() >= 0.45, "settled at {}", bucket.rate());
}

/// Takes every token as soon as it comes and reports each as a success, `requests` times:
/// a saturated credential the server never refuses. Returns the instant after the last one.
fn saturate(bucket: &mut TokenBucket, mut now: Instant, requests: u32) -> Instant {
    for _ in 0..requests {
        now = match bucket.try_take(now) {
            Ok(_) => now,
            Err(ready) => {
                take(bucket, ready);
                ready
            }
        };
        bucket.on_success(now);
    }
    now
}

#[test]
fn a_rescaled_bucket_should_never_pace_above_its_share_however_long_it_stays_saturated() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(1.0, 5, t0);
    bucket.rescale(1.0 / 3.0, 1, t0);
    let end = saturate(&mut bucket, t0, 2 * TRUSTED_PROBE_AFTER + 100);
    assert!(bucket.rate() <= 1.0 / 3.0 + 1e-12, "probed to {}", bucket.rate());
    let sent = f64::from(2 * TRUSTED_PROBE_AFTER + 100);
    let elapsed = (end - t0).as_secs_f64();
    // The one token held at the start, then one every 3 s.
    assert!(
        sent <= 1.0 + elapsed / 3.0 + 1e-6,
        "{sent} requests in {elapsed} s"
    );
    // Without the share, the same server lets the whole bucket probe above its configuration.
    let mut whole = TokenBucket::new(1.0 / 3.0, 1, t0);
    saturate(&mut whole, t0, 2 * TRUSTED_PROBE_AFTER + 100);
    assert!(whole.rate() > 1.0 / 3.0, "an unshared bucket probes");
}

#[test]
fn a_rescale_should_keep_the_tokens_held_and_grant_no_fresh_burst() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(1.0, 5, t0);
    take(&mut bucket, t0);
    take(&mut bucket, t0);
    assert_eq!(bucket.tokens(t0), 2.0);
    // More shards held: a larger share, but the tokens are those held, not a new burst.
    bucket.rescale(2.0, 6, t0);
    assert_eq!(bucket.tokens(t0), 2.0);
    assert_eq!((bucket.configured_rate(), bucket.burst()), (2.0, 6));
    // Fewer: the tokens shrink to the new capacity.
    bucket.rescale(0.5, 1, t0);
    assert_eq!(bucket.tokens(t0), 1.0);
    assert_eq!(bucket.rate(), 0.5);
    take(&mut bucket, t0);
    assert_eq!(
        bucket.try_take(t0).unwrap_err(),
        t0 + secs(2.0),
        "one token every 2 s"
    );
}
