//! The per-credential outbound token bucket, which finds the server's real budget. Pure: every
//! method takes the current instant, nothing sleeps and nothing is shared. The crate-private
//! `pacer` module wraps it for concurrent callers.
//!
//! # Model
//! - Tokens refill at `rate` per second up to `capacity`; a request spends one token.
//! - `capacity` is the server's burst minus [`HEADROOM_TOKENS`]: we never spend the server's
//!   last token, so the few hundred microseconds between "token taken here" and "request
//!   counted there" cannot turn into a 429 when both buckets run dry together.
//! - The configured rate and burst are only the first estimate of the server's. A 429 empties
//!   the bucket and pauses it until the server's `Retry-After` (one token interval without one).
//! - A success is *saturated* when callers are waiting on the bucket (less than one token left,
//!   not paused). Only saturated successes move the rate up: an idle credential never probes.
//!
//! # Phases
//! - **Trusted** (the start): the server has not contradicted the configuration, so the bucket
//!   paces at the configured rate and never above. A server is indistinguishable from the
//!   configured one until a request beyond the configured budget, which such a server refuses:
//!   probing would cost every correctly configured client 429s. After [`TRUSTED_PROBE_AFTER`]
//!   saturated successes the bucket probes once (slow start); if the server refuses at or below
//!   the configured rate, it returns here.
//! - **Slow start**: each saturated success multiplies the rate by 1 + [`SLOW_START_GROWTH`]
//!   until the server says no, or until the *probe ceiling* a cut set: [`MAX_KEPT_FRACTION`] ×
//!   the rate its evidence proved the server below. There it turns steady: a probe past a
//!   proven bound would only buy the next 429.
//! - **Steady**: after a cut, each saturated success raises the rate by [`STEADY_GROWTH`] of
//!   itself, so a server that speeds up is found, slowly.
//!
//! A rate the bucket held through [`KNOWN_GOOD_AFTER`] saturated successes without a 429 is
//! *known good*. Below it any success (saturated or not: returning to a proven rate is not a
//! probe) raises the rate by [`RECOVERY_STEP`] of it, so a credential squeezed for a while by
//! another user of the same token is back at full speed within a hundred requests. A 429 at or
//! below the known-good rate makes it doubtful; a second one forgets it: a server that has
//! become slower for good costs one 429 more, not a 429 per recovery.
//!
//! # What a 429 says
//! - Sent inside a burst (the bucket was full, less than one token refilled since): the server
//!   accepted at most the burst's requests not refused yet, so its burst is that many and
//!   `capacity` shrinks. Counted, not read off positions: the burst goes out on several
//!   connections at once and reaches the server in any order. A burst refused whole says
//!   nothing about the burst (the server was empty). The rate is untouched (a burst says
//!   nothing about it) except by the `Retry-After` hint below, and a trusted bucket starts slow
//!   start: a server that is not the configured one in one respect may not be in the other.
//! - Otherwise a fresh 429 cuts the rate: to the rate the requests since the last 429 prove the
//!   server sustained (`evidence.rs`), or where that proves little to [`DECREASE_FACTOR`] × the
//!   rate sent at, lowered by two hints: the tokens the server can have earned since the last
//!   429, and `Retry-After` (a server that needs more than `RA − 1` s for one token earns less
//!   than `1 / (RA − 1)` per second; FerrVault rounds it up to whole seconds). Never above
//!   [`MAX_KEPT_FRACTION`] × the rate sent at: a fresh 429 always slows the bucket down.
//!   Where the evidence proves an upper bound, slow start climbs from there to the probe
//!   ceiling below it (a bracket too narrow for that settles at its bottom).
//! - A 429 for a request sent before the last cut is an echo of the same congestion: no new
//!   cut, but the pause is extended (without `Retry-After` by one token interval, since a
//!   server charging rejected requests charged it one token more: the pause outlasts the debt).
//!
//! # Invariants
//! - `0 <= tokens <= capacity`; `min_rate <= rate <= max_rate` ([`MIN_RATE_FRACTION`],
//!   [`MAX_RATE_FACTOR`], or the configured rate itself once [`TokenBucket::rescale`]d);
//!   trusted means `rate == configured rate`.
//! - While paused, no token is handed out and none accrues.

