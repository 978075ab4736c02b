//! Benchmarks: `ferrvault-operator bench <name>` subcommands that print a table and the command
//! that reproduces it. They are not tests: they measure, they do not assert.

pub mod rate_limit;
