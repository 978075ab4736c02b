//! The CRD schemas enforce what the reference and issue 5 require: patterns (checked against
//! sample good and bad values), enums, defaults, CEL rules, map-list conditions, printer columns.

use ferrvault_operator::api::{FerrVaultConnection, FerrVaultSecret};
use kube::CustomResourceExt;
use regex::Regex;
use serde_json::{Value, json};

fn crd<K: CustomResourceExt>() -> Value {
    serde_json::to_value(K::crd()).expect("CRD serializes")
}

fn at<'a>(value: &'a Value, pointer: &str) -> &'a Value {
    value
        .pointer(pointer)
        .unwrap_or_else(|| panic!("schema has no {pointer}"))
}

fn connection_spec() -> Value {
    at(
        &crd::<FerrVaultConnection>(),
        "/spec/versions/0/schema/openAPIV3Schema/properties/spec",
    )
    .clone()
}

fn secret_schema() -> Value {
    at(
        &crd::<FerrVaultSecret>(),
        "/spec/versions/0/schema/openAPIV3Schema",
    )
    .clone()
}

/// The pattern at `pointer`, compiled as the API server would apply it.
fn pattern(schema: &Value, pointer: &str) -> Regex {
    let text = at(schema, &format!("{pointer}/pattern"))
        .as_str()
        .expect("pattern is a string");
    Regex::new(text).expect("pattern compiles")
}

fn assert_pattern(regex: &Regex, good: &[&str], bad: &[&str]) {
    for value in good {
        assert!(regex.is_match(value), "{regex} should accept {value:?}");
    }
    for value in bad {
        assert!(!regex.is_match(value), "{regex} should refuse {value:?}");
    }
}

