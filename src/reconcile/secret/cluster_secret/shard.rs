//! A ClusterFerrVaultSecret's fan-out under `--shards N > 1` (docs/sharding.md, "Wiring"):
//! which part of it this replica does, and what the status writer learns of the copies other
//! replicas write.
//!
//! # Guarantees
//! - One writer per copy: a replica provisions (reveals for, writes, deletes) only the copies in
//!   the namespaces of the shards it holds ([`Part::writes`]); its fence would refuse the others.
//! - One status writer: the holder of the empty namespace's shard ([`Part::owns_object`]) writes
//!   the object's status, adds and releases its finalizer; the others never write it.
//! - The status writer learns the other shards' copies from **one** metadata LIST per status
//!   pass (one per watched namespace in `watchNamespaces` list mode, where it may not list
//!   cluster-wide), of the Secrets carrying the cluster secret's UID label and its target name
//!   ([`Elsewhere::read`]): at most one per namespace, read a page of [`PAGE`] at a time and
//!   never more than the Namespace store's count (bound before allocating: the pages stop
//!   there). A copy it finds at the content hash the status records is provisioned; one
//!   missing or behind is `TargetMissing` until its holder writes it ([`BEHIND_RECHECK`]).
//! - `--shards 1` (`Part::of(None)`): this replica writes every namespace and owns the object; nothing is
//!   listed (the Secret store shows every copy), exactly as before shards.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api, ResourceExt,
    api::{ListParams, ObjectMeta},
};

use crate::{
    api::{ClusterFerrVaultSecret, Reason, names::CLUSTER_SECRET_UID_LABEL, names::CONTENT_HASH_ANNOTATION},
    reconcile::{
        context::Context, rules::access::copy_access::is_copy_of,
        rules::status::cluster_secret_status::CopyState,
    },
};

/// Copies listed per page by the status writer.
const PAGE: u32 = 500;

/// How soon the status writer looks again while another shard's copy is missing or behind
/// (its holder writes it at the same event; the status writer is not told when).
pub(super) const BEHIND_RECHECK: Duration = Duration::from_secs(1);

/// Whether a namespace is in a shard this replica holds (the watches' `KeepsNamespace`).
type Holds = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Which part of every cluster secret's fan-out this replica does.
#[derive(Clone)]
pub(crate) struct Part {
    /// Whether a namespace is in a shard this replica holds (`None`: one shard, all of them).
    keeps: Option<Holds>,
}

impl Part {
    /// The namespaces `keeps` says this replica holds (`None`: all of them).
    pub(crate) fn of(keeps: Option<Holds>) -> Self {
        Self { keeps }
    }

    /// Whether this replica writes the copy in `namespace`.
    pub(super) fn writes(&self, namespace: &str) -> bool {
        self.keeps.as_ref().is_none_or(|keeps| keeps(namespace))
    }

    /// Whether this replica writes the object itself (status, finalizer): the holder of the
    /// empty namespace's shard.
    pub(super) fn owns_object(&self) -> bool {
        self.writes("")
    }

    /// Whether other replicas write some copies.
    pub(super) fn is_sharded(&self) -> bool {
        self.keeps.is_some()
    }
}

/// The other shards' copies of one cluster secret, as one LIST showed them.
pub(super) struct Elsewhere {
    /// Each copy's namespace and content-hash annotation.
    hashes: BTreeMap<String, Option<String>>,
}

impl Elsewhere {
    /// Lists the copies of `cr` (its UID label, its target name) in every namespace, at most
    /// `bound` of them (the namespaces the Namespace store holds).
    ///
    /// # Errors
    /// The LIST failed.
    pub(super) async fn read(
        ctx: &Context,
        cr: &ClusterFerrVaultSecret,
        bound: usize,
    ) -> Result<Self, kube::Error> {
        let uid = cr.uid().unwrap_or_default();
        let target = cr.spec.secret_spec.target_name(&cr.name_any()).to_owned();
        // Copies live in watched namespaces only: in list mode the operator may not list
        // cluster-wide, so each listed namespace is read (at most one copy each).
        let watched = &ctx.settings.watch_namespaces;
        let apis: Vec<Api<Secret>> = if watched.is_empty() {
            vec![Api::all(ctx.client.clone())]
        } else {
            (watched.iter())
                .map(|namespace| Api::namespaced(ctx.client.clone(), namespace))
                .collect()
        };
        let first = ListParams::default()
            .labels(&format!("{CLUSTER_SECRET_UID_LABEL}={uid}"))
            .fields(&format!("metadata.name={target}"))
            .limit(PAGE);
        let mut hashes = BTreeMap::new();
        for api in apis {
            let mut params = first.clone();
            loop {
                let page = api.list_metadata(&params).await?;
                for item in page.items.into_iter().take(bound.saturating_sub(hashes.len())) {
                    if is_copy_of(&uid, &item.metadata) {
                        hashes.insert(
                            item.metadata.namespace.clone().unwrap_or_default(),
                            hash_of(&item.metadata),
                        );
                    }
                }
                match page.metadata.continue_ {
                    Some(next) if !next.is_empty() && hashes.len() < bound => {
                        params = params.continue_token(&next);
                    }
                    _ => break,
                }
            }
        }
        Ok(Self { hashes })
    }

    /// The state of the copy in `namespace` against the content hash `current`.
    pub(super) fn state(&self, namespace: &str, current: Option<&str>) -> CopyState {
        match self.hashes.get(namespace) {
            Some(hash) if hash.is_some() && hash.as_deref() == current => CopyState::Provisioned,
            found => CopyState::Failed {
                reason: Reason::TargetMissing,
                message: if found.is_some() {
                    "the copy is behind: the replica holding this namespace's shard has not written it yet"
                } else {
                    "no copy yet: the replica holding this namespace's shard has not written it yet"
                }
                .to_owned(),
            },
        }
    }

    /// Whether any copy is left (in a namespace `part` does not write).
    pub(super) fn any_left(&self, part: &Part) -> bool {
        self.hashes.keys().any(|namespace| !part.writes(namespace))
    }
}

/// A copy's content-hash annotation.
fn hash_of(meta: &ObjectMeta) -> Option<String> {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(CONTENT_HASH_ANNOTATION))
        .cloned()
}
