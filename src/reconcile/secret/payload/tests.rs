use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use tokio::time::Instant;

use super::*;
use crate::{
    api::{ConnectionRef, FerrVaultSecretSpec, Transform, TransformType, bounds::MAX_TRANSFORMS},
    ferrvault::{MissingKeys, SecretValue},
};

/// How often the ticker on the runtime thread wakes.
const TICK: Duration = Duration::from_millis(10);

/// A FerrVaultSecret whose transforms are the costliest pipeline the bounds allow:
/// [`MAX_TRANSFORMS`] `base64Decode` steps of every key.
fn costliest_cr() -> FerrVaultSecret {
    FerrVaultSecret::new(
        "heavy",
        FerrVaultSecretSpec {
            connection_ref: ConnectionRef::namespaced("conn"),
            project: None,
            vault: "v".into(),
            selector: None,
            target: None,
            refresh_interval: "1h".into(),
            rollout_restart: vec![],
            transforms: vec![Transform::of_type(TransformType::Base64Decode); MAX_TRANSFORMS],
            suspend: None,
            refresh_policy: None,
        },
    )
}

/// As many keys as a Secret holds (160,000, about 1 MiB), each with an empty value.
fn most_keys() -> Revealed {
    Revealed {
        secrets: (0..160_000)
            .map(|i| (format!("k{i:05}"), SecretValue::test("")))
            .collect(),
        versions: Default::default(),
        missing: MissingKeys::default(),
    }
}

/// A task on the runtime that wakes every [`TICK`] and records its ticks and the longest time a
/// tick took (how long the runtime's thread could not run it).
fn ticker() -> (Arc<AtomicU64>, Arc<AtomicU64>) {
    let (ticks, longest_ms) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (count, longest) = (ticks.clone(), longest_ms.clone());
    tokio::spawn(async move {
        loop {
            let before = Instant::now();
            tokio::time::sleep(TICK).await;
            let took = u64::try_from(before.elapsed().as_millis()).unwrap_or(u64::MAX);
            longest.fetch_max(took, Ordering::SeqCst);
            count.fetch_add(1, Ordering::SeqCst);
        }
    });
    (ticks, longest_ms)
}

/// Waits (bounded) until the ticker has ticked more than `seen` times.
async fn next_tick(ticks: &AtomicU64, seen: u64) {
    tokio::time::timeout(Duration::from_secs(30), async {
        while ticks.load(Ordering::SeqCst) <= seen {
            tokio::time::sleep(TICK).await;
        }
    })
    .await
    .expect("the ticker ticks again");
}

#[tokio::test(flavor = "current_thread")]
async fn the_payload_should_be_computed_without_blocking_the_runtime_thread() {
    // One runtime thread: were the payload computed on it, nothing else could run meanwhile.
    let (ticks, longest_ms) = ticker();
    next_tick(&ticks, 0).await;
    let Ok(payload) = payload(&costliest_cr(), most_keys(), "heavy").await else {
        panic!("the costliest pipeline within the bounds succeeds");
    };
    assert_eq!(payload.data.len(), 160_000);
    next_tick(&ticks, ticks.load(Ordering::SeqCst)).await;
    let longest = longest_ms.load(Ordering::SeqCst);
    assert!(
        longest < 1000,
        "the runtime thread was blocked for {longest} ms while the payload was computed"
    );
}
