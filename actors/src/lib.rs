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
pub mod controllers;
pub mod directory;
pub mod health;
pub mod health_rules;
pub mod introspection;
pub mod key;
pub mod mailbox;
pub mod metrics;
pub mod queue_state;
pub mod reconciler;
pub mod restart_policy;
pub mod runtime;
pub mod seams;
pub mod supervisor;
#[cfg(test)]
mod test_support;
pub mod work_queue;
pub mod worker;
