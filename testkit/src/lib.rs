//! What the operator's tests and the devtools share, apart from the benchmarks' plots: the
//! demo's sample world, the simulated cluster the benchmarks and the slow-reader test fill, and
//! readings of another process's memory and CPU.
//!
//! The operator dev-depends on this crate, so it depends on the operator and the simulators
//! only, never on `ferrvault-dev` (plotters, an image codec, a font): `cargo test -p
//! ferrvault-operator` compiles none of them.
//!
//! # Layout
//! - [`sample_world`]: the sample manifests applied, FerrVault configured for them (the demo,
//!   the chart and process tests).
//! - [`bench_world`]: both simulators with the CRDs, namespaces and connections every process
//!   benchmark runs against.
//! - [`proc_stats`]: peak and current RSS and CPU time of a process, from `/proc`.
#![deny(missing_docs)]

pub mod bench_world;
pub mod proc_stats;
pub mod sample_world;
