//! The runtime's leadership and watcher actors against the Kubernetes API simulator.

mod common;
mod leadership;
mod watcher;
