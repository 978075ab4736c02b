//! The hint key: field [`KEY_FIELD`] of the Secret named by `--hint-secret-name` in the
//! operator's namespace, read when the endpoint starts and every [`KEY_REREAD`] after, so a
//! rotated key is used within that time and a deleted Secret disables the endpoint.
//!
//! # Guarantees
//! - Until a usable key is read (at least [`MIN_KEY_BYTES`](super::signature::MIN_KEY_BYTES)),
//!   every hint is refused as unauthorized.
//! - A Secret that is gone, or holds no usable key, withdraws the key; a failed read (the API
//!   server unreachable) keeps the last one.
//! - The key's bytes never appear in a log or an error: only the Secret's name and why it is
//!   unusable are logged, once per change.
//! - Needs `get` on that Secret (the chart's operator ClusterRole reads Secrets).

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use tokio::sync::watch;

use super::signature::HintKey;

/// The field of the Secret holding the key.
pub(crate) const KEY_FIELD: &str = "key";
/// How often the Secret is read again.
pub(crate) const KEY_REREAD: Duration = Duration::from_secs(30);

/// What the last read found, for logging changes only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// A usable key.
    Key,
    /// No Secret of that name.
    Missing,
    /// The Secret has no usable `key`.
    Unusable,
    /// The read failed; the last key stays.
    Failed,
}

/// Reads the key from Secret `namespace/name` now and every [`KEY_REREAD`], publishing it on
/// `key`, until every receiver is gone.
pub(crate) async fn keep_key(
    client: kube::Client,
    namespace: String,
    name: String,
    key: watch::Sender<Option<HintKey>>,
) {
    let api: Api<Secret> = Api::namespaced(client, &namespace);
    let mut last = None;
    loop {
        let found = match api.get_opt(&name).await {
            Ok(Some(secret)) => match usable(&secret) {
                Some(usable) => {
                    key.send_replace(Some(usable));
                    Found::Key
                }
                None => {
                    key.send_replace(None);
                    Found::Unusable
                }
            },
            Ok(None) => {
                key.send_replace(None);
                Found::Missing
            }
            Err(_) => Found::Failed,
        };
        if last != Some(found) {
            match found {
                Found::Key => tracing::info!(secret = %name, "hint key loaded"),
                Found::Missing => {
                    tracing::warn!(secret = %name, "hint key Secret not found: hints are refused")
                }
                Found::Unusable => tracing::warn!(
                    secret = %name,
                    field = KEY_FIELD,
                    "hint key Secret has no key of at least 16 bytes: hints are refused"
                ),
                Found::Failed => {
                    tracing::warn!(secret = %name, "cannot read the hint key Secret; keeping the last key")
                }
            }
            last = Some(found);
        }
        tokio::select! {
            () = key.closed() => return,
            () = tokio::time::sleep(KEY_REREAD) => {}
        }
    }
}

/// The key in `secret`'s [`KEY_FIELD`], if usable.
fn usable(secret: &Secret) -> Option<HintKey> {
    let bytes = secret.data.as_ref()?.get(KEY_FIELD)?;
    HintKey::new(&bytes.0)
}
