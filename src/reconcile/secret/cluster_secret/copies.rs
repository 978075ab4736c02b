//! One namespace's copy of a ClusterFerrVaultSecret: judged, written through the FerrVaultSecret's
//! own target path ([`target::desired_target`], [`target::write_for`], [`target::write`]), deleted
//! or let go.
//!
//! # Guarantees
//! - A copy is judged by [`judge_copy`] before it is read or written: only a missing Secret or
//!   this cluster secret's own copy (its UID label) is ever written; any other Secret fails that
//!   namespace only.
//! - A copy the Secret store shows as this cluster secret's, carrying the content hash about to be
//!   written, is neither read nor written (an unchanged refresh costs no Kubernetes request) unless
//!   the pass is forced.
//! - A copy carries no owner reference (it cannot point across namespaces: Kubernetes' garbage
//!   collector would delete it); [`CLUSTER_SECRET_UID_LABEL`] marks it instead, and the cluster
//!   secret's finalizer removes it.
//! - Deletes carry UID and `resourceVersion` preconditions: a Secret replaced or edited since the
//!   store saw it is a 409, never lost.

use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, ObjectMeta, Preconditions},
};

use super::super::{
    failure::Stop,
    payload::{Payload, guard_missing_keys},
    target::{self, KnownTarget},
};
use crate::{
    api::{FerrVaultSecret, FerrVaultSecretStatus, Reason, names::CLUSTER_SECRET_UID_LABEL},
    reconcile::{
        context::Context,
        read::Stores,
        rules::{
            access::copy_access::{is_copy_of, judge_copy},
            status::cluster_secret_status::CopyState,
        },
        write::{kube_error_text, post_params},
    },
};

/// What one copy is written from: the view of the cluster secret in that namespace, its UID, the
/// payload and its content hash.
pub(super) struct Source<'a> {
    /// The cluster secret seen as a FerrVaultSecret of that namespace (name, UID, spec).
    pub(super) view: &'a FerrVaultSecret,
    /// The cluster secret's UID (the copies' label).
    pub(super) uid: &'a str,
    /// The transformed values.
    pub(super) payload: &'a Payload,
    /// Their keyed content hash.
    pub(super) hash: &'a str,
}

/// Writes (or confirms) the copy of `source` in its view's namespace; `forced` reads it whatever
/// the store shows.
pub(super) async fn put(ctx: &Context, stores: &Stores, source: &Source<'_>, forced: bool) -> CopyState {
    let view = source.view;
    let namespace = view.namespace().unwrap_or_default();
    let name = view.spec.target_name(&view.name_any()).to_owned();
    let type_ = view.spec.target_type().to_owned();
    let stored = stores
        .secret_meta(&namespace, &name)
        .map(|meta| as_secret(&meta.metadata));
    if let Err(refused) = judge_copy(source.uid, &name, &type_, stored.as_ref()) {
        return failed(refused.reason, refused.message);
    }
    let unchanged = stored
        .as_ref()
        .is_some_and(|s| target::recorded_hash(Some(s)).as_deref() == Some(source.hash));
    if unchanged && !forced {
        return CopyState::Provisioned;
    }
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
    let existing = match secrets.get_opt(&name).await {
        Ok(existing) => existing,
        Err(e) => {
            return failed(
                Reason::SecretReadFailed,
                format!("read Secret {name}: {}", kube_error_text(&e)),
            );
        }
    };
    if let Err(refused) = judge_copy(source.uid, &name, &type_, existing.as_ref()) {
        return failed(refused.reason, refused.message);
    }
    if let Err(Stop::Fail(f)) = guard_missing_keys(source.payload, existing.as_ref(), &name) {
        return failed(f.reason, f.message);
    }
    let mut desired = target::desired_target(
        existing.as_ref(),
        view,
        &FerrVaultSecretStatus::default(),
        &name,
        &type_,
        &source.payload.data,
        source.hash,
    );
    // No owner reference across namespaces: the label marks the copy instead.
    desired.metadata.owner_references = None;
    desired
        .metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert(CLUSTER_SECRET_UID_LABEL.to_owned(), source.uid.to_owned());
    let known = KnownTarget::Read(existing);
    let write = match target::write_for(&known, &desired, &view.spec) {
        Ok(None) => return CopyState::Provisioned,
        Ok(Some(write)) => write,
        Err(_) => {
            return failed(
                Reason::TargetImmutable,
                format!("Secret {name} is immutable and immutableChange is Refuse"),
            );
        }
    };
    ctx.own_writes.begin(&namespace, &name);
    let result = target::write(&secrets, write, &desired).await;
    let version = result.as_ref().ok().and_then(|s| s.resource_version());
    ctx.own_writes.finish(&namespace, &name, version.as_deref());
    match result {
        Ok(_) => CopyState::Provisioned,
        Err(e) => failed(
            Reason::SecretWriteFailed,
            format!("write Secret {name}: {}", kube_error_text(&e)),
        ),
    }
}

/// What one existing copy becomes when the cluster secret lets it go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LetGo {
    /// Deleted.
    Delete,
    /// Kept, its [`CLUSTER_SECRET_UID_LABEL`] removed (`deletionPolicy: Retain`): it is nobody's
    /// copy any more.
    Unlabel,
}

/// Deletes or unlabels the copy the Secret store shows as `stored` (judged by the caller as this
/// cluster secret's copy), only at the version the store shows.
///
/// # Errors
/// The API error (a 404 is fine: already gone).
pub(super) async fn let_go(ctx: &Context, stored: &ObjectMeta, how: LetGo) -> Result<(), kube::Error> {
    let (namespace, name) = (
        stored.namespace.clone().unwrap_or_default(),
        stored.name.clone().unwrap_or_default(),
    );
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
    let result = match how {
        LetGo::Delete => {
            let exactly = DeleteParams {
                preconditions: Some(Preconditions {
                    uid: stored.uid.clone(),
                    resource_version: stored.resource_version.clone(),
                }),
                ..DeleteParams::default()
            };
            secrets.delete(&name, &exactly).await.map(|_| ())
        }
        LetGo::Unlabel => unlabel(&secrets, stored).await,
    };
    match result {
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        other => other,
    }
}

/// Removes [`CLUSTER_SECRET_UID_LABEL`] from the copy `stored` names: read, checked to be the
/// same copy (UID and label), then replaced at the version read (the operator may `update`
/// Secrets, not `patch` them).
async fn unlabel(secrets: &Api<Secret>, stored: &ObjectMeta) -> Result<(), kube::Error> {
    let name = stored.name.clone().unwrap_or_default();
    let Some(mut copy) = secrets.get_opt(&name).await? else {
        return Ok(());
    };
    let uid = stored
        .labels
        .as_ref()
        .and_then(|l| l.get(CLUSTER_SECRET_UID_LABEL))
        .cloned()
        .unwrap_or_default();
    if copy.metadata.uid != stored.uid || !is_copy_of(&uid, &copy.metadata) {
        return Ok(());
    }
    if let Some(labels) = copy.metadata.labels.as_mut() {
        labels.remove(CLUSTER_SECRET_UID_LABEL);
    }
    secrets.replace(&name, &post_params(), &copy).await.map(|_| ())
}

/// The stored metadata as a Secret to judge (its type unknown: judged as `Opaque`).
fn as_secret(meta: &ObjectMeta) -> Secret {
    Secret {
        metadata: meta.clone(),
        ..Secret::default()
    }
}

fn failed(reason: Reason, message: String) -> CopyState {
    CopyState::Failed { reason, message }
}
