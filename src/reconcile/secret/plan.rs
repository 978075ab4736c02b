//! The plan of a sync's write: the keyed content hash of the payload, the hashes recorded before
//! it read as today's, and the target Secret as it must be.

use k8s_openapi::api::core::v1::Secret;

use super::{
    failure::Stop,
    target::{self, KnownTarget},
};
use crate::{
    api::{FerrVaultSecret, FerrVaultSecretStatus},
    reconcile::{
        context::Context,
        rules::content::{
            SecretData,
            content_hash::{ContentHashKey, content_hash, stamp, upgraded},
        },
    },
};

/// `Outcome::Error` reason while the content-hash key cannot be had.
const KEY_UNAVAILABLE: &str = "ContentHashKeyUnavailable";

/// What the write will do.
pub(super) struct Plan {
    /// The content hash of [`Payload::data`](super::payload::Payload::data).
    pub(super) hash: String,
    /// The content hash recorded on the target before this sync (a legacy unkeyed hash of the
    /// same content read as [`Plan::hash`]).
    pub(super) previous_hash: Option<String>,
    /// `status.lastRolloutHash` as recorded, read the same way.
    pub(super) last_rolled_out: Option<String>,
    /// The target as it must be.
    pub(super) desired: Secret,
}

impl Plan {
    /// The first 12 hex digits of the content hash, for Events.
    pub(super) fn short_hash(&self) -> &str {
        &self.hash[..self.hash.len().min(12)]
    }
}

/// The content-hash key (loaded on the first pass unless the process loaded it at start).
pub(super) async fn content_hash_key(ctx: &Context) -> Result<&ContentHashKey, Stop> {
    ctx.content_hash_key
        .get(&ctx.client)
        .await
        .map_err(|e| Stop::Unavailable {
            reason: KEY_UNAVAILABLE,
            message: e.to_string(),
        })
}

/// The content hash and the target as it must be after this sync. Hashes recorded in an earlier
/// encoding of the same content are read as today's ([`upgraded`]), so an upgrade restarts
/// nothing; the target keeps a keyed stamp of an earlier encoding ([`stamp`]), so it rewrites
/// nothing either.
pub(super) fn plan(
    cr: &FerrVaultSecret,
    previous: &FerrVaultSecretStatus,
    known: &KnownTarget,
    target: &str,
    data: &SecretData,
    key: &ContentHashKey,
) -> Plan {
    let existing = known.secret();
    let hash = content_hash(key, data);
    let recorded = target::recorded_hash(existing);
    let stamp = stamp(recorded.as_deref(), key, data, &hash);
    Plan {
        previous_hash: upgraded(recorded.as_deref(), key, data, &hash),
        last_rolled_out: upgraded(previous.last_rollout_hash.as_deref(), key, data, &hash),
        desired: target::desired_target(
            existing,
            cr,
            previous,
            target,
            cr.spec.target_type(),
            data,
            &stamp,
        ),
        hash,
    }
}
