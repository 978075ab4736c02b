//! The watches of both reconcilers: which changes enqueue which keys.
//!
//! | watch | kind | enqueues |
//! |---|---|---|
//! | `ferrvaultsecret` | FerrVaultSecret | itself on a new generation, deletion, or a lost finalizer; its connection while it is being deleted (to unblock the connection's deletion) |
//! | `ferrvaultconnection` | FerrVaultConnection | itself on a new generation, deletion, or a lost finalizer |
//! | `ferrvaultconnection-dependants` | FerrVaultConnection | its FerrVaultSecrets when its spec or its Ready status changed (not on every `lastCheckedAt` write, reference §8 item 4) |
//! | `secret-metadata` | Secret, metadata only | the owner FerrVaultSecret of a target that someone else changed or deleted (drift healing); the connections using it as token or CA Secret, and their FerrVaultSecrets (token rotation) |
//!
//! # Guarantees
//! - The operator's own writes to target Secrets do not enqueue anything ([`OwnWrites`]): a
//!   write is not drift, and writing a token-target Secret is not a token rotation.
//! - Adding our own finalizer does not enqueue a second pass (the first pass already synced).
//! - Secrets are watched as metadata only: memory does not grow with Secret sizes.
//! - With `--watch-namespace` every watch is namespaced.
//! - Both custom resource kinds are watched as [`Lenient`]: one object that bypassed the CRD
//!   schema does not fail the list of its kind (nor get its body logged); it still enqueues
//!   its own key, and simply has no dependants or targets.

use std::sync::Arc;

use controller_actors::{ObjectKey, WatchSource, WatchSpec};
use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api, Resource, ResourceExt,
    api::ObjectMeta,
    core::PartialObjectMeta,
    runtime::{reflector::Store, watcher},
};

use super::operator::{CONNECTION_CONTROLLER, SECRET_CONTROLLER};
pub use super::own_writes::OwnWrites;
use crate::api::{
    ConditionType, FerrVaultConnection, FerrVaultSecret, Lenient,
    names::{CONNECTION_FINALIZER, CONTENT_HASH_ANNOTATION, MANAGED_BY_ANNOTATION, SECRET_FINALIZER},
};

