//! The operator's test support, in one crate: what the operator's integration tests
//! (`tests/*`) and the devtools share, apart from the benchmarks' plots.
//!
//! The operator dev-depends on this crate, so it depends on the operator and the simulators
//! only, never on `ferrvault-dev` (plotters, an image codec, a font): `cargo test -p
//! ferrvault-operator` compiles none of them (`tests/process/product.rs` checks the tree). What
//! needs no operator (bounded polling, child processes, a plain-HTTP client, the tools'
//! paths) lives in [`ferrvault_sim::testkit`], which the runtime's and the simulators' tests
//! use too; [`process`] re-exports the parts the process tests use.
//!
//! # Layout
//! - [`cluster`]: both simulators with the CRDs installed, a kubeconfig per identity: the one
//!   cluster the in-process harness, the scenarios and the tenant attacks build on.
//! - [`harness`]: both simulators and the operator on a real runtime in the test process.
//! - [`fixtures`]: the namespace, FerrVault's distinctive values and tokens, spec builders,
//!   condition reads.
//! - [`process`]: the real binary's path, with the child-process and HTTP helpers.
//! - [`leaks`]: the leak scan every scenario and attack ends with.
//! - [`strict_json`]: JSON read refusing duplicate keys; zap-style log lines.
//! - [`chart`]: the Helm chart rendered by the real `helm`, and the installed tools.
//! - [`sample_world`]: the sample manifests applied, FerrVault configured for them (the demo,
//!   the chart and process tests).
//! - [`bench_world`]: both simulators with the CRDs, namespaces and connections every process
//!   benchmark (and the slow-reader test) runs against.
//! - [`proc_stats`]: peak and current RSS and CPU time of a process, from `/proc`.
#![deny(missing_docs)]

pub mod bench_world;
pub mod chart;
pub mod cluster;
pub mod fixtures;
pub mod harness;
pub mod leaks;
pub mod proc_stats;
pub mod process;
pub mod sample_world;
pub mod strict_json;
