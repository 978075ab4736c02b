use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::json;

use super::*;
use crate::api::CreationPolicy;
use crate::reconcile::{
    read::OwnWrites,
    rules::access::target_access::{Writer, judge_target},
    watch::{controlling_secret, secret_change_matters},
};

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn owner(kind: &str, name: &str, uid: &str, controller: bool) -> OwnerReference {
    OwnerReference {
        api_version: "ferrvault.com/v1alpha1".into(),
        kind: kind.into(),
        name: name.into(),
        uid: uid.into(),
        controller: Some(controller),
        block_owner_deletion: Some(true),
    }
}

fn secret_meta(meta: ObjectMeta) -> PartialObjectMeta<Secret> {
    PartialObjectMeta {
        types: Some(kube::core::TypeMeta {
            api_version: "meta.k8s.io/v1".into(),
            kind: "PartialObjectMetadata".into(),
        }),
        metadata: meta,
        _phantom: std::marker::PhantomData,
    }
}

fn projected(meta: ObjectMeta) -> ObjectMeta {
    let mut secret = secret_meta(meta);
    secret_metadata(&mut secret);
    assert!(secret.types.is_none(), "apiVersion and kind are constant");
    secret.metadata
}

/// A Secret a tenant filled with what no reconciler reads, around what they do read.
fn loaded_secret() -> ObjectMeta {
    let huge = "x".repeat(250 * 1024);
    ObjectMeta {
        name: Some("app".into()),
        namespace: Some("ns".into()),
        uid: Some("secret-uid".into()),
        resource_version: Some("7".into()),
        generate_name: Some("g".repeat(200)),
        finalizers: Some(vec!["example.com/keep".into()]),
        deletion_timestamp: Some(Time(jiff::Timestamp::UNIX_EPOCH)),
        annotations: Some(map(&[
            ("bulk", &huge),
            (MANAGED_BY_ANNOTATION, "ferrvault-operator"),
            (CONTENT_HASH_ANNOTATION, "h"),
            (ADOPTABLE_BY_ANNOTATION, "app"),
            (SERVICE_ACCOUNT_ANNOTATIONS[0], &huge),
            ("ferrvault.com/bulk", &huge),
        ])),
        labels: Some(map(&[("ferrvault.com/credential", "true"), ("team", "shop")])),
        owner_references: Some(vec![
            owner("ConfigMap", "other", "u-other", false),
            owner("FerrVaultSecret", "app", "cr-uid", true),
        ]),
        ..ObjectMeta::default()
    }
}

#[test]
fn a_secrets_metadata_should_keep_exactly_what_the_reconcilers_read() {
    let kept = projected(loaded_secret());
    let expected = ObjectMeta {
        name: Some("app".into()),
        namespace: Some("ns".into()),
        uid: Some("secret-uid".into()),
        resource_version: Some("7".into()),
        deletion_timestamp: Some(Time(jiff::Timestamp::UNIX_EPOCH)),
        annotations: Some(map(&[
            (MANAGED_BY_ANNOTATION, "ferrvault-operator"),
            (CONTENT_HASH_ANNOTATION, "h"),
            (ADOPTABLE_BY_ANNOTATION, "app"),
            (SERVICE_ACCOUNT_ANNOTATIONS[0], ""),
        ])),
        owner_references: Some(vec![owner("FerrVaultSecret", "app", "cr-uid", true)]),
        ..ObjectMeta::default()
    };
    assert_eq!(kept, expected);
    assert!(
        projected(ObjectMeta {
            annotations: Some(map(&[("bulk", "x")])),
            labels: Some(map(&[("team", "shop")])),
            ..ObjectMeta::default()
        }) == ObjectMeta::default(),
        "no empty maps are kept"
    );
}

