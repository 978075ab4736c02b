//! `process_*`: client_golang's process collector (`prometheus/process_collector_procfsenabled.go`),
//! read from `/proc/self` at every scrape with the same names, help and units.
//!
//! # Guarantees
//! - A figure that cannot be read is left out of that scrape (client_golang's default,
//!   `ReportErrors: false`): process metrics never fail `/metrics`.
//! - On a platform without `/proc` nothing is written.

use procfs::{WithCurrentSystemInfo, process::LimitValue, process::Process};
use prometheus_client::{
    collector::Collector,
    encoding::{DescriptorEncoder, EncodeMetric},
    metrics::{MetricType, counter::ConstCounter, gauge::ConstGauge},
    registry::Registry,
};

/// Registers the collector in `registry`.
pub(crate) fn register(registry: &mut Registry) {
    registry.register_collector(Box::new(ProcessCollector));
}

/// Reads `/proc/self` on every scrape.
#[derive(Debug)]
pub(crate) struct ProcessCollector;

/// What one scrape found; `None` where `/proc` did not answer.
#[derive(Debug, Default, PartialEq)]
struct Figures {
    cpu_seconds: Option<f64>,
    open_fds: Option<f64>,
    max_fds: Option<f64>,
    virtual_memory: Option<f64>,
    virtual_memory_max: Option<f64>,
    resident_memory: Option<f64>,
    start_time: Option<f64>,
    network: Option<(f64, f64)>,
}

impl Figures {
    fn read() -> Self {
        let Ok(process) = Process::myself() else {
            return Self::default();
        };
        let mut figures = Self::default();
        if let Ok(stat) = process.stat() {
            let ticks = procfs::ticks_per_second() as f64;
            figures.cpu_seconds = Some((stat.utime + stat.stime) as f64 / ticks);
            figures.virtual_memory = Some(stat.vsize as f64);
            figures.resident_memory = Some(stat.rss_bytes().get() as f64);
            figures.start_time = procfs::boot_time_secs()
                .ok()
                .map(|boot| boot as f64 + stat.starttime as f64 / ticks);
        }
        figures.open_fds = process.fd_count().ok().map(|n| n as f64);
        if let Ok(limits) = process.limits() {
            figures.max_fds = Some(limit(limits.max_open_files.soft_limit));
            figures.virtual_memory_max = Some(limit(limits.max_address_space.soft_limit));
        }
        figures.network = std::fs::read_to_string("/proc/self/net/netstat")
            .ok()
            .and_then(|text| ip_octets(&text));
        figures
    }
}

/// A soft limit as procfs (Go) reads it: "unlimited" is the largest `uint64`.
fn limit(value: LimitValue) -> f64 {
    match value {
        LimitValue::Unlimited => u64::MAX as f64,
        LimitValue::Value(n) => n as f64,
    }
}

/// `IpExt` `InOctets` and `OutOctets` of `/proc/<pid>/net/netstat` (a header line of names
/// followed by a line of values).
fn ip_octets(netstat: &str) -> Option<(f64, f64)> {
    let mut lines = netstat.lines().filter(|line| line.starts_with("IpExt:"));
    let names: Vec<&str> = lines.next()?.split_whitespace().collect();
    let values: Vec<&str> = lines.next()?.split_whitespace().collect();
    let find = |name: &str| {
        let index = names.iter().position(|n| *n == name)?;
        values.get(index)?.parse::<f64>().ok()
    };
    Some((find("InOctets")?, find("OutOctets")?))
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let figures = Figures::read();
        let counters = [
            (
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds.",
                figures.cpu_seconds,
            ),
            (
                "process_network_receive_bytes",
                "Number of bytes received by the process over the network.",
                figures.network.map(|(received, _)| received),
            ),
            (
                "process_network_transmit_bytes",
                "Number of bytes sent by the process over the network.",
                figures.network.map(|(_, sent)| sent),
            ),
        ];
        for (name, help, value) in counters {
            if let Some(value) = value {
                let metric = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
                ConstCounter::new(value).encode(metric)?;
            }
        }
        let gauges = [
            (
                "process_open_fds",
                "Number of open file descriptors.",
                figures.open_fds,
            ),
            (
                "process_max_fds",
                "Maximum number of open file descriptors.",
                figures.max_fds,
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
                figures.virtual_memory,
            ),
            (
                "process_virtual_memory_max_bytes",
                "Maximum amount of virtual memory available in bytes.",
                figures.virtual_memory_max,
            ),
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                figures.resident_memory,
            ),
            (
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                figures.start_time,
            ),
        ];
        for (name, help, value) in gauges {
            if let Some(value) = value {
                let metric = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
                ConstGauge::new(value).encode(metric)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_octets_should_come_from_the_ipext_value_line() {
        let netstat =
            "TcpExt: SyncookiesSent\nTcpExt: 0\nIpExt: InNoRoutes InOctets OutOctets\nIpExt: 1 2048 4096\n";
        assert_eq!(ip_octets(netstat), Some((2048.0, 4096.0)));
        assert_eq!(ip_octets("IpExt: InOctets\n"), None, "no value line");
    }

    #[test]
    fn a_scrape_should_show_this_process_as_client_golang_does() {
        let mut registry = Registry::default();
        register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encodes");
        let value = |name: &str| {
            text.lines()
                .find(|line| line.starts_with(&format!("{name} ")))
                .and_then(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
                .unwrap_or_else(|| panic!("{name} missing:\n{text}"))
        };
        assert!(value("process_resident_memory_bytes") > 1e6, "{text}");
        assert!(value("process_open_fds") >= 3.0, "stdin, stdout, stderr at least");
        assert!(value("process_max_fds") >= value("process_open_fds"));
        assert!(value("process_virtual_memory_bytes") >= value("process_resident_memory_bytes"));
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_secs_f64();
        let started = value("process_start_time_seconds");
        assert!(
            started <= now + 1.0 && started > now - 86_400.0,
            "{started} vs {now}"
        );
        assert!(value("process_cpu_seconds_total") >= 0.0);
        assert!(
            text.contains("# HELP process_cpu_seconds Total user and system CPU time spent in seconds."),
            "{text}"
        );
    }
}
