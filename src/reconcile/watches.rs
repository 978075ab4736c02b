//! The watches of both reconcilers: which changes enqueue which keys.
//!
//! | watch | kind | enqueues |
//! |---|---|---|
//! | `ferrvaultsecret` | FerrVaultSecret | itself on a new generation, deletion, or a lost finalizer; its connection while it is being deleted (to unblock the connection's deletion) |
//! | `ferrvaultconnection` | FerrVaultConnection | itself on a new generation, deletion, or a lost finalizer; and, by a second route with its own filter, its FerrVaultSecrets when its spec or its Ready status changed (not on every `lastCheckedAt` write, reference §8 item 4, nor on a first probe finding it reachable), the FerrVaultSecrets targeting a Secret it reads, and those refused because a connection read their target (`TargetIsConnectionSecret`: the reference may be gone) |
//! | `secret-metadata` | Secret, metadata only | the owner FerrVaultSecret of a target that someone else changed or deleted (drift healing), and every FerrVaultSecret targeting it by name (a refused target retried when its owner, annotations or existence change); the connections using it as token or CA Secret, and their FerrVaultSecrets (token rotation) |
//!
//! # Guarantees
//! - The operator's own writes to target Secrets do not enqueue anything ([`OwnWrites`]): a
//!   write is not drift.
//! - A refused target has no timer: these watches are what retries it, on a change of the target
//!   Secret's metadata, of the FerrVaultSecret or of a connection's references.
//! - Adding our own finalizer does not enqueue a second pass (the first pass already synced).
//! - Secrets are watched as metadata only: memory does not grow with Secret sizes.
//! - Every store keeps a projection of its objects ([`projection`]): only what the reconcilers
//!   and these watches read, so memory does not grow with what tenants write (annotations,
//!   labels, large spec lists); a change of something dropped enqueues nothing.
//! - One watch per kind: the FerrVaultSecrets a connection change enqueues read the store of the
//!   watch that enqueued them, which took the change before any of its routes queued a key
//!   ([`Route`]), so their pass always sees that change.
//! - With `--watch-namespace` every watch is namespaced: the three watches above for each watched
//!   namespace (named `<watch>@<namespace>` when there are several), so the operator lists,
//!   watches and caches nothing of any other namespace.
//! - Both custom resource kinds are watched as [`Lenient`]: one object that bypassed the CRD
//!   schema does not fail the list of its kind (nor get its body logged); it still enqueues
//!   its own key, and simply has no dependants or targets.

use std::sync::Arc;

use controller_actors::{ObjectKey, Route, WatchSource, WatchSpec, WatchStore};
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Resource, ResourceExt, api::ObjectMeta, core::PartialObjectMeta, runtime::watcher};

use self::settled::{connection_unsettled, secret_unsettled};
pub(crate) use super::read::OwnWrites;
use super::read::ready_for_dependants;
use super::read::{Stores, projection};
use super::rules::target_access::connection_secrets;
use super::settings::{CONNECTION_CONTROLLER, SECRET_CONTROLLER};
use crate::api::{
    ConditionType, FerrVaultConnection, FerrVaultSecret, Lenient, Reason,
    names::{CONNECTION_FINALIZER, CONTENT_HASH_ANNOTATION, MANAGED_BY_ANNOTATION, SECRET_FINALIZER},
};

/// Every watch, and the stores the reconcilers read instead of the API server.
pub(crate) struct Watches {
    /// The watches, for the runtime.
    pub sources: Vec<Box<dyn WatchSource>>,
    /// The watches' stores, across the watched scopes.
    pub stores: Stores,
}

/// Whether a change of a custom resource deserves a reconcile of that resource: first sighting,
/// new generation, deletion started, or our `finalizer` removed by someone. Status, label,
/// annotation and `managedFields` writes do not (the Go operator's `GenerationChangedPredicate`),
/// nor does our own finalizer being added.
pub(crate) fn cr_change_matters(old: Option<&ObjectMeta>, new: &ObjectMeta, finalizer: &str) -> bool {
    let Some(old) = old else {
        return true;
    };
    let has_finalizer = |m: &ObjectMeta| m.finalizers.iter().flatten().any(|f| f == finalizer);
    old.generation != new.generation
        || old.deletion_timestamp != new.deletion_timestamp
        || (has_finalizer(old) && !has_finalizer(new))
}

