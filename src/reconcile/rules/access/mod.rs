//! What may be used or written, decided from names, types, annotations and owner references
//! before anything is revealed or written.
//!
//! - [`target_access`]: whether a FerrVaultSecret may write its target Secret (ownership,
//!   refused types, connections' Secrets).
//! - [`copy_access`]: whether a ClusterFerrVaultSecret may write its copy in one namespace.
//! - [`credential_opt_in`]: which Secrets a connection may use as its credential
//!   (`--require-credential-opt-in`).
//! - [`namespace_match`]: whether a namespace is in a cluster connection's `allowedNamespaces`.
//! - [`guards`]: the missing-keys guard (an existing target is never overwritten while keys are
//!   missing) and the cloud-scope guard (no reveal without one).

pub(crate) mod copy_access;
pub(crate) mod credential_opt_in;
pub(crate) mod guards;
pub(crate) mod namespace_match;
pub(crate) mod target_access;
