//! Development tools around the operator: `ferrvault-dev demo` and `ferrvault-dev bench <name>`.
//! Nothing here ships in the operator image.
//!
//! # Layout
//! - [`demo`]: the operator against both simulators in one process, with the sample resources.
//! - [`bench`](mod@bench): benchmarks that launch the real `ferrvault-operator` binary.
#![deny(missing_docs)]

pub mod bench;
pub mod demo;
