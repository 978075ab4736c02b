//! Bounded polling: wait for an observation, never sleep and hope.

use std::{future::Future, time::Duration};

use tokio::time::Instant;

/// Generous bound for one awaited observation: it only turns a hang into a failure.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// How often a probe is asked again.
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// Asks `probe` every 50 ms until it returns `Ok`, failing with `what` and the last observation
/// (`Err` of the last call) after `within`.
///
/// # Panics
/// When `within` passes first.
pub async fn poll_until<T, F, Fut>(what: &str, within: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let deadline = Instant::now() + within;
    loop {
        let last = match probe().await {
            Ok(value) => return value,
            Err(last) => last,
        };
        assert!(
            Instant::now() < deadline,
            "timed out after {within:?} waiting for: {what}\nlast observation: {last}"
        );
        tokio::time::sleep(POLL_INTERVAL).await;
    }
}

/// [`poll_until`] for probes with nothing to say while waiting, bounded by [`DEADLINE`].
///
/// # Panics
/// When [`DEADLINE`] passes first.
pub async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    poll_until(what, DEADLINE, || {
        let observed = probe();
        async move { observed.await.ok_or_else(|| "not yet".to_owned()) }
    })
    .await
}

/// Runs `fut`, failing with `what` if it takes longer than [`DEADLINE`].
///
/// # Panics
/// When it does.
pub async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    within_for(DEADLINE, what, fut).await
}

/// Runs `fut`, failing with `what` if it takes longer than `limit`.
///
/// # Panics
/// When it does.
pub async fn within_for<T>(limit: Duration, what: &str, fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, fut)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish in {limit:?}: likely deadlocked"))
}

/// `prefix-` and 8 random hex digits: a name no other test (or earlier run) uses.
pub fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", &uuid::Uuid::new_v4().simple().to_string()[..8])
}
