//! Provisioning the namespaces a pass must write: the reveal (one for all in ferrvault mode, one
//! per namespace in cloud mode), the payload, and each copy, a bounded number at a time.
//!
//! # Guarantees
//! - At most [`AT_ONCE`] copies are written, and in cloud mode at most [`AT_ONCE`] namespaces are
//!   revealed, at once: a selection of hundreds of namespaces takes N / [`AT_ONCE`] round trips
//!   rather than N within the reconcile deadline, while at most [`AT_ONCE`] payloads (each
//!   bounded by the FerrVaultSecret's payload bound) are held at once and the API server sees a
//!   bounded burst. Every reveal still goes through the credential's one limiter, which paces them.
//! - Ferrvault mode: one reveal serves every namespace; if it fails, every namespace fails with
//!   its reason and nothing is written.
//! - A stop that ends the pass (rate limited, FerrVault unavailable, a Kubernetes failure) ends it
//!   at once: the copies already written stay, the next pass writes the rest.

use std::collections::BTreeMap;

use controller_actors::ReconcileContext;
use futures::{StreamExt, TryStreamExt, stream};
use kube::ResourceExt;

use super::{
    super::{
        failure::{Failure, Stop},
        payload::{self, Payload},
        reveal::{self, Freshness},
    },
    copies::{self, Source},
};
use crate::{
    api::{FerrVaultConnection, FerrVaultSecret},
    reconcile::{
        changes::followed_by,
        context::Context,
        read::Reads,
        rules::{
            content::content_hash::{ContentHashKey, content_hash},
            status::cluster_secret_status::CopyState,
        },
    },
};

/// Copies written, or namespaces revealed in cloud mode, at once within one pass.
pub(super) const AT_ONCE: usize = 8;

/// One pass's provisioning: the cluster secret's UID, the content-hash key, the pass's deadline,
/// whether it is forced and whether it must read fresh.
pub(super) struct Provision<'a> {
    /// What the reconcilers share.
    pub(super) ctx: &'a Context,
    /// The watches' stores.
    pub(super) reads: &'a Reads,
    /// The cluster secret's UID (the copies' label).
    pub(super) uid: &'a str,
    /// The content-hash key.
    pub(super) key: &'a ContentHashKey,
    /// The pass's context (its deadline).
    pub(super) rc: &'a ReconcileContext,
    /// A force-sync: read FerrVault now and every copy whatever the store shows.
    pub(super) forced: bool,
    /// Never from a kept wave answer, which may predate a force-sync or a moved version.
    pub(super) fresh: bool,
}

/// What a pass's provisioning wrote.
#[derive(Default)]
pub(super) struct Provisioned {
    /// Each namespace's state, by namespace.
    pub(super) states: BTreeMap<String, CopyState>,
    /// The content hash of the copies written.
    pub(super) content_hash: Option<String>,
    /// The hash of the versions the reveal returned, when the connection follows versions.
    pub(super) source_version: Option<String>,
}

