use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::*;
use crate::api::{FerrVaultConnectionSpec, SecretKeyRef};

const ME: Writer<'static> = Writer {
    name: "app",
    uid: "uid-app",
    policy: CreationPolicy::Owner,
};

fn controller(kind: &str, name: &str, uid: &str) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: kind.into(),
        name: name.into(),
        uid: uid.into(),
        controller: Some(true),
        block_owner_deletion: None,
    }
}

fn secret(owners: Vec<OwnerReference>, annotations: &[(&str, &str)], type_: Option<&str>) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some("target".into()),
            owner_references: Some(owners),
            annotations: Some(
                annotations
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect::<BTreeMap<_, _>>(),
            ),
            ..ObjectMeta::default()
        },
        type_: type_.map(str::to_owned),
        ..Secret::default()
    }
}

fn judge(existing: Option<&Secret>) -> Result<TargetAccess, TargetRefusal> {
    judge_target(ME, "target", "Opaque", existing, &[])
}

#[test]
fn a_missing_target_should_be_created() {
    assert_eq!(judge(None), Ok(TargetAccess::Create));
}

#[test]
fn a_target_controlled_by_this_ferrvault_secret_should_be_written() {
    let ours = secret(vec![controller("FerrVaultSecret", "app", "uid-app")], &[], None);
    assert_eq!(judge(Some(&ours)), Ok(TargetAccess::Owned));
}

#[test]
fn a_target_controlled_by_anything_else_should_be_refused() {
    for other in [
        controller("Deployment", "web", "uid-web"),
        // Same kind and name, another UID: a deleted and recreated FerrVaultSecret, or a forgery.
        controller("FerrVaultSecret", "app", "uid-old"),
    ] {
        let refused = judge(Some(&secret(
            vec![other.clone()],
            &[(ADOPTABLE_BY_ANNOTATION, "app")],
            None,
        )));
        assert_eq!(
            refused,
            Err(TargetRefusal::ControlledByOther {
                kind: other.kind.clone(),
                name: other.name.clone()
            }),
            "the opt-in never overrides a controller"
        );
    }
}

#[test]
fn an_unowned_target_should_be_taken_over_only_when_it_names_this_ferrvault_secret() {
    let plain = secret(vec![], &[], None);
    assert_eq!(judge(Some(&plain)), Err(TargetRefusal::NotOwned));
    let for_another = secret(vec![], &[(ADOPTABLE_BY_ANNOTATION, "other")], None);
    assert_eq!(judge(Some(&for_another)), Err(TargetRefusal::NotOwned));
    // A non-controller owner does not control it: the opt-in decides.
    let mut opted_in = secret(vec![], &[(ADOPTABLE_BY_ANNOTATION, "app")], None);
    assert_eq!(judge(Some(&opted_in)), Ok(TargetAccess::Adopt));
    opted_in.metadata.owner_references = Some(vec![OwnerReference {
        controller: None,
        ..controller("ConfigMap", "c", "uid-c")
    }]);
    assert_eq!(judge(Some(&opted_in)), Ok(TargetAccess::Adopt));
}

#[test]
fn refused_types_should_never_be_created_nor_written() {
    for type_ in REFUSED_TARGET_TYPES {
        assert_eq!(
            judge_target(ME, "target", type_, None, &[]),
            Err(TargetRefusal::RefusedType {
                type_: type_.to_owned()
            })
        );
        let ours = secret(
            vec![controller("FerrVaultSecret", "app", "uid-app")],
            &[],
            Some(type_),
        );
        assert_eq!(
            judge(Some(&ours)),
            Err(TargetRefusal::KubernetesManaged {
                marker: type_.to_owned()
            })
        );
    }
}

#[test]
fn a_service_account_annotation_should_refuse_the_secret_whatever_its_type() {
    for annotation in SERVICE_ACCOUNT_ANNOTATIONS {
        let marked = secret(
            vec![],
            &[(annotation, "default"), (ADOPTABLE_BY_ANNOTATION, "app")],
            Some("Opaque"),
        );
        assert_eq!(
            judge(Some(&marked)),
            Err(TargetRefusal::KubernetesManaged {
                marker: annotation.to_owned()
            })
        );
    }
}