/// `(rule, message)` pairs of the `x-kubernetes-validations` at `pointer`.
fn cel_rules(schema: &Value, pointer: &str) -> Vec<(String, String)> {
    at(schema, &format!("{pointer}/x-kubernetes-validations"))
        .as_array()
        .expect("validations are a list")
        .iter()
        .map(|rule| {
            (
                rule["rule"].as_str().unwrap().to_owned(),
                rule["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn column_names(crd: &Value) -> Vec<String> {
    at(crd, "/spec/versions/0/additionalPrinterColumns")
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn both_crds_should_be_namespaced_v1alpha1_with_short_names_and_a_status_subresource() {
    for (crd, plural, short) in [
        (crd::<FerrVaultConnection>(), "ferrvaultconnections", "fvc"),
        (crd::<FerrVaultSecret>(), "ferrvaultsecrets", "fvs"),
    ] {
        assert_eq!(crd["metadata"]["name"], format!("{plural}.ferrvault.com"));
        assert_eq!(crd["spec"]["scope"], "Namespaced");
        assert_eq!(crd["spec"]["names"]["shortNames"], json!([short]));
        assert_eq!(crd["spec"]["versions"][0]["name"], "v1alpha1");
        assert_eq!(crd["spec"]["versions"][0]["subresources"], json!({"status": {}}));
    }
}

/// `(name, priority)` of each printer column.
fn columns(crd: &Value) -> Vec<(String, i64)> {
    at(crd, "/spec/versions/0/additionalPrinterColumns")
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["priority"].as_i64().unwrap_or(0),
            )
        })
        .collect()
}

/// What plain `kubectl get` shows (priority 0) and what `-o wide` adds.
fn default_and_wide(crd: &Value) -> (Vec<String>, Vec<String>) {
    let (shown, wide): (Vec<_>, Vec<_>) = columns(crd).into_iter().partition(|(_, p)| *p == 0);
    (
        shown.into_iter().map(|(n, _)| n).collect(),
        wide.into_iter().map(|(n, _)| n).collect(),
    )
}

#[test]
fn kubectl_get_should_show_the_go_crds_columns_in_their_order_and_ours_only_wide() {
    assert_eq!(
        default_and_wide(&crd::<FerrVaultConnection>()),
        (
            vec!["URL".into(), "Org".into(), "Ready".into(), "Age".into()],
            vec!["Mode".into(), "Reason".into()]
        )
    );
    assert_eq!(
        default_and_wide(&crd::<FerrVaultSecret>()),
        (
            vec![
                "Project".into(),
                "Vault".into(),
                "Ready".into(),
                "LastSynced".into(),
                "Age".into()
            ],
            vec!["Reason".into(), "Rollout".into()]
        )
    );
    assert_eq!(column_names(&crd::<FerrVaultConnection>())[1], "Org");
    let reason = &crd::<FerrVaultSecret>()["spec"]["versions"][0]["additionalPrinterColumns"][3];
    assert_eq!(
        reason["jsonPath"],
        r#".status.conditions[?(@.type=="Ready")].reason"#
    );
}

#[test]
fn connection_url_should_need_an_http_or_https_scheme() {
    let spec = connection_spec();
    assert_eq!(spec["required"], json!(["url"]));
    assert_pattern(
        &pattern(&spec, "/properties/url"),
        &["https://api.ferrvault.com", "http://127.0.0.1:8080/base"],
        &[
            "api.ferrvault.com",
            "ftp://x",
            "https:/x",
            " https://x",
            "file:///etc",
        ],
    );
}

#[test]
fn connection_mode_should_be_an_enum_defaulting_to_ferrvault() {
    let mode = &connection_spec()["properties"]["mode"];
    assert_eq!(mode["enum"], json!(["ferrvault", "cloud"]));
    assert_eq!(mode["default"], "ferrvault");
}

#[test]
fn connection_should_require_an_organization_in_cloud_mode_as_the_go_crd_did() {
    // Both or neither credential is admitted as in the Go CRD and reported TokenUnreadable.
    assert_eq!(
        cel_rules(&connection_spec(), ""),
        [
            (
                "self.mode != 'cloud' || (has(self.organization) && size(self.organization) > 0)".to_owned(),
                "organization is required when mode is cloud".to_owned()
            ),
            (
                ferrvault_operator::api::client_cert::PINS_RULE.to_owned(),
                ferrvault_operator::api::client_cert::PINS_MESSAGE.to_owned()
            )
        ]
    );
}

#[test]
fn oidc_should_need_no_field_and_a_go_era_cluster_id_should_be_a_36_character_uuid_like_string() {
    let spec = connection_spec();
    assert_eq!(
        spec["properties"]["oidc"].get("required"),
        None,
        "`oidc: {{}}` opts in to the operator's identity"
    );
    assert_pattern(
        &pattern(&spec, "/properties/oidc/properties/clusterID"),
        &[
            "0b6f7e2c-1d2e-4f00-8a9b-0123456789ab",
            "0B6F7E2C-1D2E-4F00-8A9B-0123456789AB",
        ],
        &[
            "0b6f7e2c",
            "0b6f7e2c-1d2e-4f00-8a9b-0123456789abc",
            "zb6f7e2c-1d2e-4f00-8a9b-0123456789ab",
        ],
    );
}

#[test]
fn connection_should_accept_an_optional_ca_bundle_secret_key_reference() {
    let ca = &connection_spec()["properties"]["caBundleSecretRef"];
    assert_eq!(ca["type"], "object");
    assert_eq!(ca["required"], json!(["key", "name"]));
    assert!(
        !connection_spec()["required"]
            .as_array()
            .unwrap()
            .contains(&json!("caBundleSecretRef"))
    );
}

#[test]
fn secret_spec_should_require_a_connection_and_a_non_empty_vault() {
    let spec = &secret_schema()["properties"]["spec"];
    assert_eq!(spec["required"], json!(["connectionRef", "vault"]));
    assert_eq!(spec["properties"]["vault"]["minLength"], 1);
    assert_eq!(spec["properties"]["project"]["minLength"], 1);
    assert_eq!(spec["properties"]["connectionRef"]["required"], json!(["name"]));
    assert!(
        spec["properties"]["connectionRef"]["properties"]["name"]
            .get("minLength")
            .is_none(),
        "the Go CRD admitted an empty name (reported ConnectionNotFound)"
    );
}

#[test]
fn refresh_interval_should_default_to_one_hour_and_admit_any_string_like_the_go_crd() {
    let schema = secret_schema();
    let interval = at(&schema, "/properties/spec/properties/refreshInterval");
    assert_eq!(interval["default"], "1h");
    assert_eq!(interval["type"], "string");
    assert!(
        interval.get("pattern").is_none(),
        "reported as InvalidRefreshInterval instead: {interval}"
    );
}

#[test]
fn transforms_should_have_a_type_enum_and_no_rule_the_go_crd_lacked() {
    let schema = secret_schema();
    let item = "/properties/spec/properties/transforms/items";
    assert_eq!(at(&schema, item)["required"], json!(["type"]));
    assert_eq!(
        at(&schema, item)["properties"]["type"]["enum"],
        json!(["prefix", "suffix", "rename", "base64Decode", "jsonExpand"])
    );
    assert!(
        at(&schema, item).get("x-kubernetes-validations").is_none(),
        "missing fields are reported as TransformError"
    );
}

#[test]
fn rollout_targets_should_be_deployments_statefulsets_or_daemonsets() {
    let schema = secret_schema();
    let item = at(&schema, "/properties/spec/properties/rolloutRestart/items");
    assert_eq!(item["required"], json!(["kind", "name"]));
    assert_eq!(
        item["properties"]["kind"]["enum"],
        json!(["Deployment", "StatefulSet", "DaemonSet"])
    );
}

#[test]
fn conditions_should_be_a_map_list_keyed_by_type_with_observed_generation() {
    for crd in [crd::<FerrVaultConnection>(), crd::<FerrVaultSecret>()] {
        let conditions = at(
            &crd,
            "/spec/versions/0/schema/openAPIV3Schema/properties/status/properties/conditions",
        );
        assert_eq!(conditions["x-kubernetes-list-type"], "map");
        assert_eq!(conditions["x-kubernetes-list-map-keys"], json!(["type"]));
        let item = &conditions["items"];
        assert_eq!(
            item["properties"]["status"]["enum"],
            json!(["True", "False", "Unknown"])
        );
        assert_eq!(item["properties"]["observedGeneration"]["type"], "integer");
        assert_eq!(
            item["required"],
            json!(["lastTransitionTime", "message", "reason", "status", "type"])
        );
    }
}

#[test]
fn secret_status_should_carry_every_reference_field() {
    let schema = secret_schema();
    let status = at(&schema, "/properties/status/properties");
    for field in [
        "conditions",
        "lastSyncedAt",
        "lastRolloutHash",
        "syncedKeys",
        "missingKeys",
        "observedGeneration",
    ] {
        assert!(status.get(field).is_some(), "status.{field} missing");
    }
    assert_eq!(status["lastSyncedAt"]["format"], "date-time");
    let connection = crd::<FerrVaultConnection>();
    let checked = at(
        &connection,
        "/spec/versions/0/schema/openAPIV3Schema/properties/status/properties/lastCheckedAt",
    );
    assert_eq!(checked["format"], "date-time");
}
