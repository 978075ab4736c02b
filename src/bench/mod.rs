//! Benchmarks run as `ferrvault-operator bench <name>`: each prints a table and the
//! command that reproduces it. They are not tests: they measure, they do not assert.

pub mod kube_sim;
pub mod rate_limit;