#[test]
fn a_secret_a_connection_reads_should_be_refused_even_when_ours_or_absent() {
    let connection = FerrVaultConnection::new(
        "conn",
        FerrVaultConnectionSpec {
            mode: Default::default(),
            url: "https://x".into(),
            organization: None,
            token_secret_ref: Some(SecretKeyRef {
                name: "sat".into(),
                key: "token".into(),
            }),
            oidc: None,
            ca_bundle_secret_ref: Some(SecretKeyRef {
                name: "ca".into(),
                key: "ca.crt".into(),
            }),
            client_cert_secret_ref: None,
            pin_sha256: None,
            suspend: None,
            change_detection: None,
        },
    );
    let used = connection_secrets(&connection);
    assert_eq!(used.len(), 2);
    let ours = secret(vec![controller("FerrVaultSecret", "app", "uid-app")], &[], None);
    for (name, role) in [
        ("sat", ConnectionSecretRole::Token),
        ("ca", ConnectionSecretRole::CaBundle),
    ] {
        for existing in [None, Some(&ours)] {
            let refused = judge_target(ME, name, "Opaque", existing, &used);
            assert_eq!(
                refused,
                Err(TargetRefusal::ConnectionSecret(ConnectionSecret {
                    connection: "conn".into(),
                    secret: name.into(),
                    role
                }))
            );
        }
    }
    assert_eq!(
        judge_target(ME, "target", "Opaque", Some(&ours), &used),
        Ok(TargetAccess::Owned)
    );
}

#[test]
fn each_refusal_should_have_its_own_reason() {
    let reasons = [
        TargetRefusal::RefusedType { type_: "t".into() }.reason(),
        TargetRefusal::ConnectionSecret(ConnectionSecret {
            connection: "c".into(),
            secret: "s".into(),
            role: ConnectionSecretRole::Token,
        })
        .reason(),
        TargetRefusal::ControlledByOther {
            kind: "k".into(),
            name: "n".into(),
        }
        .reason(),
        TargetRefusal::NotOwned.reason(),
    ];
    let distinct: std::collections::BTreeSet<_> = reasons.iter().collect();
    assert_eq!(distinct.len(), reasons.len(), "{reasons:?}");
    assert_eq!(
        TargetRefusal::KubernetesManaged { marker: "m".into() }.reason(),
        Reason::TargetTypeRefused
    );
}

#[test]
fn a_target_should_count_as_created_for_this_name_only_when_ours_and_owned_by_that_name_or_nobody() {
    let ours = [(MANAGED_BY_ANNOTATION, MANAGED_BY_VALUE)];
    let fvs = |name: &str| OwnerReference {
        api_version: "ferrvault.com/v1alpha1".into(),
        ..controller("FerrVaultSecret", name, "uid-old")
    };
    let cases = [
        (
            secret(vec![fvs("app")], &ours, None),
            true,
            "a deleted FerrVaultSecret of this name",
        ),
        (
            secret(vec![], &ours, None),
            true,
            "orphaned by its deleted FerrVaultSecret",
        ),
        (
            secret(vec![fvs("other")], &ours, None),
            false,
            "another FerrVaultSecret's",
        ),
        (
            secret(vec![controller("Deployment", "app", "u")], &ours, None),
            false,
            "another kind's",
        ),
        (secret(vec![], &[], None), false, "not created by this operator"),
        (
            secret(vec![], &[(MANAGED_BY_ANNOTATION, "helm")], None),
            false,
            "managed by another tool",
        ),
    ];
    for (existing, expected, what) in cases {
        assert_eq!(created_for_same_name(ME, &existing), expected, "{what}");
    }
}

#[test]
fn creation_policies_should_decide_what_may_be_created_and_written() {
    use CreationPolicy::{Merge, Orphan, Owner};
    let ours = secret(vec![controller("FerrVaultSecret", "app", "uid-app")], &[], None);
    let opted_in = secret(vec![], &[(ADOPTABLE_BY_ANNOTATION, "app")], None);
    let plain = secret(vec![], &[], None);
    let deployment = controller("Deployment", "db", "uid-db");
    let controlled_opted_in = secret(vec![deployment], &[(ADOPTABLE_BY_ANNOTATION, "app")], None);
    // (policy, existing, expected)
    let cases = [
        (Owner, None, Ok(TargetAccess::Create)),
        (Orphan, None, Ok(TargetAccess::Create)),
        (Merge, None, Err(TargetRefusal::MergeMissing)),
        (Merge, Some(&ours), Ok(TargetAccess::Owned)),
        (Merge, Some(&opted_in), Ok(TargetAccess::Adopt)),
        (Orphan, Some(&opted_in), Ok(TargetAccess::Adopt)),
        (Merge, Some(&plain), Err(TargetRefusal::NotOwned)),
        (
            Merge,
            Some(&controlled_opted_in),
            Err(TargetRefusal::ControlledByOther {
                kind: "Deployment".into(),
                name: "db".into(),
            }),
        ),
    ];
    for (policy, existing, expected) in cases {
        let writer = Writer { policy, ..ME };
        assert_eq!(
            judge_target(writer, "target", "Opaque", existing, &[]),
            expected,
            "{policy:?} over {:?}",
            existing.map(|s| &s.metadata)
        );
    }
}