mod evidence;
#[cfg(test)]
mod tests;

use std::time::Duration;

use tokio::time::Instant;

use self::evidence::Evidence;

/// Server tokens we leave unspent as a safety margin against send-time jitter.
pub const HEADROOM_TOKENS: u32 = 1;
/// Where the evidence brackets the server's rate loosely, slow start restarts from this fraction
/// of the bracket's top: the middle of a bracket whose bottom is near zero.
pub const DECREASE_FACTOR: f64 = 0.5;
/// A bracket whose top is at most this multiple of its bottom is tight enough to restart at the
/// bottom (at most a third below the server's rate, never above it) and climb only to the probe
/// ceiling; a looser one restarts from [`DECREASE_FACTOR`] × its top when that is higher.
pub const NARROW_BRACKET: f64 = 1.5;
/// The most of the rate sent at that a fresh 429 leaves (every fresh 429 slows down), and of a
/// proven upper bound that slow start climbs to.
pub const MAX_KEPT_FRACTION: f64 = 0.9;
/// Slow start's growth per saturated success. Per success rather than per second, the probe is
/// clocked by the server's answers at any rate; 15% doubles the rate every 5 successes, and the
/// server's reserve of 2 tokens (a burst of 3) then drains over about 5 answers, enough for the
/// evidence to bound the rate within about 10%.
pub const SLOW_START_GROWTH: f64 = 0.15;
/// Steady growth per saturated success (+2% per 100). From the server's exact rate the
/// overshoot empties the one token a server leaves after a pause in about
/// `sqrt(2 / STEADY_GROWTH)` = 100 successes: about 1% of requests answered 429 while a
/// credential stays saturated, under the 2% target.
pub const STEADY_GROWTH: f64 = 1.0 / 5000.0;
/// Saturated successes at the configured rate before a trusted bucket probes above it: one 429
/// and one pause per 2000 requests (0.05%) on a correctly configured credential, a third of an
/// hour at FerrVault's 60/min, longer than a 1,000-object backlog.
pub const TRUSTED_PROBE_AFTER: u32 = 2000;
/// Saturated successes without a 429 that make the rate they started at known good: a rate 4%
/// above the server's drains a 2-token reserve only after 50 answers, so it is close enough.
pub const KNOWN_GOOD_AFTER: u32 = 50;
/// Growth per success below the known-good rate, as a fraction of it.
pub const RECOVERY_STEP: f64 = 1.0 / 100.0;
/// Floor of the rate, as a fraction of the configured rate (1/s → 1/min): never starve.
pub const MIN_RATE_FRACTION: f64 = 1.0 / 60.0;
/// Ceiling of the rate, as a multiple of the configured rate: a probe that meets no limit stops.
pub const MAX_RATE_FACTOR: f64 = 60.0;
/// Tolerance for floating-point refill arithmetic.
const EPSILON: f64 = 1e-9;

/// A taken token: what the bucket needs to learn from its request's answer.
#[derive(Clone, Copy, Debug)]
pub struct Ticket {
    issued_at: Instant,
    /// Position among the requests issued since the last fresh 429.
    position: u32,
    /// The start of the burst it was taken in, if any.
    in_burst: Option<Instant>,
}

/// See the module doc.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Trusted { saturated_successes: u32 },
    SlowStart { from_trusted: bool },
    Steady,
}

/// Requests taken from a full bucket before one more token refilled.
#[derive(Clone, Copy, Debug, PartialEq)]
struct BurstRun {
    started: Instant,
    taken: u32,
    /// The server's burst as known before this run.
    burst_before: u32,
    /// Requests of the run answered 429 so far.
    refused: u32,
    /// The cut its first 429 would have made as a rate signal: made if the run is refused whole.
    cut_if_refused_whole: Option<Cut>,
}

