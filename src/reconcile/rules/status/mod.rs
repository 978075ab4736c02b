//! What status says: condition upserts, a FerrVaultSecret's status after each outcome of a
//! pass, and the human-readable condition messages.
//!
//! - [`cluster_secret_status`]: what a ClusterFerrVaultSecret's status says after a pass.
//! - [`conditions`]: condition upsert with transition-time and `observedGeneration` rules.
//! - [`secret_status`]: what a FerrVaultSecret's status becomes after each outcome of a pass.
//! - [`messages`]: the human-readable condition messages, in one place.
//! - [`token_health`]: what a connection's status says about its token, from `GET /operator/me`.
//! - [`refresh_control`]: the `Suspended` condition, and a `CreatedOnce` target kept.

pub(crate) mod cluster_secret_status;
pub(crate) mod conditions;
pub(crate) mod messages;
pub(crate) mod refresh_control;
pub(crate) mod secret_status;
pub(crate) mod token_health;
