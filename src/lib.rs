//! ferrvault-operator: keeps Kubernetes `Secret`s in sync with the FerrVault secrets service.
//!
//! # Layout
//! - [`admin`]: the HTTP servers: `/metrics`, `/healthz` + `/readyz`, `/debug/*`.
//! - [`api`]: the `ferrvault.com/v1alpha1` custom resource types.
//! - [`cli`]: `run`'s flags, their checks, logging and the operator process.
//! - [`ferrvault`]: the FerrVault HTTP client (per-credential pacing, single-flight reveals).
//! - [`reconcile`]: pure reconcile rules (transforms, hashing, conditions, durations, guards).
//! - [`telemetry`]: the process and REST client metrics a controller-runtime operator exposes.
#![deny(missing_docs)]

pub mod admin;
pub mod api;
pub mod cli;
pub mod ferrvault;
pub mod reconcile;
pub mod telemetry;