/// Whether a connection change matters to the FerrVaultSecrets that use it: first sighting
/// (a connection they waited for now exists), a new generation (spec change), deletion, or a
/// change of its Ready status as they see it ([`ready_for_dependants`]: a first probe finding
/// it reachable is none). A probe that only moved `lastCheckedAt` does not.
///
/// An invalid connection (not matching its type) has no readable Ready status here; turning
/// invalid or valid again is a new generation, which matters.
pub(crate) fn connection_change_matters_to_dependants(
    old: Option<&Lenient<FerrVaultConnection>>,
    new: &Lenient<FerrVaultConnection>,
) -> bool {
    let Some(old) = old else {
        return true;
    };
    old.meta().generation != new.meta().generation
        || old.meta().deletion_timestamp != new.meta().deletion_timestamp
        || old.valid().map(ready_for_dependants) != new.valid().map(ready_for_dependants)
}

/// Whether a Secret change matters: not when it is our own write, and not when it is a
/// first sighting (a start or re-list) of a target that still looks as we left it.
pub(crate) fn secret_change_matters(own: &OwnWrites, old: Option<&ObjectMeta>, new: &ObjectMeta) -> bool {
    if own.is_own(new) {
        return false;
    }
    let looks_managed = |m: &ObjectMeta| {
        m.annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(MANAGED_BY_ANNOTATION) && a.contains_key(CONTENT_HASH_ANNOTATION))
    };
    match old {
        None => !looks_managed(new),
        Some(old) => old.resource_version != new.resource_version || old.resource_version.is_none(),
    }
}

/// The FerrVaultSecret that controls a Secret (its controller owner reference), if any.
pub(crate) fn controlling_secret(meta: &ObjectMeta) -> Option<String> {
    meta.owner_references.iter().flatten().find_map(|o| {
        (o.controller == Some(true)
            && o.kind == "FerrVaultSecret"
            && o.api_version.starts_with("ferrvault.com/"))
        .then(|| o.name.clone())
    })
}

/// Keys of the valid FerrVaultSecrets in `namespace` that reference connection `name` (an
/// invalid one has no readable reference: it has no connection to follow).
fn dependants_of(
    secrets: &WatchStore<Lenient<FerrVaultSecret>>,
    namespace: &str,
    name: &str,
) -> Vec<ObjectKey> {
    secrets_in(secrets, namespace, |s| s.spec.connection_ref.name == name)
}

/// Keys of the valid FerrVaultSecrets in `namespace` whose target Secret is `name`.
fn targeting(secrets: &WatchStore<Lenient<FerrVaultSecret>>, namespace: &str, name: &str) -> Vec<ObjectKey> {
    secrets_in(secrets, namespace, |s| {
        s.metadata
            .name
            .as_deref()
            .is_some_and(|cr| s.spec.target_name(cr) == name)
    })
}

/// Keys of the valid FerrVaultSecrets in `namespace` for which `pick` holds.
fn secrets_in(
    secrets: &WatchStore<Lenient<FerrVaultSecret>>,
    namespace: &str,
    pick: impl Fn(&FerrVaultSecret) -> bool,
) -> Vec<ObjectKey> {
    secrets
        .state()
        .iter()
        .filter_map(|s| s.valid())
        .filter(|s| s.namespace().as_deref() == Some(namespace) && pick(s))
        .map(|s| ObjectKey::namespaced(SECRET_CONTROLLER, namespace, s.name_any()))
        .collect()
}

/// Whether connection `c` reads Secret `name` (token or CA bundle); never for an invalid one.
fn uses_secret(c: &Lenient<FerrVaultConnection>, name: &str) -> bool {
    c.valid()
        .is_some_and(|c| connection_secrets(c).iter().any(|used| used.secret == name))
}

