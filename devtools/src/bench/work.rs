//! Counted work of one driver over one phase: its reconciles (its own count), its Kubernetes API
//! requests by verb (the Kubernetes simulator's audit, filtered on the identity every driver's
//! kubeconfig impersonates, [`DRIVER_IDENTITY`]) and the FerrVault requests by endpoint (the FerrVault simulator's
//! accounting). The benchmark's own requests carry another identity and are not counted.
//!
//! NOTE: the audit keeps the last [`AUDIT_CAPACITY`] entries. A phase that fills it has its
//! Kubernetes counts marked as lower bounds (`kube_truncated`) rather than silently short.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{driver::DriverProcess, stats::Spread};
use ferrvault_sim::kube::{AuditEntry, audit::AUDIT_CAPACITY};
use ferrvault_testkit::bench_world::{DRIVER_IDENTITY, World};

/// Verbs that change objects.
pub const WRITE_VERBS: [&str; 4] = ["create", "update", "patch", "delete"];
/// FerrVault endpoints that spend a credential's budget (probes of `/healthz` do not).
pub const BUDGETED_ENDPOINTS: [&str; 3] = ["reveal", "cloud_reveal", "oidc_exchange"];

/// What one driver did over one phase.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Work {
    /// FerrVaultSecret reconciles (early exits included); `None` when it could not be read.
    pub reconciles: Option<u64>,
    /// Kubernetes API requests by verb.
    pub kube: BTreeMap<String, u64>,
    /// The audit overflowed during the phase: the Kubernetes counts are lower bounds.
    pub kube_truncated: bool,
    /// FerrVault requests by endpoint.
    pub ferrvault: BTreeMap<String, u64>,
    /// Kubernetes writes by `verb resource[/subresource]` (issue 39: what the floor driver must
    /// send). Absent from reports older than it.
    #[serde(default)]
    pub kube_writes_by_resource: BTreeMap<String, u64>,
}

impl Work {
    /// Kubernetes requests of `verb`.
    pub fn kube_verb(&self, verb: &str) -> u64 {
        self.kube.get(verb).copied().unwrap_or(0)
    }

    /// Kubernetes writes (create, update, patch, delete).
    pub fn kube_writes(&self) -> u64 {
        WRITE_VERBS.iter().map(|v| self.kube_verb(v)).sum()
    }

    /// Every Kubernetes request.
    pub fn kube_total(&self) -> u64 {
        self.kube.values().sum()
    }

    /// FerrVault requests that spend budget (reveals, token exchanges).
    pub fn ferrvault_budgeted(&self) -> u64 {
        BUDGETED_ENDPOINTS
            .iter()
            .filter_map(|e| self.ferrvault.get(*e))
            .sum()
    }
}

/// Counts Kubernetes requests by verb for `identity`.
pub fn count_verbs(entries: &[AuditEntry], identity: &str) -> BTreeMap<String, u64> {
    let mut verbs = BTreeMap::new();
    for entry in entries.iter().filter(|e| e.identity == identity) {
        *verbs.entry(entry.verb.clone()).or_default() += 1;
    }
    verbs
}

/// `after − before` per key.
pub fn difference(after: &BTreeMap<String, u64>, before: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v.saturating_sub(before.get(k).copied().unwrap_or(0))))
        .filter(|(_, v)| *v > 0)
        .collect()
}

/// A phase being counted: started by clearing the audit and reading the counters.
pub struct WorkMeter {
    ferrvault_before: BTreeMap<String, u64>,
    reconciles_before: Option<u64>,
}

impl WorkMeter {
    /// Starts counting now; `process` is the driver if it is already running.
    pub async fn start(world: &World, process: Option<&DriverProcess>) -> Self {
        world.kube.clear_audit();
        let reconciles_before = match process {
            Some(p) => p.reconciles().await,
            None => Some(0),
        };
        Self {
            ferrvault_before: world.fv.stats().total.endpoints,
            reconciles_before,
        }
    }

    /// What `process` did since [`WorkMeter::start`].
    pub async fn finish(self, world: &World, process: &DriverProcess) -> Work {
        let reconciles = process.reconciles().await;
        self.finish_with(world, reconciles)
    }

    /// As [`WorkMeter::finish`], with the driver's reconcile count (since it started) read
    /// elsewhere: a process already stopped printed its last count.
    pub fn finish_with(self, world: &World, reconciles: Option<u64>) -> Work {
        let entries = world.kube.audit();
        Work {
            reconciles: reconciles
                .zip(self.reconciles_before)
                .map(|(now, before)| now.saturating_sub(before)),
            kube_truncated: entries.len() >= AUDIT_CAPACITY,
            kube: count_verbs(&entries, DRIVER_IDENTITY),
            kube_writes_by_resource: count_writes_by_resource(&entries, DRIVER_IDENTITY),
            ferrvault: difference(&world.fv.stats().total.endpoints, &self.ferrvault_before),
        }
    }
}

