//! The operator-held key of the content hash ([`content_hash`](super::rules::content::content_hash)): 32
//! random bytes in the Secret [`CONTENT_HASH_KEY_SECRET`] of the operator's own namespace.
//!
//! # Guarantees
//! - Created on the first start (from the operating system's random source), then only read:
//!   restarts and upgrades hash with the same key, so they restart no workload.
//! - Replicas starting together agree: the first create wins and the others read what it stored
//!   (create-then-read on a conflict).
//! - Loaded once per process and kept in memory: before the reconcilers run (`run` fails to start
//!   without it), or by the first reconcile that needs it. Rotating it means deleting the Secret
//!   and restarting the operator; every rollout target is then restarted once.
//! - Needs `get` on that one Secret and `create` of Secrets in that namespace, nothing more.
//! - The key never appears in a log, an error or a `Debug` output.
//! - Once loaded, a key derived from it becomes the process's credential-fingerprint key
//!   ([`use_fingerprint_key`]): fingerprints in `/metrics` are keyed, and the same on every
//!   replica and after every restart, as long as this key stays.

use std::collections::BTreeMap;

use k8s_openapi::{ByteString, api::core::v1::Secret};
use kube::{Api, api::ObjectMeta};
use ring::rand::{SecureRandom, SystemRandom};
use tokio::sync::OnceCell;

use super::{
    rules::content::content_hash::ContentHashKey,
    write::{kube_error_text, post_params},
};
use crate::ferrvault::use_fingerprint_key;

/// Name of the Secret holding the key, in the operator's own namespace (the Lease's).
pub const CONTENT_HASH_KEY_SECRET: &str = "ferrvault-operator-content-hash-key";

/// The `data` field holding the key bytes.
const KEY_FIELD: &str = "key";

/// The purpose the credential-fingerprint key is derived for.
const FINGERPRINT_PURPOSE: &str = "ferrvault.com/credential-fingerprint";

/// What the key Secret says about itself, for whoever finds it.
const DESCRIPTION: &str = "HMAC key of the ferrvault.com/content-hash annotations. Rotate by deleting this \
                           Secret and restarting the operator: every rollout target restarts once.";

/// Why the key could not be had.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// Reading or creating the Secret failed.
    #[error("content-hash key Secret {namespace}/{CONTENT_HASH_KEY_SECRET}: {}", kube_error_text(.source))]
    Kube {
        /// The operator's namespace.
        namespace: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The Secret exists without a usable key.
    #[error(
        "content-hash key Secret {namespace}/{CONTENT_HASH_KEY_SECRET} has no `{KEY_FIELD}` of at least {} bytes: \
         delete it and restart the operator to generate one",
        ContentHashKey::LEN
    )]
    Invalid {
        /// The operator's namespace.
        namespace: String,
    },
    /// The operating system gave no random bytes.
    #[error("no random bytes for a new content-hash key")]
    Random,
}

/// The key of this process: loaded (or created) on first use, then kept.
pub struct ContentHashKeySource {
    namespace: String,
    key: OnceCell<ContentHashKey>,
}

impl ContentHashKeySource {
    /// The key kept in the Secret [`CONTENT_HASH_KEY_SECRET`] of `namespace`.
    pub fn new(namespace: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            key: OnceCell::new(),
        }
    }

    /// The key, read (or created) on the first call, which also makes the key derived from it
    /// the process's credential-fingerprint key.
    ///
    /// # Errors
    /// [`KeyError`]; a later call tries again.
    pub async fn get(&self, client: &kube::Client) -> Result<&ContentHashKey, KeyError> {
        self.key
            .get_or_try_init(|| async {
                let key = load_or_create(client, &self.namespace).await?;
                // A process keeps the fingerprint key it started with (fingerprints never change
                // within one): a second operator in one test process, or a key installed after a
                // fingerprint was taken, is left as it is.
                use_fingerprint_key(&key.derive(FINGERPRINT_PURPOSE));
                Ok(key)
            })
            .await
    }
}

/// Reads the key Secret, creating it first when it does not exist.
async fn load_or_create(client: &kube::Client, namespace: &str) -> Result<ContentHashKey, KeyError> {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let failed = |source| KeyError::Kube {
        namespace: namespace.to_owned(),
        source,
    };
    if let Some(stored) = api.get_opt(CONTENT_HASH_KEY_SECRET).await.map_err(failed)? {
        return key_of(&stored, namespace);
    }
    match api.create(&post_params(), &new_key_secret()?).await {
        Ok(created) => key_of(&created, namespace),
        // Another replica created it since our read: use what it stored.
        Err(kube::Error::Api(status)) if status.code == 409 => key_of(
            &api.get(CONTENT_HASH_KEY_SECRET).await.map_err(failed)?,
            namespace,
        ),
        Err(error) => Err(failed(error)),
    }
}

/// A new key Secret: random bytes, immutable so only a delete can change the key.
fn new_key_secret() -> Result<Secret, KeyError> {
    let mut bytes = [0u8; ContentHashKey::LEN];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| KeyError::Random)?;
    Ok(Secret {
        metadata: ObjectMeta {
            name: Some(CONTENT_HASH_KEY_SECRET.to_owned()),
            annotations: Some(BTreeMap::from([(
                "ferrvault.com/description".to_owned(),
                DESCRIPTION.to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            KEY_FIELD.to_owned(),
            ByteString(bytes.to_vec()),
        )])),
        immutable: Some(true),
        type_: Some("Opaque".to_owned()),
        ..Secret::default()
    })
}

/// The key stored in `secret`.
fn key_of(secret: &Secret, namespace: &str) -> Result<ContentHashKey, KeyError> {
    secret
        .data
        .as_ref()
        .and_then(|data| data.get(KEY_FIELD))
        .and_then(|bytes| ContentHashKey::from_bytes(&bytes.0))
        .ok_or_else(|| KeyError::Invalid {
            namespace: namespace.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_key_secret_should_hold_32_random_bytes_and_be_immutable() {
        let (a, b) = (new_key_secret().unwrap(), new_key_secret().unwrap());
        let bytes = |s: &Secret| s.data.as_ref().unwrap()[KEY_FIELD].0.clone();
        assert_eq!(bytes(&a).len(), ContentHashKey::LEN);
        assert_ne!(bytes(&a), bytes(&b), "random");
        assert_eq!(a.immutable, Some(true));
        assert!(key_of(&a, "ns").is_ok());
    }

    #[test]
    fn a_secret_without_a_usable_key_should_be_refused_naming_the_fix() {
        let mut short = new_key_secret().unwrap();
        short
            .data
            .as_mut()
            .unwrap()
            .insert(KEY_FIELD.into(), ByteString(vec![1; 8]));
        let error = key_of(&short, "ops").unwrap_err().to_string();
        assert_eq!(
            error,
            "content-hash key Secret ops/ferrvault-operator-content-hash-key has no `key` of at least 32 bytes: \
             delete it and restart the operator to generate one"
        );
        assert!(key_of(&Secret::default(), "ops").is_err());
    }
}
