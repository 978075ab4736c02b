//! Reading the Kubernetes simulator's audit: who wrote what, and when each leader's term of
//! writes began and ended.

use ferrvault_sim::kube::audit::AuditEntry;
use jiff::Timestamp;

const WRITE_VERBS: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];

/// When the simulator answered `entry`.
pub fn time_of(entry: &AuditEntry) -> Timestamp {
    entry
        .time
        .parse()
        .unwrap_or_else(|e| panic!("audit time {:?}: {e}", entry.time))
}

/// Whether `entry` is a write (any status) to anything but a Lease.
pub fn is_object_write(entry: &AuditEntry) -> bool {
    WRITE_VERBS.contains(&entry.verb.as_str()) && entry.resource != "leases"
}

/// Successful Lease writes (acquire, renew, release) by `identity`.
pub fn lease_writes<'a>(audit: &'a [AuditEntry], identity: &'a str) -> impl Iterator<Item = &'a AuditEntry> {
    audit.iter().filter(move |e| {
        e.resource == "leases"
            && WRITE_VERBS.contains(&e.verb.as_str())
            && e.identity == identity
            && e.code < 300
    })
}

/// A run of consecutive object writes by one identity.
#[derive(Debug, Clone)]
pub struct Term {
    pub identity: String,
    pub first: Timestamp,
    pub last: Timestamp,
    pub writes: usize,
}

/// The object writes of `identities` (other callers ignored), in audit order, collapsed into
/// runs by the same identity.
pub fn writer_terms(audit: &[AuditEntry], identities: &[&str]) -> Vec<Term> {
    let mut terms: Vec<Term> = Vec::new();
    for entry in audit
        .iter()
        .filter(|e| is_object_write(e) && identities.contains(&e.identity.as_str()))
    {
        let at = time_of(entry);
        match terms.last_mut() {
            Some(term) if term.identity == entry.identity => {
                term.last = at;
                term.writes += 1;
            }
            _ => terms.push(Term {
                identity: entry.identity.clone(),
                first: at,
                last: at,
                writes: 1,
            }),
        }
    }
    terms
}

/// Fails when an identity's writes are interleaved with another's: each identity must write in
/// one unbroken term, terms one after the other.
pub fn assert_no_overlapping_terms(terms: &[Term]) {
    for (i, term) in terms.iter().enumerate() {
        assert!(
            !terms[..i].iter().any(|earlier| earlier.identity == term.identity),
            "{} wrote again after another identity had written: overlapping leadership terms {terms:#?}",
            term.identity
        );
    }
}

/// `to - from` as a [`std::time::Duration`] (zero when `to` is earlier).
pub fn between(from: Timestamp, to: Timestamp) -> std::time::Duration {
    std::time::Duration::try_from(to.duration_since(from)).unwrap_or_default()
}
