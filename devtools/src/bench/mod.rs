//! Benchmarks run as `ferrvault-dev bench <name>`: each prints a table and the
//! command that reproduces it. They are not tests: they measure, they do not assert.
//!
//! `rate-limit` and `kube-sim` run in-process. The others launch the real binary as child
//! processes ([`child`], [`driver`]) against simulators in the benchmark process
//! ([`ferrvault_testkit::bench_world`]),
//! time what they see through watches ([`watchers`]), count each driver's work ([`work`]) and
//! read resource use from `/proc` ([`ferrvault_testkit::proc_stats`]). `scale` and `memory` also run the same
//! reconcile logic under two `kube_runtime::Controller` set-ups ([`plain_controller`]). Figures
//! over repeated runs are medians with min–max ([`stats`]). `scale` also runs the [`floor`]: only
//! the operator's Kubernetes writes, the anchor of its headline ratio; `instructions` counts
//! instructions per object under callgrind; `freshness` times a rotated value's way to its target
//! per change-detection mode; `shards` runs replicas × shards against one replica and kills one
//! ([`shards`]). `all` runs everything, checks the
//! [`targets`], draws [`plot`]s and renders the README tables ([`tables`]).

pub mod admin_load;
pub mod all;
pub mod charts;
pub mod child;
pub mod driver;
pub mod early_exit;
pub mod economy;
pub mod failover;
pub mod fairness;
pub mod fanout;
pub mod fanout_run;
pub mod floor;
pub mod freshness;
pub mod freshness_run;
pub mod instructions;
pub mod kube_sim;
pub mod lease_timings;
pub mod memory;
pub mod metrics_text;
pub mod plain_controller;
pub mod plot;
pub mod rate_limit;
pub mod report;
pub mod scale;
pub mod scale_run;
pub mod shards;
pub mod shards_print;
pub mod shards_report;
pub mod shards_run;
pub mod shards_takeover;
pub mod shards_world;
pub mod stats;
pub mod tables;
pub mod targets;
pub mod watchers;
pub mod work;
