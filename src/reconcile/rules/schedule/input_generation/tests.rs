use super::*;
use crate::{
    api::{ChangeDetection, NamespaceSelection, NamespacedSecretKeyRef, Revocation},
    reconcile::fixtures,
};

#[test]
fn a_connections_input_generation_should_follow_its_digest_as_the_table_says() {
    let spec = fixtures::connection(1, None, 0).spec;
    let digest = connection_input_digest(&spec);
    let other = connection_input_digest(&FerrVaultConnectionSpec {
        url: "http://127.0.0.1:2".into(),
        ..spec.clone()
    });
    // (case, recorded digest and generation, the spec's digest now, metadata.generation, expected)
    let table = [
        (
            "upgrade: nothing recorded",
            (None, None),
            &digest,
            Some(5),
            Some(5),
        ),
        (
            "same digest: resumed",
            (Some(digest.as_str()), Some(1)),
            &digest,
            Some(3),
            Some(1),
        ),
        (
            "another digest: edited",
            (Some(digest.as_str()), Some(1)),
            &other,
            Some(4),
            Some(4),
        ),
        (
            "a digest without its generation",
            (Some(digest.as_str()), None),
            &digest,
            Some(2),
            Some(2),
        ),
        ("never observed", (None, None), &digest, None, None),
    ];
    for (case, recorded, now, generation, expected) in table {
        assert_eq!(input_generation(recorded, now, generation), expected, "{case}");
    }
}

#[test]
fn a_connections_input_digest_should_ignore_suspend_and_change_detection_only() {
    let spec = fixtures::connection(1, None, 0).spec;
    let digest = connection_input_digest(&spec);
    assert_eq!(digest.len(), 64);
    let suspended = FerrVaultConnectionSpec {
        suspend: Some(true),
        ..spec.clone()
    };
    assert_eq!(connection_input_digest(&suspended), digest);
    let versions: ChangeDetection =
        serde_json::from_str(r#"{"mode":"Versions","interval":"30s"}"#).expect("a changeDetection");
    let followed = FerrVaultConnectionSpec {
        change_detection: Some(versions),
        ..spec.clone()
    };
    assert_eq!(connection_input_digest(&followed), digest);
    let edited = FerrVaultConnectionSpec {
        organization: Some("acme".into()),
        ..spec
    };
    assert_ne!(connection_input_digest(&edited), digest);
}

#[test]
fn a_cluster_connections_input_digest_should_ignore_who_may_use_it_suspend_and_change_detection() {
    let token = |namespace: &str| NamespacedSecretKeyRef {
        namespace: namespace.into(),
        name: "token".into(),
        key: "token".into(),
    };
    let base = ClusterFerrVaultConnectionSpec {
        mode: Default::default(),
        url: "http://127.0.0.1:1".into(),
        organization: None,
        token_secret_ref: Some(token("platform")),
        oidc: None,
        ca_bundle_secret_ref: None,
        client_cert_secret_ref: None,
        pin_sha256: None,
        allowed_namespaces: NamespaceSelection::default(),
        revocation: Revocation::default(),
        suspend: None,
        change_detection: None,
    };
    let digest = cluster_input_digest(&base);
    let not_inputs = ClusterFerrVaultConnectionSpec {
        suspend: Some(true),
        allowed_namespaces: NamespaceSelection {
            names: vec!["team-a".into()],
            selector: None,
        },
        revocation: Revocation::Delete,
        change_detection: Some(
            serde_json::from_str(r#"{"mode":"Versions","interval":"30s"}"#).expect("a changeDetection"),
        ),
        ..base.clone()
    };
    assert_eq!(cluster_input_digest(&not_inputs), digest);
    let elsewhere = ClusterFerrVaultConnectionSpec {
        token_secret_ref: Some(token("other")),
        ..base.clone()
    };
    assert_ne!(
        cluster_input_digest(&elsewhere),
        digest,
        "the token's namespace is an input"
    );
    let moved = ClusterFerrVaultConnectionSpec {
        url: "http://127.0.0.1:2".into(),
        ..base
    };
    assert_ne!(cluster_input_digest(&moved), digest);
}
