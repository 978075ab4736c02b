//! Simulators of the two servers the operator talks to, faithful enough that the operator, kube-rs
//! and kubectl treat them as the real ones, plus the test kit every crate's tests share.
//!
//! # Layout
//! - [`kube`](mod@kube): a Kubernetes API server (`ferrvault-sim kube`).
//! - [`ferrvault`]: the FerrVault API with per-token rate limiting, faults and accounting
//!   (`ferrvault-sim ferrvault`).
//! - [`testkit`]: bounded polling and unique names for tests against either simulator.
#![deny(missing_docs)]

pub mod ferrvault;
pub mod kube;
pub mod testkit;