#[test]
fn a_kept_value_over_the_bound_should_be_dropped() {
    let long = "a".repeat(MAX_KEPT_VALUE + 1);
    let at_bound = "a".repeat(MAX_KEPT_VALUE);
    let kept = projected(ObjectMeta {
        annotations: Some(map(&[
            (ADOPTABLE_BY_ANNOTATION, &long),
            (CONTENT_HASH_ANNOTATION, &at_bound),
        ])),
        owner_references: Some(vec![owner(&long, "app", "cr-uid", true)]),
        ..ObjectMeta::default()
    });
    assert_eq!(
        kept.annotations,
        Some(map(&[(CONTENT_HASH_ANNOTATION, &at_bound)]))
    );
    assert_eq!(kept.owner_references, None, "a controller no reader can match");
}

#[test]
fn every_reader_of_a_secrets_metadata_should_decide_the_same_on_the_projection() {
    let mut variants = vec![loaded_secret()];
    let mut unmanaged = loaded_secret();
    unmanaged.owner_references = Some(vec![owner("Deployment", "web", "u-web", true)]);
    unmanaged.annotations = Some(map(&[("note", "x")]));
    variants.push(unmanaged);
    let mut adoptable = loaded_secret();
    adoptable.owner_references = None;
    adoptable.annotations = Some(map(&[(ADOPTABLE_BY_ANNOTATION, "app"), ("x", "y")]));
    variants.push(adoptable);
    let mut long_adopt = loaded_secret();
    long_adopt.owner_references = None;
    long_adopt.annotations = Some(map(&[(ADOPTABLE_BY_ANNOTATION, &"app".repeat(100))]));
    variants.push(long_adopt);
    variants.push(ObjectMeta {
        name: Some("plain".into()),
        resource_version: Some("1".into()),
        ..ObjectMeta::default()
    });
    let writer = Writer {
        name: "app",
        uid: "cr-uid",
        policy: CreationPolicy::Owner,
    };
    for whole in variants {
        let kept = projected(whole.clone());
        let as_secret = |meta: &ObjectMeta| Secret {
            metadata: meta.clone(),
            ..Secret::default()
        };
        assert_eq!(controlling_secret(&kept), controlling_secret(&whole));
        let own = OwnWrites::default();
        assert_eq!(
            secret_change_matters(&own, None, &kept),
            secret_change_matters(&own, None, &whole)
        );
        assert_eq!(
            judge_target(writer, "app", "Opaque", Some(&as_secret(&kept)), &[]),
            judge_target(writer, "app", "Opaque", Some(&as_secret(&whole)), &[]),
            "{whole:?}"
        );
    }
}

fn ferrvault_secret_with(spec: serde_json::Value, meta: serde_json::Value) -> Lenient<FerrVaultSecret> {
    let mut object = json!({
        "apiVersion": "ferrvault.com/v1alpha1", "kind": "FerrVaultSecret",
        "metadata": { "name": "app", "namespace": "ns", "uid": "u", "resourceVersion": "3", "generation": 2 },
        "spec": spec,
        "status": { "syncedKeys": ["A"] },
    });
    json_patch::merge(&mut object, &json!({ "metadata": meta }));
    serde_json::from_value(object).expect("a FerrVaultSecret")
}

fn small_spec() -> serde_json::Value {
    json!({
        "connectionRef": { "name": "conn" }, "vault": "prod",
        "target": { "name": "out" },
        "selector": { "names": ["A", "B"] },
        "transforms": [{ "type": "prefix", "value": "APP_" }],
        "rolloutRestart": [{ "kind": "Deployment", "name": "web" }],
    })
}