/// What a 429 inside a burst says about the server's burst.
#[derive(Clone, Copy, Debug, PartialEq)]
enum BurstReading {
    /// It is smaller than we knew.
    Smaller,
    /// This 429 completed a run refused whole: the cut its first 429 deferred is due.
    RefusedWhole(Cut),
    Nothing,
}

/// A fresh 429's new rate, phase, slow start's ceiling and known-good rate.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Cut {
    rate: f64,
    phase: Phase,
    probe_ceiling: Option<f64>,
    known_good: Option<KnownGood>,
}

/// A rate the server sustained (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
struct KnownGood {
    rate: f64,
    /// A 429 came at or below it since it was proven.
    doubted: bool,
}

/// Saturated successes since the last fresh 429, counted in stretches of [`KNOWN_GOOD_AFTER`].
#[derive(Clone, Copy, Debug, PartialEq)]
struct Stretch {
    successes: u32,
    /// The rate when the stretch began: the lowest of the stretch, since only successes change it.
    started_at_rate: f64,
}

/// One credential's bucket.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    /// The rate the operator was configured with: the first estimate of the server's.
    configured_rate: f64,
    /// The burst the operator was configured with.
    configured_burst: u32,
    /// The server's burst as far as we know: the configured one until a 429 shows less.
    server_burst: u32,
    /// Tokens we may hold: `server_burst - HEADROOM_TOKENS`, at least 1.
    capacity: f64,
    /// Current rate, tokens per second.
    rate: f64,
    /// Tokens available as of `updated`.
    tokens: f64,
    /// Last instant the refill was computed for.
    updated: Instant,
    /// While set and in the future, nothing is handed out and nothing accrues.
    paused_until: Option<Instant>,
    /// When the rate was last cut; 429s for requests issued before it are echoes.
    last_cut: Option<Instant>,
    phase: Phase,
    /// The most slow start may reach: [`MAX_KEPT_FRACTION`] × the rate the evidence of the last
    /// cut proved the server below. `None`: nothing proved.
    probe_ceiling: Option<f64>,
    known_good: Option<KnownGood>,
    stretch: Stretch,
    /// Requests since the last fresh 429.
    evidence: Evidence,
    /// The latest burst from a full bucket.
    burst_run: Option<BurstRun>,
    /// 429s reported so far.
    rate_limited_total: u64,
    /// The ceiling of the rate as a multiple of the configured one: [`MAX_RATE_FACTOR`], or 1
    /// for a share of a budget other replicas spend too ([`TokenBucket::rescale`]).
    max_rate_factor: f64,
}

impl TokenBucket {
    /// A full, trusted bucket. `rate` must be positive and finite; `burst` at least 1.
    pub fn new(rate_per_second: f64, burst: u32, now: Instant) -> Self {
        assert!(
            rate_per_second.is_finite() && rate_per_second > 0.0,
            "rate must be positive"
        );
        let capacity = capacity_for(burst);
        Self {
            configured_rate: rate_per_second,
            configured_burst: burst,
            server_burst: burst,
            capacity,
            rate: rate_per_second,
            tokens: capacity,
            updated: now,
            paused_until: None,
            last_cut: None,
            phase: Phase::Trusted {
                saturated_successes: 0,
            },
            probe_ceiling: None,
            known_good: None,
            stretch: Stretch::at(rate_per_second),
            evidence: Evidence::default(),
            burst_run: None,
            rate_limited_total: 0,
            max_rate_factor: MAX_RATE_FACTOR,
        }
    }

