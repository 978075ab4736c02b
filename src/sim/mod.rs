//! In-process simulators of the servers the operator talks to.

pub mod ferrvault;
pub mod kube;
