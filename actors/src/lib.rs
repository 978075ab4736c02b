//! A small Kubernetes controller runtime on ractor, with no FerrVault knowledge.
//!
//! # Modules
//! - [`key`]: what is scheduled (`ObjectKey`, `Lane`).
//! - [`mailbox`]: message counters that give every actor a mailbox depth.
//! - [`seams`]: the contracts between watchers, leadership and the rest of the runtime.
//! - [`reconciler`]: the `Reconciler` trait controllers implement and the `Outcome` they return.
//! - [`backoff`]: pure backoff and jitter arithmetic.
//! - [`queue_state`]: pure work-queue bookkeeping (client-go semantics, two lanes, timers).
#![deny(missing_docs)]

pub mod backoff;
pub mod directory;
pub mod key;
pub mod mailbox;
pub mod metrics;
pub mod queue_state;
pub mod reconciler;
pub mod seams;
#[cfg(test)]
mod test_support;
pub mod work_queue;
pub mod worker;
