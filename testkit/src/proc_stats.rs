//! Memory and CPU of another process, read from Linux's `/proc/<pid>/status` and
//! `/proc/<pid>/stat`: what `bench scale`, `bench memory` and `bench failover` report for the
//! operator process they launched.
//!
//! The parsers are pure (text in, numbers out) and unit-tested; [`sample`] does the reading.

use serde::{Deserialize, Serialize};

/// Clock ticks per second of `utime`/`stime` (`sysconf(_SC_CLK_TCK)`, 100 on every Linux
/// architecture this runs on).
const CLOCK_TICKS_PER_SECOND: f64 = 100.0;

/// One reading of a process's resource use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcStats {
    /// Peak resident set size so far (`VmHWM`), bytes.
    pub peak_rss_bytes: u64,
    /// Resident set size now (`VmRSS`), bytes.
    pub rss_bytes: u64,
    /// User plus system CPU time so far, seconds.
    pub cpu_seconds: f64,
}

impl ProcStats {
    /// Peak RSS in MiB.
    pub fn peak_rss_mib(&self) -> f64 {
        mib(self.peak_rss_bytes)
    }

    /// Current RSS in MiB.
    pub fn rss_mib(&self) -> f64 {
        mib(self.rss_bytes)
    }
}

/// Bytes to MiB.
pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// A `kB` field of `/proc/<pid>/status` (e.g. `VmHWM`), in bytes.
pub fn status_field_bytes(status: &str, field: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        let kib: u64 = rest.split_whitespace().next()?.parse().ok()?;
        Some(kib * 1024)
    })
}

/// `utime + stime` of `/proc/<pid>/stat`, in seconds. The command name (field 2) may hold
/// spaces and parentheses, so fields are counted from the last `)`.
pub fn stat_cpu_seconds(stat: &str) -> Option<f64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // After the name: state is field 3, so utime (14) and stime (15) are at 11 and 12 here.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) as f64 / CLOCK_TICKS_PER_SECOND)
}

/// Reads `pid`'s stats; `None` once the process is gone (or on a system without `/proc`).
pub fn sample(pid: u32) -> Option<ProcStats> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(ProcStats {
        peak_rss_bytes: status_field_bytes(&status, "VmHWM")?,
        rss_bytes: status_field_bytes(&status, "VmRSS")?,
        cpu_seconds: stat_cpu_seconds(&stat)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_fields_should_be_read_in_bytes() {
        let status = "Name:\tferrvault\nVmPeak:\t  900 kB\nVmHWM:\t   51200 kB\nVmRSS:\t   40960 kB\n";
        assert_eq!(status_field_bytes(status, "VmHWM"), Some(50 * 1024 * 1024));
        assert_eq!(status_field_bytes(status, "VmRSS"), Some(40 * 1024 * 1024));
        assert_eq!(status_field_bytes(status, "VmSwap"), None);
    }

    #[test]
    fn cpu_seconds_should_add_utime_and_stime_past_a_name_with_spaces() {
        let stat = "4242 (ferr (vault) op) S 1 2 3 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 8 0 100 0 0";
        assert_eq!(stat_cpu_seconds(stat), Some(3.0));
        assert_eq!(stat_cpu_seconds("garbage"), None);
    }

    #[test]
    fn this_process_should_be_readable() {
        let stats = sample(std::process::id()).expect("/proc is mounted");
        assert!(stats.peak_rss_bytes >= stats.rss_bytes && stats.rss_bytes > 0);
    }
}