    /// A share of a budget that other replicas spend too (a shared credential under shards,
    /// `share.rs`), or a new share (the held shards changed): the configured rate and burst
    /// become `rate_per_second` and `burst`, the current rate and what it learned scale with the
    /// configured rate, the tokens held stay (capped at the new capacity: a rescale never grants
    /// a fresh burst). From then on the bucket never paces above the configured rate (a server
    /// that accepts more from this replica only shows the budget the others leave unspent); it
    /// still slows down at a 429 and recovers up to it. `rate_per_second` must be positive and
    /// finite; `burst` at least 1.
    pub fn rescale(&mut self, rate_per_second: f64, burst: u32, now: Instant) {
        assert!(
            rate_per_second.is_finite() && rate_per_second > 0.0,
            "rate must be positive"
        );
        self.advance(now);
        let factor = rate_per_second / self.configured_rate;
        self.max_rate_factor = 1.0;
        self.configured_rate = rate_per_second;
        self.configured_burst = burst;
        self.server_burst = burst;
        self.capacity = capacity_for(burst);
        self.tokens = self.tokens.min(self.capacity);
        self.rate = self.clamped(self.rate * factor);
        self.probe_ceiling = self.probe_ceiling.map(|ceiling| ceiling * factor);
        self.known_good = self.known_good.map(|good| KnownGood {
            rate: good.rate * factor,
            ..good
        });
        self.stretch = Stretch::at(self.rate);
        self.burst_run = None;
    }

    /// Takes a token, or says when the next one will be available (at the current rate).
    pub fn try_take(&mut self, now: Instant) -> Result<Ticket, Instant> {
        self.advance(now);
        if let Some(until) = self.paused_until {
            return Err(until + self.time_to_one_token());
        }
        if self.tokens + EPSILON < 1.0 {
            return Err(now + self.time_to_one_token());
        }
        if self.tokens + EPSILON >= self.capacity {
            self.burst_run = Some(BurstRun {
                started: now,
                taken: 0,
                burst_before: self.server_burst,
                refused: 0,
                cut_if_refused_whole: None,
            });
        }
        let rate = self.rate;
        let in_burst = self
            .burst_run
            .as_mut()
            .filter(|run| (now - run.started).as_secs_f64() * rate < 1.0)
            .map(|run| {
                run.taken += 1;
                run.started
            });
        self.tokens = (self.tokens - 1.0).max(0.0);
        Ok(Ticket {
            issued_at: now,
            position: self.evidence.issue(now),
            in_burst,
        })
    }

    /// A request on this credential succeeded: the rate recovers or, saturated, probes up.
    pub fn on_success(&mut self, now: Instant) {
        self.advance(now);
        let recovering_to = self
            .known_good
            .map(|good| good.rate)
            .filter(|&good| self.rate < good);
        if let Some(good) = recovering_to {
            self.rate = (self.rate + good * RECOVERY_STEP).min(good);
        }
        if self.paused_until.is_some() || self.tokens >= 1.0 {
            return;
        }
        self.count_saturated_success();
        if recovering_to.is_some() {
            return;
        }
        match &mut self.phase {
            Phase::Trusted { saturated_successes } => {
                *saturated_successes += 1;
                if *saturated_successes >= TRUSTED_PROBE_AFTER {
                    self.phase = Phase::SlowStart { from_trusted: true };
                }
            }
            Phase::SlowStart { .. } => {
                let grown = self.rate * (1.0 + SLOW_START_GROWTH);
                match self.probe_ceiling {
                    Some(ceiling) if grown >= ceiling => {
                        self.set_rate(ceiling);
                        self.phase = Phase::Steady;
                    }
                    _ => self.set_rate(grown),
                }
            }
            Phase::Steady => self.set_rate(self.rate * (1.0 + STEADY_GROWTH)),
        }
    }