#[test]
fn a_custom_resource_should_keep_no_label_or_annotation_and_its_whole_spec_within_the_budget() {
    let tenant_meta = json!({
        "labels": { "team": "shop", "ferrvault.com/x": "y" },
        "annotations": { "bulk": "x".repeat(250 * 1024), PARTIAL_ANNOTATION: "forged" },
        "ownerReferences": [owner("Thing", "t", "u-t", true)],
        "finalizers": [SECRET_FINALIZER, "example.com/keep"],
        "generateName": "gen-",
    });
    let mut object = ferrvault_secret_with(small_spec(), tenant_meta);
    let before = object.valid().expect("valid").clone();
    ferrvault_secret(&mut object);
    let cr = object.valid().expect("still valid");
    assert_eq!(cr.spec, before.spec, "the whole spec");
    assert_eq!(cr.status, before.status, "the whole status");
    let meta = &cr.metadata;
    assert!(!is_partial(meta), "a tenant's marker is not kept");
    assert_eq!(
        (
            &meta.labels,
            &meta.annotations,
            &meta.owner_references,
            &meta.generate_name
        ),
        (&None, &None, &None, &None)
    );
    assert_eq!(
        meta.finalizers,
        Some(vec![SECRET_FINALIZER.to_owned(), "example.com/keep".to_owned()])
    );
    assert_eq!(
        (
            meta.name.as_deref(),
            meta.uid.as_deref(),
            meta.resource_version.as_deref(),
            meta.generation
        ),
        (Some("app"), Some("u"), Some("3"), Some(2))
    );
}

#[test]
fn a_custom_resource_should_keep_only_its_force_sync_annotation_and_that_bounded() {
    let short = ferrvault_secret_with(
        small_spec(),
        json!({ "annotations": { FORCE_SYNC_ANNOTATION: "2026-12-05T13:00:00Z", "bulk": "x" } }),
    );
    let long = ferrvault_secret_with(
        small_spec(),
        json!({ "annotations": { FORCE_SYNC_ANNOTATION: "y".repeat(250 * 1024) } }),
    );
    for (mut object, expected_len) in [(short, 20), (long, 71)] {
        ferrvault_secret(&mut object);
        let annotations = object
            .meta()
            .annotations
            .clone()
            .expect("the force-sync annotation");
        assert_eq!(annotations.len(), 1, "{annotations:?}");
        assert_eq!(annotations[FORCE_SYNC_ANNOTATION].len(), expected_len);
        assert!(!is_partial(object.meta()));
    }
}

#[test]
fn a_ferrvault_secret_over_the_budget_should_keep_what_the_mappers_read_and_be_partial() {
    let names: Vec<String> = (0..1000).map(|i| format!("{i:0>250}")).collect();
    let mut spec = small_spec();
    spec["selector"]["names"] = json!(names);
    let mut object = ferrvault_secret_with(
        spec,
        json!({ "finalizers": [SECRET_FINALIZER, "example.com/keep"] }),
    );
    let before = object.valid().expect("valid").clone();
    ferrvault_secret(&mut object);
    let cr = object.valid().expect("still valid");
    assert!(is_partial(&cr.metadata));
    assert_eq!(
        (
            &cr.spec.selector,
            cr.spec.transforms.len(),
            cr.spec.rollout_restart.len()
        ),
        (&None, 0, 0)
    );
    assert_eq!(cr.spec.connection_ref, before.spec.connection_ref);
    assert_eq!(cr.spec.target, before.spec.target);
    assert_eq!(cr.status, before.status, "the settled rule reads it");
    assert_eq!(
        cr.metadata.finalizers,
        Some(vec![SECRET_FINALIZER.to_owned()]),
        "ours, for cr_change_matters"
    );
}

#[test]
fn foreign_finalizers_over_the_budget_should_make_any_custom_resource_partial() {
    let many: Vec<String> = (0..100).map(|i| format!("example.com/f-{i:0>60}")).collect();
    let mut finalizers = vec![CONNECTION_FINALIZER.to_owned()];
    finalizers.extend(many);
    let mut c = crate::reconcile::fixtures::connection(1, Some("True"), 1);
    c.metadata.finalizers = Some(finalizers);
    let spec = c.spec.clone();
    let mut object = Lenient::Valid(c);
    ferrvault_connection(&mut object);
    let c = object.valid().expect("valid");
    assert!(is_partial(&c.metadata));
    assert_eq!(c.metadata.finalizers, Some(vec![CONNECTION_FINALIZER.to_owned()]));
    assert_eq!(c.spec, spec, "a connection's spec is kept whole");

    let mut small = Lenient::Valid(crate::reconcile::fixtures::connection(1, None, 1));
    ferrvault_connection(&mut small);
    assert!(!is_partial(small.meta()));
}