/// Whether a change of a custom resource deserves a reconcile of that resource: first sighting,
/// new generation, deletion started, or our `finalizer` removed by someone. Status, label,
/// annotation and `managedFields` writes do not (the Go operator's `GenerationChangedPredicate`),
/// nor does our own finalizer being added.
pub fn cr_change_matters(old: Option<&ObjectMeta>, new: &ObjectMeta, finalizer: &str) -> bool {
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
/// change of its Ready condition's status. A probe that only moved `lastCheckedAt` does not.
///
/// An invalid connection (not matching its type) has no readable Ready status here; turning
/// invalid or valid again is a new generation, which matters.
pub fn connection_change_matters_to_dependants(
    old: Option<&Lenient<FerrVaultConnection>>,
    new: &Lenient<FerrVaultConnection>,
) -> bool {
    let Some(old) = old else {
        return true;
    };
    let ready = |c: &Lenient<FerrVaultConnection>| {
        c.valid()?.status.as_ref().and_then(|s| {
            s.conditions
                .iter()
                .find(|c| c.type_ == ConditionType::Ready.as_str())
                .map(|c| c.status.clone())
        })
    };
    old.meta().generation != new.meta().generation
        || old.meta().deletion_timestamp != new.meta().deletion_timestamp
        || ready(old) != ready(new)
}

/// Whether a Secret change matters: not when it is our own write, and not when it is a
/// first sighting (a start or re-list) of a target that still looks as we left it.
pub fn secret_change_matters(own: &OwnWrites, old: Option<&ObjectMeta>, new: &ObjectMeta) -> bool {
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
pub fn controlling_secret(meta: &ObjectMeta) -> Option<String> {
    meta.owner_references.iter().flatten().find_map(|o| {
        (o.controller == Some(true)
            && o.kind == "FerrVaultSecret"
            && o.api_version.starts_with("ferrvault.com/"))
        .then(|| o.name.clone())
    })
}

/// Keys of the valid FerrVaultSecrets in `namespace` that reference connection `name` (an
/// invalid one has no readable reference: it has no connection to follow).
fn dependants_of(secrets: &Store<Lenient<FerrVaultSecret>>, namespace: &str, name: &str) -> Vec<ObjectKey> {
    secrets_in(secrets, namespace, |s| s.spec.connection_ref.name == name)
}

/// Keys of the valid FerrVaultSecrets in `namespace` whose target Secret is `name`.
fn targeting(secrets: &Store<Lenient<FerrVaultSecret>>, namespace: &str, name: &str) -> Vec<ObjectKey> {
    secrets_in(secrets, namespace, |s| {
        s.metadata
            .name
            .as_deref()
            .is_some_and(|cr| s.spec.target_name(cr) == name)
    })
}

/// Keys of the valid FerrVaultSecrets in `namespace` for which `pick` holds.
fn secrets_in(
    secrets: &Store<Lenient<FerrVaultSecret>>,
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
    c.valid().is_some_and(|c| {
        c.spec.token_secret_ref.as_ref().is_some_and(|r| r.name == name)
            || c.spec
                .ca_bundle_secret_ref
                .as_ref()
                .is_some_and(|r| r.name == name)
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

/// Builds every watch; `namespace` is `--watch-namespace`.
pub fn build(
    client: &kube::Client,
    namespace: Option<&str>,
    own: Arc<OwnWrites>,
) -> Vec<Box<dyn WatchSource>> {
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
        "ferrvaultsecret",
        api::<Lenient<FerrVaultSecret>>(client, namespace),
        config(),
    );
    let secret_watch = secret_watch
        .matters(|old, new| cr_change_matters(old.map(Resource::meta), new.meta(), SECRET_FINALIZER))
        .map(secret_keys);
    let (connection_watch, connections) = WatchSpec::full(
        "ferrvaultconnection",
        api::<Lenient<FerrVaultConnection>>(client, namespace),
        config(),
    );
    let connection_watch = connection_watch
        .matters(|old, new| cr_change_matters(old.map(Resource::meta), new.meta(), CONNECTION_FINALIZER))
        .map(|c: &Lenient<FerrVaultConnection>| {
            vec![ObjectKey::namespaced(
                CONNECTION_CONTROLLER,
                c.namespace().unwrap_or_default(),
                c.name_any(),
            )]
        });
    let dependants_store = secrets.clone();
    let (dependants_watch, _) = WatchSpec::full(
        "ferrvaultconnection-dependants",
        api::<Lenient<FerrVaultConnection>>(client, namespace),
        config(),
    );
    let dependants_watch = dependants_watch
        .matters(connection_change_matters_to_dependants)
        .map(move |c: &Lenient<FerrVaultConnection>| {
            dependants_of(
                &dependants_store,
                &c.namespace().unwrap_or_default(),
                &c.name_any(),
            )
        });
    let own_for_filter = own.clone();
    let (metadata_watch, _) = WatchSpec::metadata(
        "secret-metadata",
        api::<PartialObjectMeta<Secret>>(client, namespace),
        config(),
    );
    let metadata_watch = metadata_watch
        .matters(move |old, new| {
            secret_change_matters(&own_for_filter, old.map(|o| &o.metadata), &new.metadata)
        })
        .map(move |s: &PartialObjectMeta<Secret>| {
            let ns = s.metadata.namespace.clone().unwrap_or_default();
            let name = s.metadata.name.clone().unwrap_or_default();
            let mut keys: Vec<ObjectKey> = controlling_secret(&s.metadata)
                .map(|owner| ObjectKey::namespaced(SECRET_CONTROLLER, &ns, owner))
                .into_iter()
                .collect();
            // A target whose owner reference was removed still names its writer by the target
            // name: heal it too (an unrelated Secret of the same name only costs one pass).
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
            keys
        });
    vec![
        Box::new(secret_watch),
        Box::new(connection_watch),
        Box::new(dependants_watch),
        Box::new(metadata_watch),
    ]
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, OwnerReference, Time};

    use super::*;
    use crate::api::{FerrVaultConnectionSpec, FerrVaultConnectionStatus, InvalidObject, lenient::problem};

    fn meta(rv: &str, generation: Option<i64>, finalizers: &[&str]) -> ObjectMeta {
        ObjectMeta {
            name: Some("app".into()),
            namespace: Some("ns".into()),
            resource_version: Some(rv.into()),
            generation,
            finalizers: Some(finalizers.iter().map(|f| (*f).to_owned()).collect()),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn cr_change_should_matter_for_new_generations_deletions_and_a_lost_finalizer_only() {
        let f = SECRET_FINALIZER;
        let base = meta("1", Some(1), &[]);
        assert!(cr_change_matters(None, &base, f), "first sighting");
        assert!(
            !cr_change_matters(Some(&base), &meta("2", Some(1), &[f]), f),
            "our finalizer added"
        );
        assert!(
            !cr_change_matters(Some(&base), &meta("2", Some(1), &[]), f),
            "status write"
        );
        assert!(
            cr_change_matters(Some(&base), &meta("2", Some(2), &[]), f),
            "spec change"
        );
        assert!(cr_change_matters(
            Some(&meta("1", Some(1), &[f])),
            &meta("2", Some(1), &[]),
            f
        ));
        let mut deleting = meta("2", Some(1), &[f]);
        deleting.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        assert!(cr_change_matters(Some(&meta("1", Some(1), &[f])), &deleting, f));
    }

    fn connection(generation: i64, ready: Option<&str>, checked: i64) -> Lenient<FerrVaultConnection> {
        let mut c = FerrVaultConnection::new(
            "conn",
            FerrVaultConnectionSpec {
                mode: Default::default(),
                url: "http://127.0.0.1:1".into(),
                organization: None,
                token_secret_ref: None,
                oidc: None,
                ca_bundle_secret_ref: None,
            },
        );
        c.metadata.generation = Some(generation);
        c.status = Some(FerrVaultConnectionStatus {
            conditions: ready
                .map(|status| Condition {
                    type_: "Ready".into(),
                    status: status.into(),
                    reason: "Reachable".into(),
                    message: String::new(),
                    observed_generation: Some(generation),
                    last_transition_time: Time(jiff::Timestamp::UNIX_EPOCH),
                })
                .into_iter()
                .collect(),
            last_checked_at: Some(Time(jiff::Timestamp::from_second(checked).unwrap())),
        });
        Lenient::Valid(c)
    }

    fn invalid(metadata: ObjectMeta) -> InvalidObject {
        InvalidObject {
            metadata,
            conditions: Vec::new(),
            problem: problem("spec.vault", "invalid type: integer `42`, expected a string"),
        }
    }

    #[test]
    fn invalid_objects_should_enqueue_themselves_and_nothing_else() {
        let mut deleting = meta("1", Some(1), &[SECRET_FINALIZER]);
        deleting.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        let keys = secret_keys(&Lenient::Invalid(invalid(deleting)));
        assert_eq!(keys, vec![ObjectKey::namespaced(SECRET_CONTROLLER, "ns", "app")]);
        let bad_connection = Lenient::<FerrVaultConnection>::Invalid(invalid(meta("1", Some(2), &[])));
        assert!(!uses_secret(&bad_connection, "app"));
        assert!(
            connection_change_matters_to_dependants(Some(&connection(1, Some("True"), 1)), &bad_connection),
            "turning invalid is a new generation"
        );
    }

    #[test]
    fn connection_probe_writes_should_not_matter_to_dependants_but_ready_flips_should() {
        let before = connection(1, Some("True"), 1);
        assert!(!connection_change_matters_to_dependants(
            Some(&before),
            &connection(1, Some("True"), 2)
        ));
        assert!(connection_change_matters_to_dependants(
            Some(&before),
            &connection(1, Some("False"), 2)
        ));
        assert!(connection_change_matters_to_dependants(
            Some(&before),
            &connection(2, Some("True"), 1)
        ));
        assert!(connection_change_matters_to_dependants(None, &before));
    }

    #[test]
    fn own_writes_should_not_matter_but_foreign_edits_and_unmanaged_first_sightings_should() {
        let own = OwnWrites::default();
        let mut managed = meta("5", None, &[]);
        managed.annotations = Some(
            [
                (MANAGED_BY_ANNOTATION, "ferrvault-operator"),
                (CONTENT_HASH_ANNOTATION, "h"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
        );
        own.begin("ns", "app");
        own.finish("ns", "app", Some("5"));
        assert!(
            !secret_change_matters(&own, Some(&meta("4", None, &[])), &managed),
            "our write"
        );
        let mut edited = managed.clone();
        edited.resource_version = Some("6".into());
        assert!(
            secret_change_matters(&own, Some(&managed), &edited),
            "someone else's edit"
        );
        assert!(
            !secret_change_matters(&OwnWrites::default(), None, &managed),
            "start-up re-list"
        );
        assert!(
            secret_change_matters(&OwnWrites::default(), None, &meta("1", None, &[])),
            "new token"
        );
    }

    #[test]
    fn controlling_secret_should_only_name_a_ferrvault_secret_controller() {
        let owner = |kind: &str, controller: bool| OwnerReference {
            api_version: "ferrvault.com/v1alpha1".into(),
            kind: kind.into(),
            name: "owner".into(),
            uid: "u".into(),
            controller: Some(controller),
            block_owner_deletion: Some(true),
        };
        let mut m = meta("1", None, &[]);
        m.owner_references = Some(vec![owner("FerrVaultSecret", true)]);
        assert_eq!(controlling_secret(&m).as_deref(), Some("owner"));
        m.owner_references = Some(vec![owner("FerrVaultSecret", false), owner("Other", true)]);
        assert_eq!(controlling_secret(&m), None);
    }
}