/// Keys of the FerrVaultSecrets a change of connection `c` may unblock or block: those targeting
/// a Secret it reads (now refused), and those of its namespace refused because a connection read
/// their target (the reference may have moved or gone with this change).
fn targets_involving(
    secrets: &WatchStore<Lenient<FerrVaultSecret>>,
    c: &Lenient<FerrVaultConnection>,
) -> Vec<ObjectKey> {
    let namespace = c.namespace().unwrap_or_default();
    let read: Vec<String> = c
        .valid()
        .map(|c| {
            connection_secrets(c)
                .into_iter()
                .map(|used| used.secret)
                .collect()
        })
        .unwrap_or_default();
    secrets_in(secrets, &namespace, |s| {
        let target = s.spec.target_name(s.metadata.name.as_deref().unwrap_or_default());
        read.iter().any(|name| name == target) || refused_for_a_connection(s)
    })
}

/// Whether `s` was last refused because a connection reads its target.
fn refused_for_a_connection(s: &FerrVaultSecret) -> bool {
    s.status.as_ref().is_some_and(|status| {
        status.conditions.iter().any(|c| {
            c.type_ == ConditionType::Ready.as_str() && c.reason == Reason::TargetIsConnectionSecret.as_str()
        })
    })
}

/// The keys a FerrVaultSecret change enqueues: itself (valid or not, so an invalid one is
/// reconciled and marked); while it is being deleted, also its connection (to unblock the
/// connection's deletion), when the reference is readable.
fn secret_keys(s: &Lenient<FerrVaultSecret>) -> Vec<ObjectKey> {
    let ns = s.namespace().unwrap_or_default();
    let mut keys = vec![ObjectKey::namespaced(SECRET_CONTROLLER, &ns, s.name_any())];
    if s.meta().deletion_timestamp.is_some()
        && let Some(valid) = s.valid()
    {
        keys.push(ObjectKey::namespaced(
            CONNECTION_CONTROLLER,
            &ns,
            &valid.spec.connection_ref.name,
        ));
    }
    keys
}

/// Builds every watch; `namespaces` is `--watch-namespace` (empty: the whole cluster).
pub(crate) fn build(client: &kube::Client, namespaces: &[String], own: Arc<OwnWrites>) -> Watches {
    let mut watches = Watches {
        sources: Vec::new(),
        stores: Stores::default(),
    };
    if namespaces.is_empty() {
        build_scope(client, None, "", own.clone(), &mut watches);
    }
    for namespace in namespaces {
        // Watcher names are actor names, unique in the process; one namespace keeps the plain names.
        let suffix = if namespaces.len() > 1 {
            format!("@{namespace}")
        } else {
            String::new()
        };
        build_scope(client, Some(namespace), &suffix, own.clone(), &mut watches);
    }
    watches
}

/// The three watches of one scope (`None`: the whole cluster), one per kind, named with
/// `suffix`; each maps only to objects of its own scope, through that scope's stores.
fn build_scope(
    client: &kube::Client,
    namespace: Option<&str>,
    suffix: &str,
    own: Arc<OwnWrites>,
    watches: &mut Watches,
) {
    fn api<K>(client: &kube::Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        match namespace {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        }
    }
    let config = watcher::Config::default;
    let (secret_watch, secrets) = WatchSpec::full(
        format!("ferrvaultsecret{suffix}"),
        api::<Lenient<FerrVaultSecret>>(client, namespace),
        config(),
    );
    let (connection_watch, connections) = WatchSpec::full(
        format!("ferrvaultconnection{suffix}"),
        api::<Lenient<FerrVaultConnection>>(client, namespace),
        config(),
    );
    let (metadata_watch, secret_metadata) = WatchSpec::metadata(
        format!("secret-metadata{suffix}"),
        api::<PartialObjectMeta<Secret>>(client, namespace),
        config(),
    );
    let stores = &mut watches.stores;
    stores.secrets.add(namespace, secrets.clone());
    stores.connections.add(namespace, connections.clone());
    stores.secret_metadata.add(namespace, secret_metadata);
    watches.sources.extend([
        Box::new(secret_routes(secret_watch)) as Box<dyn WatchSource>,
        Box::new(connection_routes(connection_watch, secrets.clone())),
        Box::new(secret_metadata_routes(metadata_watch, own, secrets, connections)),
    ]);
}

