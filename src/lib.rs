//! ferrvault-operator: keeps Kubernetes `Secret`s in sync with the FerrVault secrets service.
//!
//! # Layout
//! - [`admin`]: the HTTP servers: `/metrics`, `/healthz` + `/readyz`, `/debug/*`.
//! - [`api`]: the `ferrvault.com/v1alpha1` custom resource types.
//! - [`bench`](mod@bench): benchmarks behind `ferrvault-operator bench <name>`.
//! - [`cli`]: `run`'s flags, their checks, logging and the operator process.
//! - [`demo`]: `ferrvault-operator demo`, the operator against both simulators in one process.
//! - [`ferrvault`]: the FerrVault HTTP client (per-credential pacing, single-flight reveals).
//! - [`reconcile`]: pure reconcile rules (transforms, hashing, conditions, durations, guards).
//! - [`sim`]: faithful simulators of the Kubernetes API and FerrVault, for tests, benchmarks and `demo`.
#![deny(missing_docs)]

pub mod admin;
pub mod api;
pub mod bench;
pub mod cli;
pub mod demo;
pub mod ferrvault;
pub mod reconcile;
pub mod sim;
