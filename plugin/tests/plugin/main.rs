//! `kubectl-ferrvault`, the binary, against the Kubernetes simulator: each subcommand, its
//! output parsed (`-o json|yaml`), its exit code, and what it never reads.

mod explain;
mod render;
mod status;
mod support;
mod suspend;
mod sync;
mod usage;
