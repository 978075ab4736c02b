//! One pass of a valid ClusterFerrVaultSecret: which namespaces it serves, whether anything is
//! due, the reveal (one, or one per namespace in cloud mode), the payload, each copy, and the
//! copies it lets go.
//!
//! # Guarantees
//! - Selected: every namespace the Namespace store shows whose name or labels `spec.namespaces`
//!   selects and whose Secrets the operator watches (`--watch-namespace` list mode restricts the
//!   copies to those). Each selected namespace is then judged through the very check a
//!   FerrVaultSecret of that namespace meets ([`cluster_connection`]): not allowed by the
//!   connection, a missing or invalid connection, an unwatched token namespace: that namespace
//!   fails with the reason, and nothing is read for it.
//! - In ferrvault mode one reveal serves every namespace (the token is not namespace-scoped); in
//!   cloud mode each namespace is revealed on its own (FerrVault authorises each namespace), and
//!   `status.revealScope` says so. Every reveal goes through the credential's one limiter; copies
//!   and cloud reveals run a bounded number at a time (`provision.rs`).
//! - Nothing is revealed when nothing is due: the generation recorded, no force-sync, no moved
//!   version ([`source_moved`]: its connection's latest `list` under `changeDetection.mode:
//!   Versions`, read fresh like a force-sync), the refresh not due, and every served namespace's
//!   copy shown by the Secret store at the recorded content
//!   hash. A namespace created or relabelled into the selection is therefore the only thing such
//!   a pass reveals for.
//! - Values live only for the pass (the payload is dropped when it ends): nothing is kept to
//!   provision a later namespace, which is revealed again through the limiter (a reveal of the
//!   same wave may be joined, [`FerrVault::reveal_in_wave`](crate::ferrvault::FerrVault::reveal_in_wave)).
//! - A copy in a namespace no longer selected is deleted; one in a namespace the connection no
//!   longer allows is deleted under `revocation: Delete` and kept otherwise.

use std::collections::BTreeMap;

use controller_actors::ReconcileContext;
use jiff::Timestamp;
use kube::{ResourceExt, api::ObjectMeta};
use tracing::warn;

use super::{
    super::{cluster_connection::cluster_connection, failure::Stop, plan::content_hash_key},
    copies::{self, LetGo},
    provision::{Provision, failed},
    shard::Part,
};
use crate::{
    api::{
        ClusterFerrVaultSecret, ConnectionMode, FerrVaultConnection, FerrVaultSecret, Reason, RefreshPolicy,
        RevealScope, Revocation,
    },
    reconcile::{
        changes::followed_by,
        context::Context,
        read::Reads,
        rules::{
            access::{copy_access::is_copy_of, namespace_match::selects},
            schedule::force_sync::force_token,
            status::cluster_secret_status::{CopyState, FanOut},
        },
    },
};

/// The cluster secret seen as a FerrVaultSecret of `namespace`: its name, UID and generation, its
/// `secretSpec`. What the FerrVaultSecret's steps (connection, reveal, payload, target) read.
pub(super) fn view(cr: &ClusterFerrVaultSecret, namespace: &str) -> FerrVaultSecret {
    let mut view = FerrVaultSecret::new(&cr.name_any(), cr.spec.secret_spec.clone());
    view.metadata = ObjectMeta {
        name: cr.metadata.name.clone(),
        namespace: Some(namespace.to_owned()),
        uid: cr.metadata.uid.clone(),
        generation: cr.metadata.generation,
        ..ObjectMeta::default()
    };
    view
}

/// The namespaces `cr` selects that the operator watches, sorted.
pub(super) fn selected(reads: &Reads, cr: &ClusterFerrVaultSecret) -> Vec<String> {
    let stores = &reads.stores;
    let mut names: Vec<String> = stores
        .namespaces
        .state()
        .iter()
        .filter_map(|n| {
            let name = n.metadata.name.as_deref()?;
            let labels = n.metadata.labels.clone().unwrap_or_default();
            (stores.secret_metadata.covers(name) && selects(&cr.spec.namespaces, name, &labels))
                .then(|| name.to_owned())
        })
        .collect();
    names.sort();
    names
}

