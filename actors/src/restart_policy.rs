//! One-for-one restart policy with exponential backoff and an intensity limit (pure).
//!
//! Every supervised restart in the tree (health, leadership, controllers, queues, watchers)
//! is recorded in one shared [`RestartLog`]: more than `max_restarts` within `window`
//! escalates. Worker replacements are not counted here: the work queue bounds those itself
//! (abandoned-run limit), because replacing a stuck worker is normal operation.

use std::{
    collections::{HashMap, VecDeque},
    time::Duration,
};

use ractor::{ActorCell, SupervisionEvent};
use tokio::time::Instant;

/// Restart settings (flags).
#[derive(Clone, Debug)]
pub struct RestartPolicy {
    /// R: restarts tolerated within `window`.
    pub max_restarts: usize,
    /// T.
    pub window: Duration,
    /// First restart delay of a child.
    pub backoff_base: Duration,
    /// Longest restart delay.
    pub backoff_max: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        Self {
            max_restarts: 5,
            window: Duration::from_secs(60),
            backoff_base: Duration::from_millis(100),
            backoff_max: Duration::from_secs(10),
        }
    }
}

/// What to do about a failed child.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RestartDecision {
    /// Restart it after this delay.
    RestartAfter(Duration),
    /// Too many restarts: escalate, with this reason.
    Escalate(String),
}

/// The child a supervision event says exited, and why (`stopped`, the stop reason, or
/// `failed: <error>`); `None` for events that are not an exit.
pub(crate) fn exit_of(event: SupervisionEvent) -> Option<(ActorCell, String)> {
    match event {
        SupervisionEvent::ActorTerminated(cell, _, reason) => {
            Some((cell, reason.unwrap_or_else(|| "stopped".into())))
        }
        SupervisionEvent::ActorFailed(cell, err) => Some((cell, format!("failed: {err}"))),
        _ => None,
    }
}

/// Restart history within the window.
#[derive(Debug, Default)]
pub(crate) struct RestartLog {
    /// Restart times of every child, oldest first, within the window.
    recent: VecDeque<(Instant, String)>,
}

impl RestartLog {
    /// Child `name` failed at `now`: restart (after its backoff) or escalate.
    pub(crate) fn on_failure(&mut self, policy: &RestartPolicy, name: &str, now: Instant) -> RestartDecision {
        while self
            .recent
            .front()
            .is_some_and(|(at, _)| now.saturating_duration_since(*at) > policy.window)
        {
            self.recent.pop_front();
        }
        self.recent.push_back((now, name.to_owned()));
        if self.recent.len() > policy.max_restarts {
            let mut by_child: HashMap<&str, usize> = HashMap::new();
            for (_, child) in &self.recent {
                *by_child.entry(child.as_str()).or_default() += 1;
            }
            let mut counts: Vec<String> = by_child.into_iter().map(|(c, n)| format!("{c}×{n}")).collect();
            counts.sort();
            return RestartDecision::Escalate(format!(
                "{} restarts within {:.0}s (limit {}): {}",
                self.recent.len(),
                policy.window.as_secs_f64(),
                policy.max_restarts,
                counts.join(", ")
            ));
        }
        let mine = self.recent.iter().filter(|(_, c)| c == name).count() as u32;
        let delay = policy
            .backoff_base
            .saturating_mul(1 << (mine - 1).min(20))
            .min(policy.backoff_max);
        RestartDecision::RestartAfter(delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn restart_log_should_back_off_each_child_exponentially() {
        let policy = RestartPolicy::default();
        let mut log = RestartLog::default();
        let t0 = Instant::now();
        assert_eq!(
            log.on_failure(&policy, "health", t0),
            RestartDecision::RestartAfter(MS(100))
        );
        assert_eq!(
            log.on_failure(&policy, "health", t0),
            RestartDecision::RestartAfter(MS(200))
        );
        assert_eq!(
            log.on_failure(&policy, "watcher", t0),
            RestartDecision::RestartAfter(MS(100))
        );
        assert_eq!(
            log.on_failure(&policy, "health", t0),
            RestartDecision::RestartAfter(MS(400))
        );
    }

    #[test]
    fn restart_log_should_escalate_past_r_restarts_within_t() {
        let policy = RestartPolicy {
            max_restarts: 3,
            window: Duration::from_secs(10),
            ..RestartPolicy::default()
        };
        let mut log = RestartLog::default();
        let t0 = Instant::now();
        for i in 0..3 {
            assert!(matches!(
                log.on_failure(&policy, "a", t0 + MS(i)),
                RestartDecision::RestartAfter(_)
            ));
        }
        let RestartDecision::Escalate(why) = log.on_failure(&policy, "b", t0 + MS(5)) else {
            panic!("a fourth restart within the window must escalate");
        };
        assert_eq!(why, "4 restarts within 10s (limit 3): a×3, b×1");
    }

    #[test]
    fn restart_log_should_forget_restarts_older_than_the_window() {
        let policy = RestartPolicy {
            max_restarts: 2,
            window: Duration::from_secs(10),
            ..RestartPolicy::default()
        };
        let mut log = RestartLog::default();
        let t0 = Instant::now();
        for i in 0..10 {
            let at = t0 + Duration::from_secs(6 * i);
            assert!(
                matches!(log.on_failure(&policy, "a", at), RestartDecision::RestartAfter(_)),
                "restart {i}"
            );
        }
    }
}
