//! The `/debug/queue` document: every controller's queue (figures, fairness across
//! namespaces, keys) and every FerrVault credential's limiter, as JSON. Pure: built from
//! values the route collected.

use controller_actors::{KeyInfo, NamespaceShare, QueueStats};
use serde_json::{Value, json};

use crate::{ferrvault::LimiterSnapshot, reconcile::rules::status::messages::redact_userinfo};

/// One controller's queue as collected by the route.
pub struct QueueReport {
    /// The controller's name.
    pub controller: &'static str,
    /// Its published figures.
    pub stats: Option<QueueStats>,
    /// Its keys; `None` when no queue runs (standby) or it did not answer.
    pub keys: Option<Vec<KeyInfo>>,
}

/// The whole document.
pub fn document(queues: &[QueueReport], limiters: &[LimiterSnapshot]) -> Value {
    json!({
        "controllers": queues.iter().map(queue).collect::<Vec<_>>(),
        "limiters": limiters.iter().map(limiter).collect::<Vec<_>>(),
    })
}

fn queue(report: &QueueReport) -> Value {
    let stats = report.stats.as_ref();
    json!({
        "controller": report.controller,
        "active": stats.is_some_and(|s| s.active),
        "depth": stats.map(|s| s.depth),
        "delayed": stats.map(|s| s.delayed),
        "heldUntilListed": stats.map(|s| s.held_for_lists),
        "processing": stats.map(|s| s.processing),
        "namespaceShare": stats.map(|s| s.namespace_share),
        "namespacesWaiting": stats.map(|s| s.namespaces_waiting),
        "heldByNamespaceShare": stats.map(|s| s.held_by_share),
        "namespaces": stats.map(|s| s.namespaces.iter().map(namespace).collect::<Vec<_>>()),
        "keys": report.keys,
    })
}

/// A namespace holding workers: how many, what it has waiting, whether it is at its share.
fn namespace(share: &NamespaceShare) -> Value {
    json!({
        "namespace": share.namespace,
        "inFlight": share.in_flight,
        "ready": share.ready,
        "atShare": share.at_share,
    })
}

fn limiter(snapshot: &LimiterSnapshot) -> Value {
    let requests: serde_json::Map<String, Value> = snapshot
        .requests
        .iter()
        .map(|(result, count)| (result.as_str().to_owned(), json!(count)))
        .collect();
    json!({
        "credential": snapshot.credential.to_string(),
        "baseUrl": redact_userinfo(&snapshot.base_url),
        "tokens": snapshot.tokens,
        "rate": snapshot.rate,
        "configuredRate": snapshot.configured_rate,
        "burst": snapshot.burst,
        "pausedForSeconds": snapshot.paused_for.map(|d| d.as_secs_f64()),
        "waiters": snapshot.waiters,
        "rateLimitedTotal": snapshot.rate_limited_total,
        "requests": requests,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_standby_queue_should_show_inactive_with_no_keys() {
        let doc = document(
            &[QueueReport {
                controller: "ferrvaultsecret",
                stats: Some(QueueStats::inactive()),
                keys: None,
            }],
            &[],
        );
        assert_eq!(doc["controllers"][0]["active"], false);
        assert_eq!(doc["controllers"][0]["keys"], Value::Null);
        assert_eq!(doc["limiters"], json!([]));
    }

    #[test]
    fn an_active_queue_should_show_its_namespace_share_and_who_holds_workers() {
        let stats = QueueStats {
            namespace_share: 3,
            namespaces_waiting: 2,
            held_by_share: 57,
            held_for_lists: 12,
            namespaces: vec![NamespaceShare {
                namespace: "tenant-a".into(),
                in_flight: 3,
                ready: 57,
                at_share: true,
            }],
            ..QueueStats::inactive()
        };
        let doc = document(
            &[QueueReport {
                controller: "ferrvaultsecret",
                stats: Some(stats),
                keys: None,
            }],
            &[],
        );
        let queue = &doc["controllers"][0];
        assert_eq!(
            (
                &queue["namespaceShare"],
                &queue["namespacesWaiting"],
                &queue["heldByNamespaceShare"],
                &queue["heldUntilListed"]
            ),
            (&json!(3), &json!(2), &json!(57), &json!(12))
        );
        assert_eq!(
            queue["namespaces"],
            json!([{"namespace": "tenant-a", "inFlight": 3, "ready": 57, "atShare": true}])
        );
    }

    #[test]
    fn keys_should_carry_state_attempts_and_due_time() {
        let doc = document(
            &[QueueReport {
                controller: "c",
                stats: None,
                keys: Some(vec![KeyInfo {
                    key: "demo/app".into(),
                    state: "delayed",
                    attempts: 2,
                    due_in_secs: Some(4.5),
                }]),
            }],
            &[],
        );
        assert_eq!(
            doc["controllers"][0]["keys"][0],
            json!({"key": "demo/app", "state": "delayed", "attempts": 2, "due_in_secs": 4.5})
        );
    }
}