/// `identity`'s write requests in `entries`, by `verb resource[/subresource]`.
pub fn count_writes_by_resource(entries: &[AuditEntry], identity: &str) -> BTreeMap<String, u64> {
    let mut writes = BTreeMap::new();
    let is_write = |e: &&AuditEntry| WRITE_VERBS.contains(&e.verb.as_str());
    for entry in entries.iter().filter(|e| e.identity == identity).filter(is_write) {
        let sub = if entry.subresource.is_empty() {
            String::new()
        } else {
            format!("/{}", entry.subresource)
        };
        *writes
            .entry(format!("{} {}{sub}", entry.verb, entry.resource))
            .or_default() += 1;
    }
    writes
}

/// Counted work over several runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkSpread {
    /// Reconciles.
    pub reconciles: Spread,
    /// Kubernetes requests by verb.
    pub kube: BTreeMap<String, Spread>,
    /// Kubernetes writes.
    pub kube_writes: Spread,
    /// Every Kubernetes request.
    pub kube_total: Spread,
    /// Some run overflowed the audit (its counts are lower bounds).
    pub kube_truncated: bool,
    /// FerrVault requests that spend budget.
    pub ferrvault_budgeted: Spread,
    /// Every FerrVault request (`/healthz` probes included).
    pub ferrvault_total: Spread,
}

impl WorkSpread {
    /// The spread of `runs`.
    pub fn of(runs: &[&Work]) -> Self {
        let spread =
            |f: &dyn Fn(&Work) -> Option<f64>| Spread::of(&runs.iter().map(|w| f(w)).collect::<Vec<_>>());
        let verbs: std::collections::BTreeSet<&String> = runs.iter().flat_map(|w| w.kube.keys()).collect();
        Self {
            reconciles: spread(&|w| w.reconciles.map(|r| r as f64)),
            kube: verbs
                .into_iter()
                .map(|verb| (verb.clone(), spread(&|w| Some(w.kube_verb(verb) as f64))))
                .collect(),
            kube_writes: spread(&|w| Some(w.kube_writes() as f64)),
            kube_total: spread(&|w| Some(w.kube_total() as f64)),
            kube_truncated: runs.iter().any(|w| w.kube_truncated),
            ferrvault_budgeted: spread(&|w| Some(w.ferrvault_budgeted() as f64)),
            ferrvault_total: spread(&|w| Some(w.ferrvault.values().sum::<u64>() as f64)),
        }
    }

    /// `verb median, …` for the verbs seen, medians only; `≥` marks a truncated audit.
    pub fn kube_by_verb(&self) -> String {
        let at_least = if self.kube_truncated { "≥" } else { "" };
        self.kube
            .iter()
            .map(|(verb, s)| {
                format!(
                    "{verb} {at_least}{}",
                    s.median.map_or("-".into(), |m| format!("{m:.0}"))
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(verb: &str, identity: &str) -> AuditEntry {
        AuditEntry {
            time: String::new(),
            verb: verb.into(),
            group: String::new(),
            resource: "secrets".into(),
            subresource: String::new(),
            namespace: "n".into(),
            name: "x".into(),
            identity: identity.into(),
            code: 200,
            path: "/".into(),
        }
    }

    #[test]
    fn only_the_drivers_requests_should_be_counted_by_verb() {
        let entries = [
            entry("get", DRIVER_IDENTITY),
            entry("get", DRIVER_IDENTITY),
            entry("patch", DRIVER_IDENTITY),
            entry("create", "anonymous"),
        ];
        let verbs = count_verbs(&entries, DRIVER_IDENTITY);
        assert_eq!(verbs, BTreeMap::from([("get".into(), 2), ("patch".into(), 1)]));
        let work = Work {
            kube: verbs,
            ferrvault: BTreeMap::from([("reveal".into(), 3), ("healthz".into(), 2)]),
            ..Work::default()
        };
        assert_eq!(
            (work.kube_writes(), work.kube_total(), work.ferrvault_budgeted()),
            (1, 3, 3)
        );
    }

    #[test]
    fn differences_should_subtract_per_key_and_drop_zeros() {
        let before = BTreeMap::from([("reveal".to_owned(), 5), ("healthz".to_owned(), 1)]);
        let after = BTreeMap::from([("reveal".to_owned(), 9), ("healthz".to_owned(), 1)]);
        assert_eq!(
            difference(&after, &before),
            BTreeMap::from([("reveal".into(), 4)])
        );
    }

    #[test]
    fn spreads_should_cover_every_verb_seen_in_any_run() {
        let a = Work {
            reconciles: Some(10),
            kube: BTreeMap::from([("get".into(), 4)]),
            ..Work::default()
        };
        let b = Work {
            reconciles: Some(20),
            kube: BTreeMap::from([("patch".into(), 2)]),
            kube_truncated: true,
            ..Work::default()
        };
        let spread = WorkSpread::of(&[&a, &b]);
        assert_eq!(spread.reconciles.median, Some(15.0));
        assert_eq!(spread.kube["get"].min, Some(0.0));
        assert_eq!(spread.kube_by_verb(), "get ≥2, patch ≥1");
    }
}
