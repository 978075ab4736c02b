//! What a target Secret holds: its content as bytes ([`SecretData`]), the `spec.transforms`
//! pipeline that makes it from the revealed values, and the keyed hash stamped on it.
//!
//! - `secret_data.rs`: [`SecretData`], [`MAX_SECRET_BYTES`], [`payload_bytes`].
//! - [`transforms`] (+ [`json_expand`]): the `spec.transforms` pipeline over byte values.
//! - [`content_hash`]: the keyed hash stamped on target Secrets and pod templates.

pub(crate) mod content_hash;
pub mod json_expand;
mod secret_data;
pub(crate) mod transforms;

pub(crate) use self::secret_data::secret_data_from_strings;
pub use self::secret_data::{MAX_SECRET_BYTES, SecretData, payload_bytes};
