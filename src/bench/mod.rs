//! Benchmarks run as `ferrvault-operator bench <name>`: each prints a table and the
//! command that reproduces it. They are not tests and assert nothing.

pub mod kube_sim;
