//! The checks behind the fuzz targets of `fuzz_targets/`: one module per parser of untrusted
//! input, each stating the properties its target asserts (not only "no panic"). See README.md.
//!
//! # Layout
//! - [`reveal`]: the reveal answer decoder, both wire formats (`reveal_ferrvault`,
//!   `reveal_cloud`).
//! - [`error_body`]: a non-2xx body's message and the redacted error carrying it (`error_body`).
//! - [`exchange`]: the OIDC token-exchange answer (`oidc_exchange`).
//! - [`list`], [`me`]: the `list` and `me` answers (`list`, `me`).
//! - [`hint_body`]: the change-hint body (`hint_body`).
//! - [`retry_after`]: the `Retry-After` header (`retry_after`).
//! - [`transforms`]: the `spec.transforms` pipeline (`transforms`).
//! - [`template`]: the `target.template` language and `dockerConfig` (`template`).
//! - [`lenient`]: custom resources read leniently, then the spec bounds check
//!   (`lenient_secret`, `lenient_connection`).
//! - `tree.rs`, `shape.rs`: the plain reading of JSON the decoders are compared with, and the
//!   exact shape of a decode error.
#![deny(missing_docs)]

pub mod error_body;
pub mod exchange;
pub mod hint_body;
pub mod lenient;
pub mod list;
pub mod me;
pub mod retry_after;
pub mod reveal;
mod shape;
pub mod template;
pub mod transforms;
mod tree;
