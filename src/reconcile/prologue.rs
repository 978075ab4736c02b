//! The first steps both reconcilers share: read the object leniently (from its watch's store, see
//! [`CrStore`]), put our finalizer on it (the same pass then continues), and single out an object
//! whose spec does not match its type.
//!
//! # Guarantees
//! - A missing object is [`Start::Gone`]: nothing is written.
//! - Every write here is recorded in the kind's [`WrittenVersions`](super::read::WrittenVersions),
//!   so the next pass does not start from a store that has not seen it yet.
//! - An object being deleted is handed back untouched as [`Start::Deleting`] (each controller
//!   has its own cleanup), and [`release`] completes it.
//! - Only a [`Start::Valid`] object carries our finalizer for sure: the finalizer is added before
//!   anything else is written, so no target outlives its FerrVaultSecret.
//! - An object that bypassed the CRD schema (a field of the wrong type, or a spec beyond one of
//!   the schema's bounds, see [`spec_bounds`](super::rules::bounds::spec_bounds)) is [`Start::Invalid`]:
//!   its finalizer is added too, so its deletion runs the same cleanup, and it never blocks its
//!   own deletion. Nothing else is read or built from such a spec.

use std::fmt::Debug;

use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;

use super::{
    context::Context,
    read::CrStore,
    rules::bounds::spec_bounds::SpecBounds,
    write::{KubeAction, KubeFailure, finalizer},
};
use crate::api::{InvalidObject, Lenient};

/// Where the shared first steps leave a pass.
pub(crate) enum Start<K> {
    /// The object no longer exists.
    Gone,
    /// Its deletion was requested; our finalizer still holds it.
    Deleting(Lenient<K>),
    /// It does not match its type or exceeds a bound (it bypassed the CRD schema): report
    /// `InvalidSpec`.
    Invalid(InvalidObject),
    /// A valid object carrying our finalizer.
    Valid(K),
}

/// Reads `namespace/name` (from `objects`, else through `api`) and completes the shared first
/// steps for `finalizer`.
///
/// # Errors
/// The read or the finalizer patch failed (a 409 when the object changed meanwhile).
pub(crate) async fn start<K>(
    objects: &CrStore<K>,
    api: &Api<Lenient<K>>,
    (kind, namespace, name): (&'static str, &str, &str),
    finalizer: &str,
) -> Result<Start<K>, KubeFailure>
where
    K: Resource<DynamicType = ()> + SpecBounds + Clone + DeserializeOwned + Debug + 'static,
{
    let Some(object) = objects
        .get(api, namespace, name)
        .await
        .map_err(KubeFailure::during(KubeAction::Read(kind)))?
    else {
        return Ok(Start::Gone);
    };
    if object.meta().deletion_timestamp.is_some() {
        return Ok(Start::Deleting(object));
    }
    let object = if finalizer::has_finalizer(&object, finalizer) {
        object
    } else {
        let added = finalizer::add(api, &object, finalizer)
            .await
            .map_err(KubeFailure::during(KubeAction::AddFinalizer))?;
        objects.written().record(added.meta());
        added
    };
    Ok(match object {
        Lenient::Valid(object) => match object.beyond_bounds() {
            None => Start::Valid(object),
            Some(invalid) => Start::Invalid(invalid),
        },
        Lenient::Invalid(invalid) => Start::Invalid(invalid),
    })
}

/// Completes the deletion of `object`: forgets its Event history and removes `finalizer`
/// (already gone is fine).
///
/// # Errors
/// The finalizer patch failed.
pub(crate) async fn release<K>(
    ctx: &Context,
    api: &Api<Lenient<K>>,
    object: &Lenient<K>,
    finalizer: &str,
) -> Result<(), KubeFailure>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    ctx.events.forget(&object.uid().unwrap_or_default());
    if !finalizer::has_finalizer(object, finalizer) {
        return Ok(());
    }
    finalizer::remove(api, object, finalizer)
        .await
        .map_err(KubeFailure::during(KubeAction::RemoveFinalizer))
}
