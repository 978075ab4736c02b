//! ferrvault-operator: keeps Kubernetes `Secret`s in sync with the FerrVault secrets service.
//!
//! # Layout
//! - [`api`]: the `ferrvault.com/v1alpha1` custom resource types.
//! - [`bench`](mod@bench): benchmarks behind `ferrvault-operator bench <name>`.
//! - [`ferrvault`]: the FerrVault HTTP client (per-credential pacing, single-flight reveals).
//! - [`reconcile`]: pure reconcile rules (transforms, hashing, conditions, durations, guards).
//! - [`sim`]: faithful simulators of the Kubernetes API and FerrVault, for tests, benchmarks and `demo`.
#![deny(missing_docs)]

pub mod api;
pub mod bench;
pub mod ferrvault;
pub mod reconcile;
pub mod sim;
