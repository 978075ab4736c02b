//! Prometheus metrics of the FerrVault client, read from the limiter snapshots at scrape time.
//!
//! Every series is labelled by `credential` (the fingerprint, never the token); request
//! counts add a bounded `result` label ([`RequestResult::as_str`]).
//!
//! | name | type | meaning |
//! |---|---|---|
//! | `ferrvault_client_limiter_tokens` | gauge | tokens available now |
//! | `ferrvault_client_limiter_rate` | gauge | current adapted rate, requests/s |
//! | `ferrvault_client_limiter_configured_rate` | gauge | configured rate, requests/s |
//! | `ferrvault_client_limiter_paused_seconds` | gauge | time left in a `Retry-After` pause |
//! | `ferrvault_client_limiter_waiters` | gauge | callers waiting for a token |
//! | `ferrvault_client_rate_limited_total` | counter | 429s received |
//! | `ferrvault_client_requests_total` | counter | HTTP attempts, by `result` |
//! | `ferrvault_client_pooled_http_clients` | gauge | HTTP clients pooled (one per endpoint in use), unlabelled |

use prometheus_client::{
    collector::Collector,
    encoding::{DescriptorEncoder, EncodeMetric},
    metrics::{MetricType, counter::ConstCounter, gauge::ConstGauge},
    registry::Registry,
};

use super::{FerrVault, LimiterSnapshot, RequestResult};

/// Registers the client's collector.
pub fn register(registry: &mut Registry, client: &FerrVault) {
    registry.register_collector(Box::new(ClientCollector(client.clone())));
}

/// Reads [`FerrVault::limiter_snapshots`] on every scrape.
#[derive(Debug)]
pub struct ClientCollector(pub FerrVault);

type Gauge = fn(&LimiterSnapshot) -> f64;

const GAUGES: [(&str, &str, Gauge); 5] = [
    (
        "ferrvault_client_limiter_tokens",
        "Tokens available now in the credential's outbound bucket.",
        |s| s.tokens,
    ),
    (
        "ferrvault_client_limiter_rate",
        "Current adapted request rate of the credential, per second.",
        |s| s.rate,
    ),
    (
        "ferrvault_client_limiter_configured_rate",
        "Configured request rate of the credential, per second.",
        |s| s.configured_rate,
    ),
    (
        "ferrvault_client_limiter_paused_seconds",
        "Seconds left in the credential's Retry-After pause.",
        |s| s.paused_for.map_or(0.0, |d| d.as_secs_f64()),
    ),
    (
        "ferrvault_client_limiter_waiters",
        "Callers waiting for a token of the credential.",
        |s| s.waiters as f64,
    ),
];

impl Collector for ClientCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let snapshots = self.0.limiter_snapshots();
        for (name, help, read) in GAUGES {
            let mut metric = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
            for snapshot in &snapshots {
                let labels = [("credential", snapshot.credential.as_str())];
                ConstGauge::new(read(snapshot)).encode(metric.encode_family(&labels)?)?;
            }
        }
        let mut limited = encoder.encode_descriptor(
            "ferrvault_client_rate_limited",
            "429 responses received for the credential.",
            None,
            MetricType::Counter,
        )?;
        for snapshot in &snapshots {
            let labels = [("credential", snapshot.credential.as_str())];
            ConstCounter::new(snapshot.rate_limited_total).encode(limited.encode_family(&labels)?)?;
        }
        let mut requests = encoder.encode_descriptor(
            "ferrvault_client_requests",
            "HTTP attempts made with the credential, by result.",
            None,
            MetricType::Counter,
        )?;
        for snapshot in &snapshots {
            for (result, count) in snapshot.requests.iter() {
                let labels = [
                    ("credential", snapshot.credential.as_str()),
                    ("result", RequestResult::as_str(result)),
                ];
                ConstCounter::new(count).encode(requests.encode_family(&labels)?)?;
            }
        }
        let pooled = encoder.encode_descriptor(
            "ferrvault_client_pooled_http_clients",
            "HTTP clients pooled, one per FerrVault endpoint (URL and CA bundle) in use.",
            None,
            MetricType::Gauge,
        )?;
        ConstGauge::new(self.0.pooled_clients() as i64).encode(pooled)?;
        Ok(())
    }
}
