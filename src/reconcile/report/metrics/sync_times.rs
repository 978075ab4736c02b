//! `ferrvault_secret_last_sync_timestamp_seconds` and `ferrvault_secret_refresh_interval_seconds`
//! from one map. The two gauges have one series per FerrVaultSecret and the same labels, and
//! they are set and removed together: two prometheus-client families would keep every label set,
//! map entry and gauge twice, about 140 bytes per object (14 MB at 100,000).
//!
//! Like a family, an update of an existing series takes the read lock only, so a scrape encoding
//! 100,000 series holds up only the insert of a new series (and, while that insert waits, the
//! updates queued behind it).

use std::{
    collections::HashMap,
    fmt,
    sync::{
        RwLock, RwLockReadGuard, RwLockWriteGuard,
        atomic::{AtomicU64, Ordering},
    },
};

use prometheus_client::{
    collector::Collector,
    encoding::{DescriptorEncoder, EncodeMetric},
    metrics::{MetricType, gauge::ConstGauge},
};

use super::object_labels::ObjectLabels;

/// One of the two gauges: its name, help and field of [`Times`].
struct Column {
    name: &'static str,
    help: &'static str,
    field: fn(&Times) -> &AtomicU64,
}

const COLUMNS: [Column; 2] = [
    Column {
        name: "ferrvault_secret_last_sync_timestamp_seconds",
        help: "Unix time of the last full sync of a FerrVaultSecret",
        field: |times| &times.last_sync,
    },
    Column {
        name: "ferrvault_secret_refresh_interval_seconds",
        help: "Resolved refresh interval of a FerrVaultSecret, in seconds",
        field: |times| &times.refresh_interval,
    },
];

/// Both gauges of one FerrVaultSecret, as `f64` bits.
#[derive(Debug, Default)]
struct Times {
    last_sync: AtomicU64,
    refresh_interval: AtomicU64,
}

/// The two per-object gauges (see the module doc).
#[derive(Debug, Default)]
pub(super) struct SyncTimes {
    series: RwLock<Series>,
}

type Series = HashMap<ObjectLabels, Times>;

impl SyncTimes {
    /// Sets both gauges of `labels`.
    pub(super) fn set(&self, labels: ObjectLabels, last_sync: f64, refresh_interval: f64) {
        let store = |times: &Times| {
            times.last_sync.store(last_sync.to_bits(), Ordering::Relaxed);
            times
                .refresh_interval
                .store(refresh_interval.to_bits(), Ordering::Relaxed);
        };
        if let Some(times) = self.read().get(&labels) {
            return store(times);
        }
        store(self.write().entry(labels).or_default());
    }

    /// Removes both gauges of `labels`.
    pub(super) fn remove(&self, labels: &ObjectLabels) {
        self.write().remove(labels);
    }

    fn read(&self) -> RwLockReadGuard<'_, Series> {
        // A panic while holding the lock leaves the map whole: every write is one insert or remove.
        self.series
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Series> {
        self.series
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Collector for SyncTimes {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> fmt::Result {
        let series = self.read();
        if series.is_empty() {
            // As a family without series: no HELP or TYPE line either.
            return Ok(());
        }
        for column in &COLUMNS {
            let mut family = encoder.encode_descriptor(column.name, column.help, None, MetricType::Gauge)?;
            for (labels, times) in series.iter() {
                let value = f64::from_bits((column.field)(times).load(Ordering::Relaxed));
                ConstGauge::new(value).encode(family.encode_family(labels)?)?;
            }
        }
        Ok(())
    }
}
