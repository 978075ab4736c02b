//! A small Kubernetes controller runtime on ractor, with no FerrVault knowledge.
//!
//! # Layout
//! - [`key`]: what is scheduled (`ObjectKey`, `Lane`).
//! - [`mailbox`]: message counters that give every actor a mailbox depth.
//! - [`seams`]: the contracts between watchers, leadership and the rest of the runtime.
#![deny(missing_docs)]

pub mod key;
pub mod leadership;
pub mod lease_rules;
pub mod mailbox;
pub mod seams;
pub mod watch_filter;
pub mod watch_spec;
pub mod watcher;
