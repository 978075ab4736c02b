//! The fairness rules at the level of the whole queue, with time: the measured incident (one
//! namespace's reveals hang, another namespace's objects must still sync) and how abandoned
//! runs give their worker back.

use std::{collections::BTreeMap, time::Duration};

use super::*;

const MS: fn(u64) -> Duration = Duration::from_millis;
const WORKERS: usize = 4;
/// The default share of a pool of 4.
const SHARE: usize = WORKERS - 1;

fn key(namespace: &str, i: usize) -> ObjectKey {
    ObjectKey::namespaced("ferrvaultsecret", namespace, format!("s{i:03}"))
}

fn error() -> Finish {
    Finish::Reconciled(Outcome::Error {
        reason: "Unreachable",
        message: "timed out".into(),
    })
}

#[test]
fn queue_should_sync_another_namespace_within_its_own_work_while_one_namespace_hangs() {
    // Issue 12: tenant A has 60 objects whose reveals hang for 31s (a FerrVault call with its
    // retries), then fail and back off; tenant B creates 5 at t = 20s whose reveals take 200ms.
    let t0 = Instant::now();
    let mut q = QueueState::new(BackoffConfig::default(), SHARE, t0);
    for i in 0..60 {
        q.add(key("a", i), Cause::Event, t0);
    }
    let b_created = t0 + Duration::from_secs(20);
    let mut running: Vec<(Instant, ObjectKey)> = Vec::new();
    let mut b_synced: BTreeMap<ObjectKey, Instant> = BTreeMap::new();
    let mut most_held_by_a = 0;
    let step = MS(10);
    let mut now = t0;
    while now < t0 + Duration::from_secs(40) {
        if now == b_created {
            for i in 0..5 {
                q.add(key("b", i), Cause::Event, now);
            }
        }
        running.retain(|(ends, key)| {
            if *ends > now {
                return true;
            }
            let b = key.namespace.as_deref() == Some("b");
            q.finish(
                key,
                &if b {
                    Finish::Reconciled(Outcome::done())
                } else {
                    error()
                },
                now,
                0.5,
            );
            if b {
                b_synced.insert(key.clone(), now);
            }
            false
        });
        while running.len() < WORKERS {
            let Some(d) = q.pop(now) else { break };
            let takes = if d.key.namespace.as_deref() == Some("b") {
                MS(200)
            } else {
                Duration::from_secs(31)
            };
            running.push((now + takes, d.key));
        }
        let held_by_a = running
            .iter()
            .filter(|(_, k)| k.namespace.as_deref() == Some("a"))
            .count();
        most_held_by_a = most_held_by_a.max(held_by_a);
        now += step;
    }
    assert_eq!(b_synced.len(), 5, "all of B synced");
    for (i, (key, at)) in b_synced.iter().enumerate() {
        // B has the worker A cannot take: its keys run one after the other, so the i-th waits
        // only for B's own work ahead of it (plus the 10ms simulation step).
        let bound = MS(200) * (i as u32 + 1) + step;
        assert!(
            at.saturating_duration_since(b_created) <= bound,
            "{key} synced {:?} after B created it (bound {bound:?})",
            at.saturating_duration_since(b_created)
        );
    }
    assert_eq!(most_held_by_a, SHARE, "A never holds more than its share");
}

#[test]
fn queue_should_give_an_abandoned_runs_worker_back_to_its_namespace() {
    let t0 = Instant::now();
    let mut q = QueueState::new(BackoffConfig::default(), 1, t0);
    q.add(key("a", 0), Cause::Event, t0);
    q.add(key("a", 1), Cause::Event, t0);
    let stuck = q.pop(t0).expect("a key");
    assert_eq!(q.pop(t0), None, "A holds its share of 1");
    assert_eq!(q.held_by_share(), 1);
    q.abandon(&stuck.key);
    let next = q.pop(t0).expect("the replaced worker serves A again");
    assert_eq!(next.key, key("a", 1));
    q.add(stuck.key.clone(), Cause::Event, t0);
    assert_eq!(
        q.keys(t0)[0].state,
        "processing+dirty",
        "an abandoned run still holds its key: never two runs of one key"
    );
    q.finish(&stuck.key, &Finish::Aborted(AbortCause::Killed), t0, 0.5);
    q.finish(&next.key, &Finish::Reconciled(Outcome::done()), t0, 0.5);
    assert_eq!(
        q.namespaces_holding(),
        Vec::new(),
        "nothing held once both runs ended"
    );
}

#[test]
fn queue_should_publish_which_namespaces_hold_workers_and_what_waits_on_their_share() {
    let t0 = Instant::now();
    let mut q = QueueState::new(BackoffConfig::default(), 2, t0);
    for i in 0..4 {
        q.add(key("a", i), Cause::Event, t0);
    }
    q.add(key("b", 0), Cause::Event, t0);
    let taken: Vec<_> = std::iter::from_fn(|| q.pop(t0).map(|d| d.key)).collect();
    assert_eq!(taken, [key("a", 0), key("b", 0), key("a", 1)]);
    assert_eq!((q.share(), q.held_by_share(), q.namespaces_waiting()), (2, 2, 1));
    assert_eq!(
        q.namespaces_holding(),
        [
            NamespaceShare {
                namespace: "a".into(),
                in_flight: 2,
                ready: 2,
                at_share: true,
            },
            NamespaceShare {
                namespace: "b".into(),
                in_flight: 1,
                ready: 0,
                at_share: false,
            },
        ]
    );
}

#[test]
fn queue_should_keep_each_namespace_its_turn_on_a_shared_cluster_connection() {
    // Issue 37: the FerrVaultSecrets of many namespaces use one ClusterFerrVaultConnection, and
    // cluster secrets (cluster-scoped keys) fan out beside them. Each FerrVaultSecret's key keeps
    // its own namespace, and every cluster-scoped key shares one bucket: a backlog of one
    // namespace, or of the cluster kinds, holds at most its share while another namespace's key
    // takes the next free worker.
    let t0 = Instant::now();
    let mut q = QueueState::new(BackoffConfig::default(), SHARE, t0);
    for i in 0..40 {
        q.add(
            ObjectKey {
                controller: "clusterferrvaultsecret",
                namespace: None,
                name: format!("c{i:03}"),
            },
            Cause::Event,
            t0,
        );
        q.add(key("team-a", i), Cause::Event, t0);
    }
    q.add(key("team-b", 0), Cause::Event, t0);
    let taken: Vec<ObjectKey> = std::iter::from_fn(|| q.pop(t0).map(|d| d.key))
        .take(WORKERS)
        .collect();
    assert!(taken.contains(&key("team-b", 0)), "{taken:?}");
    for bucket in [None, Some("team-a")] {
        let held = taken.iter().filter(|k| k.namespace.as_deref() == bucket).count();
        assert!(held <= SHARE, "{bucket:?} holds {held}");
    }
}
