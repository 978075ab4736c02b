//! The Lease API calls the leadership actor makes: read, create-or-replace, release. Each one
//! runs under a deadline and reports failures as a [`LeaseCallError`] that carries no object
//! content.
//!
//! # Guarantees
//! - A call never outlives [`LeaseApi`]'s timeout: a hung API server yields `Timeout`.
//! - Every replace carries the resourceVersion of the Lease it was decided on, so a concurrent
//!   writer turns our write into `Conflict` instead of overwriting it.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use kube::{
    Api, Client,
    api::{ListParams, ObjectMeta, PostParams},
};

use crate::lease_rules::{self, LeaseRecord};

/// Why a Lease API call failed. Carries no object content, only codes and reasons.
#[derive(Debug, thiserror::Error)]
pub enum LeaseCallError {
    /// The call did not finish within the deadline.
    #[error("lease call timed out after {0:?}")]
    Timeout(Duration),
    /// 409: another candidate created or updated the Lease first.
    #[error("lease changed concurrently (409)")]
    Conflict,
    /// Any other API or transport error.
    #[error("lease call failed: {0}")]
    Api(String),
}

/// One Lease, reached through one client, with a deadline per call.
#[derive(Clone)]
pub(crate) struct LeaseApi {
    /// Leases in the Lease's namespace.
    api: Api<Lease>,
    /// The Lease's namespace.
    namespace: String,
    /// The Lease's name.
    name: String,
    /// Create and replace parameters: our field manager.
    write_params: PostParams,
    /// Deadline of each call.
    timeout: Duration,
}

impl LeaseApi {
    /// Calls on Lease `namespace/name` through `client`, writes named `field_manager`, each
    /// bounded by `timeout`.
    pub(crate) fn new(
        client: Client,
        namespace: &str,
        name: &str,
        field_manager: &str,
        timeout: Duration,
    ) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            write_params: PostParams {
                field_manager: Some(field_manager.to_owned()),
                ..PostParams::default()
            },
            timeout,
        }
    }

    /// The Lease, or `None` if it does not exist.
    ///
    /// # Errors
    /// `Timeout` or `Api`.
    pub(crate) async fn read(&self) -> Result<Option<Lease>, LeaseCallError> {
        self.bounded(async { self.api.get_opt(&self.name).await.map_err(classify) })
            .await
    }

    /// Every Lease of this Lease's namespace (the shard and member Leases among them).
    ///
    /// # Errors
    /// `Timeout` or `Api`.
    pub(crate) async fn list(&self) -> Result<Vec<Lease>, LeaseCallError> {
        self.bounded(async {
            let listed = self.api.list(&ListParams::default()).await.map_err(classify)?;
            Ok(listed.items)
        })
        .await
    }

    /// Write `record`: create the Lease when `base` is `None`, otherwise replace `base` at its
    /// resourceVersion (fields we do not own are kept).
    ///
    /// # Errors
    /// `Conflict` when someone else wrote first, `Timeout` or `Api`.
    pub(crate) async fn write(
        &self,
        base: Option<Lease>,
        record: &LeaseRecord,
    ) -> Result<Lease, LeaseCallError> {
        let create = base.is_none();
        let mut lease = base.unwrap_or_else(|| Lease {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                namespace: Some(self.namespace.clone()),
                ..ObjectMeta::default()
            },
            spec: None,
        });
        record.write_to(lease.spec.get_or_insert_default());
        self.bounded(async {
            let written = if create {
                self.api.create(&self.write_params, &lease).await
            } else {
                self.api.replace(&self.name, &self.write_params, &lease).await
            };
            written.map_err(classify)
        })
        .await
    }

    /// Read the Lease and, if it names `identity`, write the released record over it (the whole
    /// exchange under one deadline).
    ///
    /// # Errors
    /// `Conflict` when someone else wrote in between, `Timeout` or `Api`.
    pub(crate) async fn release(&self, identity: &str) -> Result<(), LeaseCallError> {
        self.bounded(async {
            let Some(mut lease) = self.api.get_opt(&self.name).await.map_err(classify)? else {
                return Ok(());
            };
            let current = LeaseRecord::from_spec(lease.spec.as_ref());
            if !current.is_held_by(identity) {
                return Ok(());
            }
            lease_rules::released(&current, Timestamp::now()).write_to(lease.spec.get_or_insert_default());
            self.api
                .replace(&self.name, &self.write_params, &lease)
                .await
                .map_err(classify)?;
            Ok(())
        })
        .await
    }

    async fn bounded<T>(
        &self,
        call: impl Future<Output = Result<T, LeaseCallError>>,
    ) -> Result<T, LeaseCallError> {
        tokio::time::timeout(self.timeout, call)
            .await
            .unwrap_or(Err(LeaseCallError::Timeout(self.timeout)))
    }
}

/// The one place that sorts Lease call failures: 409 is a lost race, the rest are errors.
fn classify(error: kube::Error) -> LeaseCallError {
    match error {
        kube::Error::Api(status) if status.code == 409 => LeaseCallError::Conflict,
        kube::Error::Api(status) => LeaseCallError::Api(format!("{} {}", status.code, status.reason)),
        other => LeaseCallError::Api(other.to_string()),
    }
}
