//! The two reconcilers and everything around them, in two halves:
//!
//! - [`rules`]: pure rules (transforms, content hash, conditions, durations, guards, rollout rules,
//!   messages): values in, values out, unit- and property-tested without a server.
//! - Everything else does I/O, each file one job:
//!   - [`operator`]: the seam the process uses (`Operator::new`, `install`); [`settings`]: what the
//!     flags decide and the controller names; [`context`]: what both reconcilers share.
//!   - [`secret`]: the FerrVaultSecret controller; [`connection`]: the FerrVaultConnection controller;
//!     [`prologue`]: the first steps both share (read, finalizer, invalid spec).
//!   - [`watches`] (+ [`own_writes`]): which changes enqueue which keys, and what their stores
//!     keep of each object (`watches::projection`).
//!   - [`content_hash_key`]: the operator-held key of the content hash.
//!   - Reads: [`reads`] (the watches' [`stores`], per watched scope ([`scoped_store`]), first, a GET only where a store cannot be
//!     trusted: the rule is written there), [`secret_values`] (token and CA bundle values kept per
//!     `resourceVersion`, bounded, shared, opted in), [`inputs`] (the versions `status.observedInputs` records).
//!   - Writes and reads: [`finalizer`], [`token`] (credentials and CA bundles of a connection),
//!     [`invalid_spec`] (Ready=False/`InvalidSpec`), [`field_manager`] (the `fieldManager` of every
//!     write), [`kube_errors`] (Kubernetes failures, typed).
//!   - Reporting: [`events`], [`metrics`].
//!   - Limits: [`write_budget`] (how many writes each namespace's objects may cost).

pub(crate) mod connection;
pub(crate) mod content_hash_key;
pub(crate) mod context;
pub(crate) mod operator;
pub(crate) mod prologue;
pub(crate) mod read;
pub(crate) mod report;
pub(crate) mod rules;
pub(crate) mod secret;
pub(crate) mod settings;
#[cfg(test)]
mod test_connection;
pub(crate) mod watch;
pub(crate) mod write;