/// Whether a pass is due beyond provisioning missing copies: a new generation, a force-sync, or
/// the refresh (`interval`) come.
pub(super) fn is_due(cr: &ClusterFerrVaultSecret, interval: std::time::Duration, now: Timestamp) -> bool {
    let status = cr.status.clone().unwrap_or_default();
    let forced = is_forced(cr);
    let changed = status.observed_generation != cr.metadata.generation;
    let refresh = match (cr.spec.secret_spec.policy(), &status.last_synced_at) {
        (_, None) => true,
        (RefreshPolicy::Periodic, Some(last)) => {
            !interval.is_zero()
                && jiff::SignedDuration::try_from(interval)
                    .ok()
                    .and_then(|i| last.0.checked_add(i).ok())
                    .is_none_or(|due| due <= now)
        }
        (RefreshPolicy::OnChange | RefreshPolicy::CreatedOnce, Some(_)) => false,
    };
    forced || changed || refresh
}

/// Whether a version `cr` selects moved since its last pass recorded them (under a connection
/// with `changeDetection.mode: Versions`, whose latest `list` is known); never under
/// `refreshPolicy: CreatedOnce`.
pub(super) fn source_moved(ctx: &Context, cr: &ClusterFerrVaultSecret) -> bool {
    let spec = &cr.spec.secret_spec;
    let recorded = cr
        .status
        .as_ref()
        .and_then(|s| s.observed_source_version.as_deref());
    let listed = ctx
        .changes
        .listed_version(&followed_by(&view(cr, "")), spec.selected_names());
    spec.policy() != RefreshPolicy::CreatedOnce && listed.is_some_and(|l| Some(l.as_str()) != recorded)
}

/// Whether `cr` carries a force-sync token it has not honoured yet.
pub(super) fn is_forced(cr: &ClusterFerrVaultSecret) -> bool {
    let token = force_token(cr.metadata.annotations.as_ref());
    let seen = cr.status.as_ref().and_then(|s| s.observed_force_sync.clone());
    token.is_some() && token != seen
}

/// One pass over the selected namespaces `part` writes; `due` as [`is_due`] decided. With the
/// other selected namespaces that pass the connection check (another replica writes them).
/// When this replica writes the object and none of its own namespaces, a due pass still
/// reveals once (shared reveal) for the content hash the status records and the other
/// replicas compare their copies with.
///
/// # Errors
/// A stop that ends the whole pass without a status (rate limited, the content-hash key or the
/// stores unavailable, a Kubernetes failure).
pub(super) async fn fan_out(
    ctx: &Context,
    reads: &Reads,
    cr: &ClusterFerrVaultSecret,
    (rc, due): (&ReconcileContext, bool),
    part: &Part,
) -> Result<(FanOut, Vec<String>), Stop> {
    let uid = cr.uid().unwrap_or_default();
    let forced = is_forced(cr);
    let moved = source_moved(ctx, cr);
    let previous = cr.status.clone().unwrap_or_default();
    let mut copies = BTreeMap::new();
    let mut serve: Vec<(FerrVaultSecret, FerrVaultConnection)> = Vec::new();
    let mut elsewhere: Vec<(FerrVaultSecret, FerrVaultConnection)> = Vec::new();
    for namespace in selected(reads, cr) {
        let view = view(cr, &namespace);
        match cluster_connection(reads, &view).await {
            Ok(connection) if part.writes(&namespace) => serve.push((view, connection)),
            Ok(connection) => elsewhere.push((view, connection)),
            Err(Stop::Fail(refused)) => {
                copies.insert(namespace, failed(refused));
            }
            Err(stop) => return Err(stop),
        }
    }
    let shared =
        (serve.first().or(elsewhere.first())).is_none_or(|(_, c)| c.spec.mode == ConnectionMode::Ferrvault);
    let scope = if shared {
        RevealScope::Shared
    } else {
        RevealScope::PerNamespace
    };
    let created_once = cr.spec.secret_spec.policy() == RefreshPolicy::CreatedOnce && !forced;
    let stores = &reads.stores;
    let held = |view: &FerrVaultSecret| {
        let namespace = view.namespace().unwrap_or_default();
        let own_name = view.name_any();
        let target = view.spec.target_name(&own_name);
        let changed = ctx.own_writes.copy_changed(&namespace, target);
        !changed
            && stores.secret_meta(&namespace, target).is_some_and(|meta| {
                is_copy_of(&uid, &meta.metadata)
                    && (created_once
                        || previous.content_hash.as_deref()
                            == meta
                                .metadata
                                .annotations
                                .as_ref()
                                .and_then(|a| a.get(crate::api::names::CONTENT_HASH_ANNOTATION))
                                .map(String::as_str))
            })
    };
    let (current, missing): (Vec<_>, Vec<_>) = serve.into_iter().partition(|(view, _)| held(view));
    let to_write = if due && !created_once {
        current.into_iter().chain(missing).collect::<Vec<_>>()
    } else {
        for (view, _) in current {
            copies.insert(view.namespace().unwrap_or_default(), CopyState::Provisioned);
        }
        missing
    };
    let mut content = None;
    let mut source_version = None;
    let for_the_status = (to_write.is_empty() && due && !created_once && shared && part.owns_object())
        .then(|| elsewhere.first())
        .flatten();
    if !to_write.is_empty() || for_the_status.is_some() {
        let key = content_hash_key(ctx).await?;
        let provision = Provision {
            ctx,
            reads,
            uid: &uid,
            key,
            rc,
            forced,
            fresh: forced || moved,
        };
        let provisioned = match for_the_status {
            Some((view, connection)) => provision.hash_only(view, connection).await?,
            None => provision.run(&to_write, shared).await?,
        };
        copies.extend(provisioned.states);
        content = provisioned.content_hash;
        source_version = provisioned.source_version;
    }
    if moved && content.is_some() {
        let view = view(cr, "");
        ctx.changes
            .observe_arrival(&followed_by(&view), view.spec.selected_names());
    }
    let_go_of_the_rest(ctx, reads, cr, &copies, part).await;
    let fan_out = FanOut {
        copies,
        synced: !to_write.is_empty() || for_the_status.is_some(),
        content_hash: content,
        scope,
        force_sync: if forced {
            force_token(cr.metadata.annotations.as_ref())
        } else {
            previous.observed_force_sync
        },
        source_version,
    };
    let elsewhere = elsewhere
        .into_iter()
        .map(|(view, _)| view.namespace().unwrap_or_default());
    Ok((fan_out, elsewhere.collect()))
}