    /// The server answered 429 to the request of `ticket`.
    pub fn on_rate_limited(&mut self, ticket: Ticket, retry_after: Option<Duration>, now: Instant) {
        self.advance(now);
        self.rate_limited_total += 1;
        let reading = self.learn_burst(ticket);
        let is_fresh = self.last_cut.is_none_or(|cut| ticket.issued_at >= cut);
        if is_fresh {
            let hint = retry_after.and_then(rate_below_retry_after);
            let cut = self.planned_cut(ticket, hint);
            match self
                .burst_run
                .as_mut()
                .filter(|_| reading == BurstReading::Smaller)
            {
                Some(run) => {
                    run.cut_if_refused_whole = Some(cut);
                    self.set_rate(self.rate.min(hint.unwrap_or(f64::INFINITY)));
                    if matches!(self.phase, Phase::Trusted { .. }) {
                        self.phase = Phase::SlowStart { from_trusted: false };
                    }
                    self.probe_ceiling = None;
                }
                None => self.apply(cut),
            }
            self.last_cut = Some(now);
            self.evidence.restart(ticket.issued_at, retry_after);
            self.stretch = Stretch::at(self.rate);
        } else if let BurstReading::RefusedWhole(cut) = reading {
            let withdrawn = self.rate;
            self.apply(cut);
            self.stretch = Stretch::at(self.rate);
            if retry_after.is_none() {
                // The pause so far counted token intervals at the rate now withdrawn.
                self.paused_until = self.paused_until.map(|until| {
                    now + until
                        .saturating_duration_since(now)
                        .mul_f64(withdrawn / self.rate)
                });
            }
        }
        self.tokens = 0.0;
        let until = match retry_after {
            Some(wait) => now + wait,
            None if is_fresh => now + self.time_to_one_token(),
            None => self.paused_until.unwrap_or(now) + self.time_to_one_token(),
        };
        self.paused_until = Some(self.paused_until.map_or(until, |old| old.max(until)));
    }

    /// Tokens available at `now` (refill applied).
    pub fn tokens(&mut self, now: Instant) -> f64 {
        self.advance(now);
        self.tokens
    }

    /// The current rate.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The configured rate.
    pub fn configured_rate(&self) -> f64 {
        self.configured_rate
    }

    /// The configured burst (the server's, as far as the operator was told).
    pub fn burst(&self) -> u32 {
        self.configured_burst
    }

    /// The end of the current pause, if any.
    pub fn paused_until(&mut self, now: Instant) -> Option<Instant> {
        self.advance(now);
        self.paused_until
    }

    /// 429s reported so far.
    pub fn rate_limited_total(&self) -> u64 {
        self.rate_limited_total
    }

    /// A 429 inside the latest burst: the server accepted at most the run's requests not
    /// refused so far, each refusal lowering that bound (see the module doc).
    fn learn_burst(&mut self, ticket: Ticket) -> BurstReading {
        let Some(started) = ticket.in_burst else {
            return BurstReading::Nothing;
        };
        let Some(run) = self.burst_run.as_mut().filter(|run| run.started == started) else {
            return BurstReading::Nothing;
        };
        run.refused += 1;
        let accepted_at_most = run.taken.saturating_sub(run.refused);
        let reading = if accepted_at_most == 0 {
            run.cut_if_refused_whole
                .take()
                .map_or(BurstReading::Nothing, BurstReading::RefusedWhole)
        } else if accepted_at_most < run.burst_before {
            BurstReading::Smaller
        } else {
            BurstReading::Nothing
        };
        self.server_burst = if accepted_at_most >= 1 {
            run.burst_before.min(accepted_at_most)
        } else {
            run.burst_before
        };
        self.capacity = capacity_for(self.server_burst);
        self.tokens = self.tokens.min(self.capacity);
        reading
    }

    /// Proves the rate a stretch of [`KNOWN_GOOD_AFTER`] saturated successes started at.
    fn count_saturated_success(&mut self) {
        self.stretch.successes += 1;
        if self.stretch.successes < KNOWN_GOOD_AFTER {
            return;
        }
        let proven = self.stretch.started_at_rate;
        if self.known_good.is_none_or(|good| proven >= good.rate) {
            self.known_good = Some(KnownGood {
                rate: proven,
                doubted: false,
            });
        }
        self.stretch = Stretch::at(self.rate);
    }