/// The FerrVaultSecret watch: each FerrVaultSecret enqueues itself (and, while it is being
/// deleted, its connection).
fn secret_routes(watch: WatchSpec<Lenient<FerrVaultSecret>>) -> WatchSpec<Lenient<FerrVaultSecret>> {
    watch
        .trim(projection::ferrvault_secret)
        .matters(|old, new| cr_change_matters(old.map(Resource::meta), new.meta(), SECRET_FINALIZER))
        .listed_as_change(secret_unsettled)
        .map(secret_keys)
}

/// The FerrVaultConnection watch: each connection enqueues itself, and a second route enqueues
/// the FerrVaultSecrets a change of it matters to (found in `secrets`).
fn connection_routes(
    watch: WatchSpec<Lenient<FerrVaultConnection>>,
    secrets: WatchStore<Lenient<FerrVaultSecret>>,
) -> WatchSpec<Lenient<FerrVaultConnection>> {
    let dependants = Route::map(move |c: &Lenient<FerrVaultConnection>| {
        let mut keys = dependants_of(&secrets, &c.namespace().unwrap_or_default(), &c.name_any());
        keys.extend(targets_involving(&secrets, c));
        keys.sort();
        keys.dedup();
        keys
    })
    .matters(connection_change_matters_to_dependants);
    watch
        .trim(projection::ferrvault_connection)
        .matters(|old, new| cr_change_matters(old.map(Resource::meta), new.meta(), CONNECTION_FINALIZER))
        .listed_as_change(connection_unsettled)
        .map(|c: &Lenient<FerrVaultConnection>| {
            vec![ObjectKey::namespaced(
                CONNECTION_CONTROLLER,
                c.namespace().unwrap_or_default(),
                c.name_any(),
            )]
        })
        .route(dependants)
}

/// The Secret metadata watch: a Secret someone else changed enqueues the FerrVaultSecrets that
/// control or target it, and the connections reading it with their FerrVaultSecrets (found in
/// `secrets` and `connections`); the operator's own writes (`own`) enqueue nothing.
fn secret_metadata_routes(
    watch: WatchSpec<PartialObjectMeta<Secret>>,
    own: Arc<OwnWrites>,
    secrets: WatchStore<Lenient<FerrVaultSecret>>,
    connections: WatchStore<Lenient<FerrVaultConnection>>,
) -> WatchSpec<PartialObjectMeta<Secret>> {
    watch
        .trim(projection::secret_metadata)
        .matters(move |old, new| secret_change_matters(&own, old.map(|o| &o.metadata), &new.metadata))
        .map(move |s: &PartialObjectMeta<Secret>| {
            let ns = s.metadata.namespace.clone().unwrap_or_default();
            let name = s.metadata.name.clone().unwrap_or_default();
            let mut keys: Vec<ObjectKey> = controlling_secret(&s.metadata)
                .map(|owner| ObjectKey::namespaced(SECRET_CONTROLLER, &ns, owner))
                .into_iter()
                .collect();
            // Every FerrVaultSecret naming it as target: one whose owner reference was removed or
            // that waits for an opt-in, a deletion or another owner to let go (an unrelated
            // Secret of the same name only costs one pass, and no reveal when refused).
            keys.extend(targeting(&secrets, &ns, &name));
            for c in connections
                .state()
                .iter()
                .filter(|c| c.namespace().as_deref() == Some(&ns))
            {
                if uses_secret(c, &name) {
                    keys.push(ObjectKey::namespaced(CONNECTION_CONTROLLER, &ns, c.name_any()));
                    keys.extend(dependants_of(&secrets, &ns, &c.name_any()));
                }
            }
            // Its controller also targets it by name: one key once, or a key sent twice in one
            // event can run twice (the second arriving while the first is already processing).
            keys.sort();
            keys.dedup();
            keys
        })
}

mod settled;
#[cfg(test)]
mod tests;
