//! What the answers kept for their waves may hold together (issue 34): one byte budget per
//! client, across every vault, credential and tenant. Without it, each of a tenant's connections
//! could leave an answer of up to [`MAX_REVEAL_BYTES`](crate::ferrvault::MAX_REVEAL_BYTES) in the
//! table for up to [`WAVE_HORIZON`](super::WAVE_HORIZON)'s cap: forty connections answering 2 MB
//! each took the operator 100 MiB over its peak.
//!
//! # Guarantees
//! - An answer is charged its [`cost`] before it is kept, and kept only if the charge fits in
//!   what is left; the charge returns when the kept answer is dropped ([`Charge`]'s `Drop`).
//! - What all charges hold together never exceeds the budget: charging is one atomic
//!   compare-and-swap on what is left.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use crate::ferrvault::reveal::{KeySelector, Revealed};

/// The most bytes the kept answers of one client hold together (issue 34).
///
/// A typical answer is a few KiB (a handful of keys and values, each with [`ENTRY_OVERHEAD`]): a
/// thousand vaults of answers up to 4 KiB, refreshing within one horizon, fit, and their waves
/// cost one request each as before. An answer that does not fit is not kept: its wave costs a
/// request per caller, never more memory. The largest answer a reveal may decode
/// ([`MAX_REVEAL_BYTES`](crate::ferrvault::MAX_REVEAL_BYTES) of names and values) fits alone.
///
/// Sized against the 32 MiB an attack may cost the operator: the reveals in flight take up to
/// 4 × (4 MiB of body + 2 MiB decoded), so the kept answers get 4 MiB and leave room for the
/// allocator. Measured (`tests/tenant/response_bounds.rs`): forty waves answering 1.2 MB each,
/// retried every second, cost the operator 63–72 MiB over its peak with no budget, 26–29 MiB
/// with 8 MiB, 20–25 MiB with this one, and 23 MiB with nothing kept at all.
pub(crate) const KEPT_ANSWER_BYTES: usize = 4 << 20;

/// What each name or value costs besides its bytes: the `String`'s own header and its share of
/// the map's nodes. So an answer of thousands of empty values is not counted as free.
const ENTRY_OVERHEAD: usize = 64;

/// What a kept answer of `revealed`, requested with `keys`, costs: its names, values, missing
/// names and the selector's names, each with [`ENTRY_OVERHEAD`]. Computed without allocating.
pub(super) fn cost(revealed: &Revealed, keys: &KeySelector) -> usize {
    let entry = |text: &str| text.len() + ENTRY_OVERHEAD;
    let secrets: usize = revealed
        .secrets
        .iter()
        .map(|(name, value)| entry(name) + entry(value.expose()))
        .sum();
    let missing: usize = revealed.missing.names().iter().map(|name| entry(name)).sum();
    let selector: usize = match keys {
        KeySelector::All => 0,
        KeySelector::Names(names) => names.iter().map(|name| entry(name)).sum(),
    };
    secrets + missing + selector
}

/// The bytes left for kept answers. Clones share it.
#[derive(Clone)]
pub(super) struct KeptBudget {
    /// What is left; charges take from it and give back on drop.
    left: Arc<AtomicUsize>,
}

impl KeptBudget {
    /// A budget of `total` bytes, nothing charged.
    pub(super) fn new(total: usize) -> Self {
        Self {
            left: Arc::new(AtomicUsize::new(total)),
        }
    }

    /// Takes `bytes` if they fit in what is left; `None` leaves the budget as it was.
    pub(super) fn charge(&self, bytes: usize) -> Option<Charge> {
        self.left
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
                left.checked_sub(bytes)
            })
            .ok()?;
        Some(Charge {
            left: self.left.clone(),
            bytes,
        })
    }

    /// The bytes left now.
    #[cfg(test)]
    pub(super) fn left(&self) -> usize {
        self.left.load(Ordering::Acquire)
    }
}

/// Bytes taken from a [`KeptBudget`]; they return to it when this is dropped.
pub(super) struct Charge {
    left: Arc<AtomicUsize>,
    bytes: usize,
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.left.fetch_add(self.bytes, Ordering::AcqRel);
    }
}