impl Provision<'_> {
    /// Writes the copy of each of `to_write` (a namespace's view and its connection), from one
    /// reveal when `shared`, else from one per namespace.
    ///
    /// # Errors
    /// A stop that ends the pass.
    pub(super) async fn run(
        &self,
        to_write: &[(FerrVaultSecret, FerrVaultConnection)],
        shared: bool,
    ) -> Result<Provisioned, Stop> {
        let Some((first, connection)) = to_write.first() else {
            return Ok(Provisioned::default());
        };
        if !shared {
            return self.each(to_write).await;
        }
        let (payload, source_version) = match self.reveal_payload(first, connection).await {
            Ok(revealed) => revealed,
            Err(Stop::Fail(f)) => {
                let state = failed(f);
                let states = to_write.iter().map(|(view, _)| (namespace(view), state.clone()));
                return Ok(Provisioned {
                    states: states.collect(),
                    ..Provisioned::default()
                });
            }
            Err(stop) => return Err(stop),
        };
        let hash = content_hash(self.key, &payload.data);
        // Built before they are streamed (lazy until polled, AT_ONCE at a time): a closure in the
        // stream would borrow for any lifetime, which the reconciler's `Send` future cannot prove.
        let puts: Vec<_> = to_write
            .iter()
            .map(|(view, _)| self.put_in(view, &payload, &hash))
            .collect();
        let states = stream::iter(puts).buffer_unordered(AT_ONCE).collect().await;
        Ok(Provisioned {
            states,
            content_hash: Some(hash),
            source_version,
        })
    }

    /// The content hash (and source version) of one shared reveal through `view`, writing
    /// nothing: what the object's writer records when other replicas write every copy
    /// (`shard.rs`). A failed reveal records nothing (their own passes report it).
    ///
    /// # Errors
    /// A stop that ends the pass.
    pub(super) async fn hash_only(
        &self,
        view: &FerrVaultSecret,
        connection: &FerrVaultConnection,
    ) -> Result<Provisioned, Stop> {
        match self.reveal_payload(view, connection).await {
            Ok((payload, source_version)) => Ok(Provisioned {
                states: BTreeMap::new(),
                content_hash: Some(content_hash(self.key, &payload.data)),
                source_version,
            }),
            Err(Stop::Fail(_)) => Ok(Provisioned::default()),
            Err(stop) => Err(stop),
        }
    }

    /// Cloud mode: each namespace revealed on its own (FerrVault authorises each), then written.
    /// Cloud reveals carry no versions: no source version.
    async fn each(&self, to_write: &[(FerrVaultSecret, FerrVaultConnection)]) -> Result<Provisioned, Stop> {
        let units: Vec<_> = to_write
            .iter()
            .map(|(view, connection)| self.one(view, connection))
            .collect();
        let done: Vec<(String, CopyState, Option<String>)> = stream::iter(units)
            .buffer_unordered(AT_ONCE)
            .try_collect()
            .await?;
        let content_hash = done.iter().find_map(|(_, _, hash)| hash.clone());
        let states = done.into_iter().map(|(namespace, state, _)| (namespace, state));
        Ok(Provisioned {
            states: states.collect(),
            content_hash,
            source_version: None,
        })
    }

    /// Cloud mode, one namespace: its reveal and its copy; its state and content hash.
    async fn one(
        &self,
        view: &FerrVaultSecret,
        connection: &FerrVaultConnection,
    ) -> Result<(String, CopyState, Option<String>), Stop> {
        match self.reveal_payload(view, connection).await {
            Ok((payload, _)) => {
                let hash = content_hash(self.key, &payload.data);
                let state = self.put(view, &payload, &hash).await;
                Ok((namespace(view), state, Some(hash)))
            }
            Err(Stop::Fail(f)) => Ok((namespace(view), failed(f), None)),
            Err(stop) => Err(stop),
        }
    }

    /// [`Provision::put`], with the namespace.
    async fn put_in(&self, view: &FerrVaultSecret, payload: &Payload, hash: &str) -> (String, CopyState) {
        (namespace(view), self.put(view, payload, hash).await)
    }

    /// Writes (or confirms) `view`'s copy of `payload`; a copy someone else changed is read and
    /// rewritten whatever its annotations say (and stays marked if that fails).
    async fn put(&self, view: &FerrVaultSecret, payload: &Payload, hash: &str) -> CopyState {
        let source = Source {
            view,
            uid: self.uid,
            payload,
            hash,
        };
        let own = &self.ctx.own_writes;
        let (namespace, name) = (
            namespace(view),
            view.spec.target_name(&view.name_any()).to_owned(),
        );
        let changed = own.take_copy_changed(&namespace, &name);
        let state = copies::put(self.ctx, &self.reads.stores, &source, self.forced || changed).await;
        if changed && state != CopyState::Provisioned {
            own.mark_copy_changed(&namespace, &name);
        }
        state
    }

    /// Reveals `view`'s keys through `connection` and renders them (transforms, template, size);
    /// with the hash of the versions the reveal returned, when the connection follows versions.
    async fn reveal_payload(
        &self,
        view: &FerrVaultSecret,
        connection: &FerrVaultConnection,
    ) -> Result<(Payload, Option<String>), Stop> {
        let freshness = if self.fresh {
            Freshness::Now
        } else {
            Freshness::Wave
        };
        let revealed = reveal::reveal(
            self.ctx,
            self.reads,
            view,
            connection,
            (self.rc.deadline, freshness),
        )
        .await?;
        let version =
            self.ctx
                .changes
                .recorded_version(&followed_by(view), view.spec.selected_names(), &revealed);
        let target = view.spec.target_name(&view.name_any()).to_owned();
        Ok((payload::payload(view, revealed, &target).await?, version))
    }
}

fn namespace(view: &FerrVaultSecret) -> String {
    view.namespace().unwrap_or_default()
}

/// A namespace's failed state.
pub(super) fn failed(failure: Failure) -> CopyState {
    CopyState::Failed {
        reason: failure.reason,
        message: failure.message,
    }
}
