//! The two reconcilers and everything around them, in two halves:
//!
//! - [`rules`]: pure rules (transforms, content hash, conditions, durations, guards, rollout rules,
//!   messages): values in, values out, unit- and property-tested without a server.
//! - Everything else does I/O, each file one job:
//!   - [`operator`]: the seam the process uses (`Operator::new`, `install`); [`settings`]: what the
//!     flags decide and the controller names; [`context`]: what both reconcilers share.
//!   - [`secret`]: the FerrVaultSecret controller; [`connection`]: the FerrVaultConnection controller;
//!     [`prologue`]: the first steps both share (read, finalizer, invalid spec).
//!   - [`watches`] (+ [`own_writes`], [`connection_stores`]): which changes enqueue which keys.
//!   - [`content_hash_key`]: the operator-held key of the content hash.
//!   - Writes and reads: [`finalizer`], [`token`] (credentials and CA bundles of a connection),
//!     [`invalid_spec`] (Ready=False/`InvalidSpec`), [`field_manager`] (the `fieldManager` of every
//!     write), [`kube_errors`] (Kubernetes failures, typed).
//!   - Reporting: [`events`], [`metrics`].

pub mod connection;
pub mod connection_stores;
pub mod content_hash_key;
pub mod context;
pub mod events;
pub mod field_manager;
pub mod finalizer;
pub mod invalid_spec;
pub mod kube_errors;
pub mod metrics;
pub mod operator;
pub mod own_writes;
pub mod prologue;
pub mod rules;
pub mod secret;
pub mod settings;
pub mod token;
pub mod watches;
