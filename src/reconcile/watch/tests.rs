use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};

use controller_actors::ObjectKey;
use kube::api::ObjectMeta;

use super::{keys::uses_secret, *};
use crate::{
    api::{
        InvalidObject,
        lenient::problem,
        names::{CONTENT_HASH_ANNOTATION, FORCE_SYNC_ANNOTATION, MANAGED_BY_ANNOTATION},
    },
    reconcile::settings::SECRET_CONTROLLER,
};

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

#[test]
fn cr_change_should_matter_for_a_new_force_sync_value_and_no_other_annotation() {
    let f = SECRET_FINALIZER;
    let annotated = |pairs: &[(&str, &str)]| {
        let mut m = meta("2", Some(1), &[]);
        m.annotations = Some(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        );
        m
    };
    let base = annotated(&[(FORCE_SYNC_ANNOTATION, "1")]);
    let cases = [
        (annotated(&[(FORCE_SYNC_ANNOTATION, "2")]), true, "a new value"),
        (annotated(&[]), true, "removed"),
        (
            annotated(&[(FORCE_SYNC_ANNOTATION, "1")]),
            false,
            "the same value",
        ),
        (
            annotated(&[
                (FORCE_SYNC_ANNOTATION, "1"),
                ("argocd.argoproj.io/sync-wave", "3"),
            ]),
            false,
            "another annotation",
        ),
    ];
    for (new, matters, what) in cases {
        assert_eq!(cr_change_matters(Some(&base), &new, f), matters, "{what}");
    }
}

fn connection(generation: i64, ready: Option<&str>, checked: i64) -> Lenient<FerrVaultConnection> {
    Lenient::Valid(crate::reconcile::fixtures::connection(generation, ready, checked))
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
    let not_probed = connection(1, None, 0);
    assert!(
        !connection_change_matters_to_dependants(Some(&not_probed), &before),
        "a first probe finding it reachable"
    );
    assert!(
        connection_change_matters_to_dependants(Some(&not_probed), &connection(1, Some("False"), 1)),
        "a first probe finding it unreachable"
    );
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
