//! Benchmarks run as `ferrvault-dev bench <name>`: each prints a table and the
//! command that reproduces it. They are not tests: they measure, they do not assert.
//!
//! `rate-limit` and `kube-sim` run in-process. `scale`, `memory` and `failover` launch the
//! real binary as child processes ([`child`], [`driver`]) against simulators in the benchmark
//! process ([`world`]) and read their resource use from `/proc` ([`proc_stats`]); `scale` and
//! `memory` also run the same reconcile logic under a plain `kube_runtime::Controller`
//! ([`plain_controller`]). `all` runs everything, checks the [`targets`] and draws [`plot`]s.

pub mod all;
pub mod child;
pub mod driver;
pub mod failover;
pub mod kube_sim;
pub mod memory;
pub mod plain_controller;
pub mod plot;
pub mod proc_stats;
pub mod rate_limit;
pub mod scale;
pub mod targets;
pub mod world;
