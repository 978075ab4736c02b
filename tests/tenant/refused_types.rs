//! Targets Kubernetes turns into credentials. `spec.target.type`
//! `kubernetes.io/service-account-token` (the token controller would mint a long-lived token into
//! it) or `bootstrap.kubernetes.io/token` (the API server accepts it as a bearer token) is refused
//! at admission by the CRD's CEL rule and again by the reconciler, for an object that bypassed
//! admission. An existing Secret Kubernetes acts on (by those types, or by a ServiceAccount
//! annotation on any type) is never written, even when it carries the opt-in.
//!
//! Admission is the API server's: the tenant's create is refused (422) by the simulator evaluating
//! the CRD's CEL rule, as a real server does.

use ferrvault_operator::api::{
    REFUSED_TARGET_TYPE_MESSAGE, REFUSED_TARGET_TYPES, names::ADOPTABLE_BY_ANNOTATION,
};
use serde_json::{Value, json};

use crate::harness::{
    ATTACKER, Answer, Launch, Listener, PLAYGROUND_VAULT, World, attacker_connection, attacker_syncs, finish,
    not_the_attackers, victim_syncs,
};

/// What the attacker's FerrVault reveals.
const PLANTED: &str = "planted-by-the-attacker";

/// A FerrVaultSecret spec through the attacker's hostile connection into a Secret of `type_`.
fn typed_target(type_: &str) -> Value {
    json!({
        "connectionRef": { "name": "hostile" },
        "vault": PLAYGROUND_VAULT,
        "target": { "type": type_ },
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_credential_target_type_should_be_refused_at_admission_and_by_the_reconciler() {
    let world = World::start().await;
    let vault = Listener::start(Answer::vault(&[("token", PLANTED)])).await;
    let operator = Launch::new().insecure_http().start(&world);
    let attacker = world.attacker();
    attacker_connection(&world, "hostile", vault.url()).await;

    for (name, type_) in ["sa-token", "bootstrap"].into_iter().zip(REFUSED_TARGET_TYPES) {
        let spec = typed_target(type_);
        let refusal = attacker
            .try_ferrvault_secret(name, spec.clone())
            .await
            .expect_err("refused at admission");
        assert!(
            matches!(&refusal, kube::Error::Api(status) if status.code == 422
                && status.message.contains(REFUSED_TARGET_TYPE_MESSAGE)),
            "{type_} refused at admission by the CRD's rule: {refusal}"
        );
        // An object that bypassed admission: stored straight, without the CEL rule.
        world.store_unadmitted(ATTACKER, name, spec);
        let refused = attacker.wait_secret(name, "TargetTypeRefused").await;
        assert_eq!(
            (refused.status.as_str(), refused.message.as_str()),
            (
                "False",
                format!(
                    "target type {type_} is refused: Kubernetes turns Secrets of this type into cluster \
                     credentials; {name} not written"
                )
                .as_str()
            )
        );
        assert_eq!(attacker.target(name).await, None, "no {type_} Secret created");
    }
    assert_eq!(vault.reveals(), 0, "a refused target costs no FerrVault request");

    // Positive control: a type Kubernetes does not act on passes admission and syncs.
    let custom = typed_target("example.com/app-config");
    attacker.ferrvault_secret("custom", custom).await;
    attacker.wait_secret("custom", "Synced").await;
    let written = world.secret(ATTACKER, "custom").await;
    assert_eq!(written.type_.as_deref(), Some("example.com/app-config"));
    victim_syncs(&world, &world.fv.url()).await;
    vault.assert_nothing_of("the attacker's FerrVault", &not_the_attackers());
    finish(&world, &operator, &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_kubernetes_acts_on_should_never_be_written_even_when_handed_over() {
    let world = World::start().await;
    let vault = Listener::start(Answer::vault(&[("token", PLANTED)])).await;
    let operator = Launch::new().insecure_http().start(&world);
    let attacker = world.attacker();
    attacker_connection(&world, "hostile", vault.url()).await;
    let account_name = ("kubernetes.io/service-account.name", "default");
    // Each Secret, the marker Kubernetes acts on, and the opt-in to a FerrVaultSecret of its name.
    let cases = [
        (
            "minted",
            "kubernetes.io/service-account-token",
            account_name,
            "kubernetes.io/service-account-token",
        ),
        (
            "bootstrap-token-abcdef",
            "bootstrap.kubernetes.io/token",
            ("description", "a node join token"),
            "bootstrap.kubernetes.io/token",
        ),
        (
            "named",
            "Opaque",
            account_name,
            "kubernetes.io/service-account.name",
        ),
        (
            "legacy",
            "Opaque",
            (
                "kubernetes.io/service-account.uid",
                "3f1c0c54-0000-4000-8000-000000000001",
            ),
            "kubernetes.io/service-account.uid",
        ),
    ];
    let mut victims = Vec::new();
    for (name, type_, (key, value), _) in cases {
        let secret = world
            .others_secret(
                ATTACKER,
                json!({
                    "metadata": {
                        "name": name,
                        "annotations": { key: value, ADOPTABLE_BY_ANNOTATION: name },
                    },
                    "type": type_,
                    "stringData": { "token": "minted-by-kubernetes" },
                }),
            )
            .await;
        victims.push(secret);
        attacker
            .ferrvault_secret(
                name,
                json!({ "connectionRef": { "name": "hostile" }, "vault": PLAYGROUND_VAULT }),
            )
            .await;
    }
    for (name, _, _, marker) in cases {
        let refused = attacker.wait_secret(name, "TargetTypeRefused").await;
        assert_eq!(
            (refused.status.as_str(), refused.message.as_str()),
            (
                "False",
                format!(
                    "Secret {name} carries {marker}, which Kubernetes acts on (ServiceAccount or bootstrap \
                     tokens): never written"
                )
                .as_str()
            )
        );
    }
    assert_eq!(vault.reveals(), 0, "a refused target costs no FerrVault request");

    // Positive control: the same hostile FerrVault writes a Secret Kubernetes ignores.
    let own = attacker_syncs(&world, "hostile", "mine").await;
    assert_eq!(own["token"], PLANTED.as_bytes());
    victim_syncs(&world, &world.fv.url()).await;
    for victim in &victims {
        world.assert_unchanged(victim).await;
    }
    vault.assert_nothing_of("the attacker's FerrVault", &not_the_attackers());
    finish(&world, &operator, &[]).await;
}
