//! Go-era manifests re-apply (issue 14): every object the Go operator's CRDs admitted (reference
//! §1) passes our CRDs' OpenAPI schema and CEL rules, as the API server would apply them; values
//! the Go operator handled at runtime are reported as conditions instead (tests/operator).
//! Objects the Go CRDs refused are still refused, which also shows the validation here bites.

use ferrvault_operator::api::{FerrVaultConnection, FerrVaultSecret};
use kube::{CustomResourceExt, core::cel::validate_cel};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why the API server would refuse `yaml` (schema errors, then CEL messages); empty if admitted.
pub(crate) fn refusals<K>(yaml: &str) -> Vec<String>
where
    K: CustomResourceExt + serde::Serialize + DeserializeOwned,
{
    let object: Value = serde_norway::from_str(yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    let crd = serde_json::to_value(K::crd()).expect("CRD serializes");
    let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    let validator = jsonschema::validator_for(schema).expect("the CRD schema compiles");
    let mut refusals: Vec<String> = validator
        .iter_errors(&object)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect();
    if refusals.is_empty() {
        // CEL rules run on schema-valid objects only, as in the API server.
        let typed: K =
            serde_json::from_value(object).unwrap_or_else(|e| panic!("admitted but unreadable: {e}"));
        if let Err(errors) = validate_cel(&typed) {
            refusals.extend(errors.iter().map(|e| e.message.clone()));
        }
    }
    refusals
}

fn connection(spec: &str) -> String {
    format!(
        "apiVersion: ferrvault.com/v1alpha1\nkind: FerrVaultConnection\nmetadata: {{name: c, namespace: n}}\nspec:\n{spec}"
    )
}

fn secret(spec: &str) -> String {
    format!(
        "apiVersion: ferrvault.com/v1alpha1\nkind: FerrVaultSecret\nmetadata: {{name: s, namespace: n}}\nspec:\n{spec}"
    )
}

/// The Go sample and e2e manifests (reference §6.2 NOTES, §7), as a GitOps repository keeps them.
const GO_SAMPLES: &str = include_str!("../chart/go_chart/samples.yaml");

#[test]
fn the_go_samples_should_be_admitted() {
    for document in GO_SAMPLES.split("\n---\n") {
        if document.contains("kind: FerrVaultConnection") {
            assert_eq!(
                refusals::<FerrVaultConnection>(document),
                Vec::<String>::new(),
                "{document}"
            );
        } else if document.contains("kind: FerrVaultSecret") {
            assert_eq!(
                refusals::<FerrVaultSecret>(document),
                Vec::<String>::new(),
                "{document}"
            );
        }
    }
    let e2e = secret(
        "  connectionRef: {name: smoke}\n  project: production\n  vault: production\n  selector: {names: [DATABASE_URL]}\n  refreshInterval: 30s\n",
    );
    assert_eq!(refusals::<FerrVaultSecret>(&e2e), Vec::<String>::new());
    let cloud = connection(
        "  mode: cloud\n  url: https://api.ferrlabs.cloud\n  organization: acme\n  tokenSecretRef: {name: fft, key: token}\n",
    );
    assert_eq!(refusals::<FerrVaultConnection>(&cloud), Vec::<String>::new());
}

#[test]
fn every_refresh_interval_the_go_crd_admitted_should_be_admitted() {
    // The Go CRD had no pattern; the reconciler reports a bad one as InvalidRefreshInterval.
    for interval in [
        "1h", "0s", "'0'", "1h30m", "300ms", "1d", "-5m", "forever", "''", "1H", "1 h",
    ] {
        let spec = format!("  connectionRef: {{name: c}}\n  vault: v\n  refreshInterval: {interval}\n");
        assert_eq!(
            refusals::<FerrVaultSecret>(&secret(&spec)),
            Vec::<String>::new(),
            "{interval}"
        );
    }
}

#[test]
fn transforms_without_the_fields_their_type_uses_should_be_admitted() {
    // The Go CRD only required `type`: prefix without value is a no-op, the others fail the sync
    // with TransformError naming the missing field.
    for transform in [
        "{type: prefix}",
        "{type: suffix, value: ''}",
        "{type: rename, from: a}",
        "{type: rename}",
        "{type: jsonExpand}",
        "{type: jsonExpand, key: ''}",
        "{type: base64Decode, keys: []}",
    ] {
        let spec = format!("  connectionRef: {{name: c}}\n  vault: v\n  transforms:\n  - {transform}\n");
        assert_eq!(
            refusals::<FerrVaultSecret>(&secret(&spec)),
            Vec::<String>::new(),
            "{transform}"
        );
    }
}

#[test]
fn empty_names_and_credentials_the_go_crd_admitted_should_be_admitted() {
    for spec in [
        "  connectionRef: {name: ''}\n  vault: v\n",
        "  connectionRef: {name: c}\n  vault: v\n  rolloutRestart:\n  - {kind: Deployment, name: ''}\n",
        "  connectionRef: {name: c}\n  vault: v\n  target: {name: ''}\n  selector: {names: ['']}\n",
    ] {
        assert_eq!(
            refusals::<FerrVaultSecret>(&secret(spec)),
            Vec::<String>::new(),
            "{spec}"
        );
    }
    for spec in [
        "  url: https://x\n  tokenSecretRef: {name: '', key: ''}\n",
        // Neither or both credentials: reported TokenUnreadable, as the Go operator did.
        "  url: https://x\n",
        "  url: https://x\n  tokenSecretRef: {name: t, key: token}\n  oidc: {clusterID: 0b6f7e2c-1d2e-4f00-8a9b-0123456789ab}\n",
    ] {
        assert_eq!(
            refusals::<FerrVaultConnection>(&connection(spec)),
            Vec::<String>::new(),
            "{spec}"
        );
    }
}

#[test]
fn what_the_go_crd_refused_should_still_be_refused() {
    for (spec, why) in [
        ("  vault: v\n", "connectionRef"),
        ("  connectionRef: {name: c}\n", "vault"),
        ("  connectionRef: {name: c}\n  vault: ''\n", "/spec/vault"),
        (
            "  connectionRef: {name: c}\n  vault: v\n  project: ''\n",
            "/spec/project",
        ),
        (
            "  connectionRef: {name: c}\n  vault: v\n  transforms:\n  - {type: rot13}\n",
            "/spec/transforms/0/type",
        ),
        (
            "  connectionRef: {name: c}\n  vault: v\n  transforms:\n  - {value: P_}\n",
            "type",
        ),
        (
            "  connectionRef: {name: c}\n  vault: v\n  rolloutRestart:\n  - {kind: Job, name: j}\n",
            "/spec/rolloutRestart/0/kind",
        ),
        (
            "  connectionRef: {name: c}\n  vault: v\n  rolloutRestart:\n  - {kind: Deployment}\n",
            "name",
        ),
    ] {
        let refused = refusals::<FerrVaultSecret>(&secret(spec));
        assert!(refused.iter().any(|r| r.contains(why)), "{spec}: {refused:?}");
    }
    for (spec, why) in [
        ("  tokenSecretRef: {name: t, key: token}\n", "url"),
        (
            "  url: api.ferrvault.com\n  tokenSecretRef: {name: t, key: token}\n",
            "/spec/url",
        ),
        (
            "  url: https://x\n  mode: saas\n  tokenSecretRef: {name: t, key: token}\n",
            "/spec/mode",
        ),
        ("  url: https://x\n  tokenSecretRef: {name: t}\n", "key"),
        (
            "  url: https://x\n  mode: cloud\n  tokenSecretRef: {name: t, key: token}\n",
            "organization is required when mode is cloud",
        ),
    ] {
        let refused = refusals::<FerrVaultConnection>(&connection(spec));
        assert!(refused.iter().any(|r| r.contains(why)), "{spec}: {refused:?}");
    }
}
