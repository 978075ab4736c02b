//! What a target Secret holds: its content as bytes ([`SecretData`]), the `spec.transforms`
//! pipeline that makes it from the revealed values, and the keyed hash stamped on it.
//!
//! - `secret_data.rs`: [`SecretData`], [`MAX_SECRET_BYTES`], [`payload_bytes`].
//! - [`transforms`] (+ [`json_expand`]): the `spec.transforms` pipeline over byte values.
//! - [`template`]: `target.template`, values rendered from the revealed keys, a docker config.
//! - `rendered_target.rs`: [`render_target`], the whole target (transforms, template, size,
//!   type) from values alone: the sync's payload and the kubectl plugin's offline render.
//! - [`content_hash`]: the keyed hash stamped on target Secrets and pod templates.
//! - [`target_shape`]: the keys a FerrVaultSecret owns in a target's maps, and how an existing
//!   (perhaps immutable) target is written.

pub(crate) mod content_hash;
pub mod json_expand;
mod rendered_target;
mod secret_data;
pub(crate) mod target_shape;
pub(crate) mod template;
pub(crate) mod transforms;

pub use self::rendered_target::{RenderError, RenderedTarget, render_target};
pub(crate) use self::secret_data::secret_data_from_strings;
pub use self::secret_data::{MAX_SECRET_BYTES, SecretData, payload_bytes};