/// Deletes the copies in namespaces no longer selected, and (under the connection's `revocation:
/// Delete`) those in namespaces it no longer allows; failures are logged and retried at the next
/// pass.
async fn let_go_of_the_rest(
    ctx: &Context,
    reads: &Reads,
    cr: &ClusterFerrVaultSecret,
    copies: &BTreeMap<String, CopyState>,
    part: &Part,
) {
    let revocation = reads
        .stores
        .cluster_connections
        .get("", &cr.spec.secret_spec.connection_ref.name)
        .and_then(|c| c.valid().map(|c| c.spec.revocation))
        .unwrap_or_default();
    let not_allowed = |namespace: &str| matches!(copies.get(namespace), Some(CopyState::Failed { reason, .. }) if *reason == Reason::ConnectionNotAllowed);
    for stored in own_copies(reads, cr, part) {
        let namespace = stored.namespace.clone().unwrap_or_default();
        let goes =
            !copies.contains_key(&namespace) || (revocation == Revocation::Delete && not_allowed(&namespace));
        if goes && let Err(e) = copies::let_go(ctx, &stored, LetGo::Delete).await {
            warn!(namespace, error = %e, "could not delete a copy no longer served");
        }
    }
}

/// The stored metadata of every copy of `cr` (its UID label on its target name) in the namespaces
/// the Namespace store shows that `part` writes.
pub(super) fn own_copies(reads: &Reads, cr: &ClusterFerrVaultSecret, part: &Part) -> Vec<ObjectMeta> {
    let uid = cr.uid().unwrap_or_default();
    let target = cr.spec.secret_spec.target_name(&cr.name_any()).to_owned();
    let stores = &reads.stores;
    stores
        .namespaces
        .state()
        .iter()
        .filter_map(|n| n.metadata.name.clone())
        .filter(|namespace| part.writes(namespace))
        .filter_map(|namespace| stores.secret_meta(&namespace, &target))
        .filter(|meta| is_copy_of(&uid, &meta.metadata))
        .map(|meta| meta.metadata.clone())
        .collect()
}
