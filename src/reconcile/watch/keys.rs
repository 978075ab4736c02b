//! The key mappings of the watches: which keys a change of each kind enqueues. Read from the
//! watches' stores (which FerrVaultSecrets use a connection, which target a Secret), each
//! mapping stays within its own scope's stores.

use controller_actors::{ObjectKey, WatchStore};
use k8s_openapi::api::core::v1::Secret;
use kube::{Resource, ResourceExt, api::ObjectMeta, core::PartialObjectMeta};

use crate::{
    api::{ConditionType, ConnectionKind, FerrVaultConnection, FerrVaultSecret, Lenient, Reason},
    reconcile::{
        connection::cluster_connection_key,
        rules::access::target_access::connection_secrets,
        settings::{CONNECTION_CONTROLLER, SECRET_CONTROLLER},
    },
};

/// The keys a FerrVaultSecret change enqueues: itself (valid or not, so an invalid one is
/// reconciled and marked); its ClusterFerrVaultConnection, if it names one (its status counts
/// references); while it is being deleted, also its connection (to unblock the connection's
/// deletion), when the reference is readable.
pub(super) fn secret_keys(s: &Lenient<FerrVaultSecret>) -> Vec<ObjectKey> {
    let ns = s.namespace().unwrap_or_default();
    let mut keys = vec![ObjectKey::namespaced(SECRET_CONTROLLER, &ns, s.name_any())];
    if let Some(valid) = s.valid()
        && valid.spec.connection_ref.kind == ConnectionKind::ClusterFerrVaultConnection
    {
        // Its cluster connection's status counts the namespaces referencing it.
        keys.push(cluster_connection_key(&valid.spec.connection_ref.name));
    }
    if s.meta().deletion_timestamp.is_some()
        && let Some(valid) = s.valid()
        && valid.spec.connection_ref.kind == ConnectionKind::FerrVaultConnection
    {
        keys.push(ObjectKey::namespaced(
            CONNECTION_CONTROLLER,
            &ns,
            &valid.spec.connection_ref.name,
        ));
    }
    keys
}

/// The key a FerrVaultConnection change enqueues: itself (valid or not).
pub(super) fn connection_keys(c: &Lenient<FerrVaultConnection>) -> Vec<ObjectKey> {
    vec![ObjectKey::namespaced(
        CONNECTION_CONTROLLER,
        c.namespace().unwrap_or_default(),
        c.name_any(),
    )]
}

/// The keys of the FerrVaultSecrets (in `secrets`) a change of connection `c` matters to: those
/// using it, and those its change may unblock or block ([`targets_involving`]).
pub(super) fn dependant_keys(
    secrets: &WatchStore<Lenient<FerrVaultSecret>>,
    c: &Lenient<FerrVaultConnection>,
) -> Vec<ObjectKey> {
    let mut keys = dependants_of(secrets, &c.namespace().unwrap_or_default(), &c.name_any());
    keys.extend(targets_involving(secrets, c));
    keys.sort();
    keys.dedup();
    keys
}

/// The keys a change of Secret `s` (its metadata) enqueues: the FerrVaultSecret controlling it
/// and every one targeting it by name (in `secrets`), and the connections reading it (in
/// `connections`) with their FerrVaultSecrets.
pub(super) fn secret_metadata_keys(
    secrets: &WatchStore<Lenient<FerrVaultSecret>>,
    connections: &WatchStore<Lenient<FerrVaultConnection>>,
    s: &PartialObjectMeta<Secret>,
) -> Vec<ObjectKey> {
    let ns = s.metadata.namespace.clone().unwrap_or_default();
    let name = s.metadata.name.clone().unwrap_or_default();
    let mut keys: Vec<ObjectKey> = controlling_secret(&s.metadata)
        .map(|owner| ObjectKey::namespaced(SECRET_CONTROLLER, &ns, owner))
        .into_iter()
        .collect();
    // Every FerrVaultSecret naming it as target: one whose owner reference was removed or
    // that waits for an opt-in, a deletion or another owner to let go (an unrelated
    // Secret of the same name only costs one pass, and no reveal when refused).
    keys.extend(targeting(secrets, &ns, &name));
    for c in connections.in_namespace(&ns) {
        if uses_secret(&c, &name) {
            keys.push(ObjectKey::namespaced(CONNECTION_CONTROLLER, &ns, c.name_any()));
            keys.extend(dependants_of(secrets, &ns, &c.name_any()));
        }
    }
    // Its controller also targets it by name: one key once, or a key sent twice in one
    // event can run twice (the second arriving while the first is already processing).
    keys.sort();
    keys.dedup();
    keys
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
    secrets_in(secrets, namespace, |s| s.spec.connection_ref.is_namespaced(name))
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
        .in_namespace(namespace)
        .iter()
        .filter_map(|s| s.valid())
        .filter(|s| pick(s))
        .map(|s| ObjectKey::namespaced(SECRET_CONTROLLER, namespace, s.name_any()))
        .collect()
}

/// Whether connection `c` reads Secret `name` (token or CA bundle); never for an invalid one.
pub(super) fn uses_secret(c: &Lenient<FerrVaultConnection>, name: &str) -> bool {
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