    /// A fresh 429 as a rate signal: the new rate and phase (see the module doc).
    fn planned_cut(&self, ticket: Ticket, retry_after_hint: Option<f64>) -> Cut {
        let sent = self.rate;
        let probing_from_trusted = self.phase == (Phase::SlowStart { from_trusted: true });
        let known_good = self
            .known_good
            .filter(|good| sent > good.rate || !good.doubted)
            .map(|good| KnownGood {
                doubted: good.doubted || sent <= good.rate,
                ..good
            });
        let bracket = self
            .evidence
            .bracket(ticket.position, f64::from(self.server_burst));
        let upper = [bracket.upper, retry_after_hint]
            .into_iter()
            .flatten()
            .fold(sent, f64::min);
        let lower = bracket.lower.min(upper);
        let ceiling = bracket.upper.map(|proven| proven * MAX_KEPT_FRACTION);
        let restart = Phase::SlowStart {
            from_trusted: probing_from_trusted,
        };
        let (rate, phase, probe_ceiling) = if upper <= lower * NARROW_BRACKET {
            match ceiling.filter(|&ceiling| ceiling > lower) {
                Some(ceiling) => (lower, restart, Some(ceiling)),
                None => (lower, Phase::Steady, None),
            }
        } else {
            (lower.max(upper * DECREASE_FACTOR), restart, ceiling)
        };
        let rate = self.clamped(rate.min(sent * MAX_KEPT_FRACTION));
        if probing_from_trusted && rate <= self.configured_rate {
            // The probe found nothing above the configuration, which held until it started.
            let phase = Phase::Trusted {
                saturated_successes: 0,
            };
            return Cut {
                rate: self.configured_rate,
                phase,
                probe_ceiling: None,
                known_good,
            };
        }
        Cut {
            rate,
            phase,
            probe_ceiling,
            known_good,
        }
    }

    fn apply(&mut self, cut: Cut) {
        self.rate = cut.rate;
        self.phase = cut.phase;
        self.probe_ceiling = cut.probe_ceiling;
        self.known_good = cut.known_good;
    }

    fn set_rate(&mut self, rate: f64) {
        self.rate = self.clamped(rate);
    }

    fn clamped(&self, rate: f64) -> f64 {
        let (floor, ceiling) = (
            self.configured_rate * MIN_RATE_FRACTION,
            self.configured_rate * self.max_rate_factor,
        );
        rate.clamp(floor, ceiling)
    }

    fn time_to_one_token(&self) -> Duration {
        let missing = (1.0 - self.tokens).max(0.0);
        // Whole nanoseconds rounded up: a wait rounded down to zero would wake before the token.
        Duration::from_nanos((missing / self.rate * 1e9).ceil() as u64)
    }

    /// Applies refill up to `now`; ends a pause that is over.
    fn advance(&mut self, now: Instant) {
        if let Some(until) = self.paused_until {
            if now < until {
                self.updated = self.updated.max(now);
                return;
            }
            self.paused_until = None;
            self.updated = self.updated.max(until);
        }
        if now > self.updated {
            let gained = self.rate * (now - self.updated).as_secs_f64();
            self.tokens = (self.tokens + gained).min(self.capacity);
            self.updated = now;
        }
    }
}

impl Stretch {
    fn at(rate: f64) -> Self {
        Self {
            successes: 0,
            started_at_rate: rate,
        }
    }
}

/// Tokens a bucket may hold for a server burst of `burst`.
fn capacity_for(burst: u32) -> f64 {
    f64::from(burst.saturating_sub(HEADROOM_TOKENS).max(1))
}

/// The rate a server answering `Retry-After: retry_after` is below (see the module doc), when
/// that says anything: whole seconds rounded up hide everything under two.
fn rate_below_retry_after(retry_after: Duration) -> Option<f64> {
    let seconds = retry_after.as_secs_f64();
    (seconds >= 2.0).then(|| 1.0 / (seconds - 1.0))
}
