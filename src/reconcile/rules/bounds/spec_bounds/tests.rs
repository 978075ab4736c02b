use serde_json::{Value, json};

use super::*;

/// A FerrVaultSecret spec using every bounded field once, each well within its bound.
fn secret_spec() -> Value {
    json!({
        "connectionRef": { "name": "c" },
        "project": "p",
        "vault": "v",
        "selector": { "names": ["A"] },
        "target": {
            "name": "t",
            "type": "Opaque",
            "metadata": { "labels": { "team": "a" }, "annotations": { "note": "n" } },
            "template": {
                "data": { "DSN": "${A}" },
                "dockerConfig": { "server": "s", "usernameKey": "u", "passwordKey": "p", "emailKey": "e" },
            },
        },
        "refreshInterval": "1h",
        "rolloutRestart": [{ "kind": "Deployment", "name": "w" }],
        "transforms": [{ "type": "prefix", "value": "P", "from": "a", "to": "b", "key": "k", "keys": ["K"] }],
    })
}

/// A FerrVaultConnection spec using every bounded field once, each well within its bound.
fn connection_spec() -> Value {
    json!({
        "url": "https://x",
        "organization": "o",
        "tokenSecretRef": { "name": "t", "key": "token" },
        "oidc": { "clusterID": "0b6f7e2c-1d2e-4f00-8a9b-0123456789ab", "tokenPath": "/p", "audience": "a" },
        "caBundleSecretRef": { "name": "ca", "key": "ca.crt" },
    })
}

fn secret_problem(spec: Value) -> Option<String> {
    let spec: FerrVaultSecretSpec = serde_json::from_value(spec).expect("a FerrVaultSecret spec");
    secret_spec_problem(&spec).err().map(|p| p.to_string())
}

fn connection_problem(spec: Value) -> Option<String> {
    let spec: FerrVaultConnectionSpec = serde_json::from_value(spec).expect("a FerrVaultConnection spec");
    connection_spec_problem(&spec).err().map(|p| p.to_string())
}

/// `spec` with the value at JSON `pointer` replaced.
fn with(mut spec: Value, pointer: &str, value: Value) -> Value {
    *spec.pointer_mut(pointer).unwrap_or_else(|| panic!("{pointer}")) = value;
    spec
}

/// `len` characters of text valid at `path` (a URL, a cluster ID, or anything).
fn text_of(path: &str, len: usize) -> String {
    match path {
        "spec.url" => format!("https://{}", "a".repeat(len - "https://".len())),
        "spec.oidc.clusterID" => "0".repeat(len),
        _ => "a".repeat(len),
    }
}

/// Every string bound: (JSON pointer in the spec, path in the message, bound).
const SECRET_TEXTS: [(&str, &str, usize); 20] = [
    ("/connectionRef/name", "spec.connectionRef.name", MAX_NAME),
    ("/project", "spec.project", MAX_IDENTIFIER),
    ("/vault", "spec.vault", MAX_IDENTIFIER),
    ("/selector/names/0", "spec.selector.names[0]", MAX_SECRET_KEY),
    ("/target/name", "spec.target.name", MAX_NAME),
    ("/target/type", "spec.target.type", MAX_IDENTIFIER),
    (
        "/target/metadata/labels/team",
        "spec.target.metadata.labels[team]",
        MAX_LABEL_VALUE,
    ),
    (
        "/target/metadata/annotations/note",
        "spec.target.metadata.annotations[note]",
        MAX_TARGET_ANNOTATION_VALUE,
    ),
    (
        "/target/template/data/DSN",
        "spec.target.template.data[\"DSN\"]",
        MAX_TEMPLATE_TEXT,
    ),
    (
        "/target/template/dockerConfig/server",
        "spec.target.template.dockerConfig.server",
        MAX_URL,
    ),
    (
        "/target/template/dockerConfig/usernameKey",
        "spec.target.template.dockerConfig.usernameKey",
        MAX_SECRET_KEY,
    ),
    (
        "/target/template/dockerConfig/passwordKey",
        "spec.target.template.dockerConfig.passwordKey",
        MAX_SECRET_KEY,
    ),
    (
        "/target/template/dockerConfig/emailKey",
        "spec.target.template.dockerConfig.emailKey",
        MAX_SECRET_KEY,
    ),
    ("/refreshInterval", "spec.refreshInterval", MAX_DURATION),
    ("/rolloutRestart/0/name", "spec.rolloutRestart[0].name", MAX_NAME),
    ("/transforms/0/value", "spec.transforms[0].value", MAX_SECRET_KEY),
    ("/transforms/0/from", "spec.transforms[0].from", MAX_SECRET_KEY),
    ("/transforms/0/to", "spec.transforms[0].to", MAX_SECRET_KEY),
    ("/transforms/0/key", "spec.transforms[0].key", MAX_SECRET_KEY),
    (
        "/transforms/0/keys/0",
        "spec.transforms[0].keys[0]",
        MAX_SECRET_KEY,
    ),
];

const CONNECTION_TEXTS: [(&str, &str, usize); 9] = [
    ("/url", "spec.url", MAX_URL),
    ("/organization", "spec.organization", MAX_IDENTIFIER),
    ("/tokenSecretRef/name", "spec.tokenSecretRef.name", MAX_NAME),
    ("/tokenSecretRef/key", "spec.tokenSecretRef.key", MAX_SECRET_KEY),
    ("/oidc/clusterID", "spec.oidc.clusterID", MAX_CLUSTER_ID),
    ("/oidc/tokenPath", "spec.oidc.tokenPath", MAX_PATH),
    ("/oidc/audience", "spec.oidc.audience", MAX_URL),
    ("/caBundleSecretRef/name", "spec.caBundleSecretRef.name", MAX_NAME),
    (
        "/caBundleSecretRef/key",
        "spec.caBundleSecretRef.key",
        MAX_SECRET_KEY,
    ),
];

/// Every list bound: (JSON pointer, path in the message, bound, one valid item).
fn secret_lists() -> [(&'static str, &'static str, usize, Value); 4] {
    [
        (
            "/selector/names",
            "spec.selector.names",
            MAX_KEY_NAMES,
            json!("A"),
        ),
        (
            "/rolloutRestart",
            "spec.rolloutRestart",
            MAX_ROLLOUT_TARGETS,
            json!({ "kind": "Deployment", "name": "w" }),
        ),
        (
            "/transforms",
            "spec.transforms",
            MAX_TRANSFORMS,
            json!({ "type": "prefix", "value": "P" }),
        ),
        (
            "/transforms/0/keys",
            "spec.transforms[0].keys",
            MAX_KEY_NAMES,
            json!("K"),
        ),
    ]
}

fn too_long(path: &str, max: usize) -> Option<String> {
    Some(format!(
        "{path}: longer than {max} characters (the CRD's maxLength)"
    ))
}

#[test]
fn specs_within_every_bound_should_pass() {
    assert_eq!(secret_problem(secret_spec()), None);
    assert_eq!(connection_problem(connection_spec()), None);
}

#[test]
fn every_secret_string_should_be_admitted_at_its_bound_and_refused_one_character_over() {
    for (pointer, path, max) in SECRET_TEXTS {
        let at = with(secret_spec(), pointer, json!(text_of(path, max)));
        assert_eq!(secret_problem(at), None, "{path} at {max}");
        let over = with(secret_spec(), pointer, json!(text_of(path, max + 1)));
        assert_eq!(secret_problem(over), too_long(path, max), "{path}");
    }
}

#[test]
fn every_connection_string_should_be_admitted_at_its_bound_and_refused_one_character_over() {
    for (pointer, path, max) in CONNECTION_TEXTS {
        let at = with(connection_spec(), pointer, json!(text_of(path, max)));
        assert_eq!(connection_problem(at), None, "{path} at {max}");
        let over = with(connection_spec(), pointer, json!(text_of(path, max + 1)));
        assert_eq!(connection_problem(over), too_long(path, max), "{path}");
    }
}

#[test]
fn every_list_should_be_admitted_at_its_bound_and_refused_one_item_over() {
    for (pointer, path, max, item) in secret_lists() {
        let at = with(secret_spec(), pointer, json!(vec![item.clone(); max]));
        assert_eq!(secret_problem(at), None, "{path} at {max}");
        let over = with(secret_spec(), pointer, json!(vec![item; max + 1]));
        assert_eq!(
            secret_problem(over),
            Some(format!("{path}: more than {max} items (the CRD's maxItems)")),
            "{path}"
        );
    }
}

#[test]
fn lengths_should_be_counted_in_characters_as_the_api_server_counts_them() {
    // 253 two-byte characters: 506 bytes, admitted by the schema, so admitted here.
    let wide = "é".repeat(MAX_SECRET_KEY);
    assert_eq!(
        secret_problem(with(secret_spec(), "/transforms/0/value", json!(wide))),
        None
    );
    let over = "é".repeat(MAX_SECRET_KEY + 1);
    assert_eq!(
        secret_problem(with(secret_spec(), "/transforms/0/value", json!(over))),
        too_long("spec.transforms[0].value", MAX_SECRET_KEY)
    );
}

#[test]
fn the_problem_should_name_the_first_field_over_and_never_its_value() {
    let mut spec = with(
        secret_spec(),
        "/vault",
        json!(format!("LEAKCHECK{}", "v".repeat(MAX_IDENTIFIER))),
    );
    spec["transforms"] = json!([
        { "type": "prefix", "value": "P" },
        { "type": "suffix", "value": "LEAKCHECK".repeat(100) },
    ]);
    let problem = secret_problem(spec.clone()).expect("over a bound");
    assert_eq!(Some(problem.clone()), too_long("spec.vault", MAX_IDENTIFIER));
    spec["vault"] = json!("v");
    let problem_2 = secret_problem(spec).expect("over a bound");
    assert_eq!(
        Some(problem_2.clone()),
        too_long("spec.transforms[1].value", MAX_SECRET_KEY)
    );
    assert!(!format!("{problem}{problem_2}").contains("LEAKCHECK"));
}

#[test]
fn an_object_over_a_bound_should_become_invalid_with_its_metadata_and_conditions() {
    let mut object: FerrVaultSecret = serde_json::from_value(json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "FerrVaultSecret",
        "metadata": { "name": "app", "namespace": "ns", "generation": 4 },
        "spec": secret_spec(),
        "status": { "conditions": [{
            "type": "Ready", "status": "True", "reason": "Synced", "message": "ok",
            "lastTransitionTime": "2026-01-01T00:00:00Z"
        }]},
    }))
    .expect("a FerrVaultSecret");
    assert_eq!(object.beyond_bounds(), None);
    object.spec.refresh_interval = "1".repeat(MAX_DURATION + 1);
    let invalid = object.beyond_bounds().expect("over a bound");
    assert_eq!(invalid.metadata, object.metadata);
    assert_eq!(invalid.conditions.len(), 1, "kept for the status write");
    assert_eq!(invalid.problem.path, "spec.refreshInterval");

    let mut connection: FerrVaultConnection = serde_json::from_value(json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "FerrVaultConnection",
        "metadata": { "name": "conn", "namespace": "ns" },
        "spec": connection_spec(),
    }))
    .expect("a FerrVaultConnection");
    assert_eq!(connection.beyond_bounds(), None);
    connection.spec.url = text_of("spec.url", MAX_URL + 1);
    let invalid = connection.beyond_bounds().expect("over a bound");
    assert_eq!(invalid.metadata.name.as_deref(), Some("conn"));
    assert_eq!(invalid.conditions, Vec::new());
    assert_eq!(invalid.problem.path, "spec.url");
}

#[test]
fn target_metadata_should_be_refused_past_its_entries_and_for_keys_the_schema_refuses() {
    let labels = "/target/metadata/labels";
    let many = |n: usize| Value::Object((0..n).map(|i| (format!("k{i}"), json!("v"))).collect());
    assert_eq!(
        secret_problem(with(secret_spec(), labels, many(MAX_TARGET_LABELS))),
        None
    );
    assert_eq!(
        secret_problem(with(secret_spec(), labels, many(MAX_TARGET_LABELS + 1))),
        Some(format!(
            "spec.target.metadata.labels: more than {MAX_TARGET_LABELS} entries (the CRD's maxProperties)"
        ))
    );
    let annotations = "/target/metadata/annotations";
    for (key, expected) in [
        ("app.kubernetes.io/name", None),
        ("kubernetes.io/service-account.name", Some(RESERVED_MESSAGE)),
        ("ferrvault.com/content-hash", Some(RESERVED_MESSAGE)),
        ("k8s.io/x", Some(RESERVED_MESSAGE)),
        ("a/b/c", Some(KEY_SHAPE_MESSAGE)),
    ] {
        let expected = expected.map(|m| format!("spec.target.metadata.annotations: {m}"));
        assert_eq!(
            secret_problem(with(secret_spec(), annotations, json!({ key: "v" }))),
            expected,
            "{key}"
        );
    }
    let long_key = "k".repeat(64);
    assert_eq!(
        secret_problem(with(secret_spec(), labels, json!({ long_key: "v" }))),
        Some(format!("spec.target.metadata.labels: {KEY_SHAPE_MESSAGE}")),
        "the key is not named: it is not a valid key"
    );
}

#[test]
fn template_keys_should_be_bounded_in_count_and_length_without_spelling_the_key() {
    let keys = |count: usize| -> Value {
        (0..count)
            .map(|i| (format!("K{i}"), json!("x")))
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    let at = with(secret_spec(), "/target/template/data", keys(MAX_TEMPLATE_KEYS));
    assert_eq!(secret_problem(at), None);
    let over = with(
        secret_spec(),
        "/target/template/data",
        keys(MAX_TEMPLATE_KEYS + 1),
    );
    assert_eq!(
        secret_problem(over).as_deref(),
        Some("spec.target.template.data: more than 100 entries (the CRD's maxProperties)")
    );
    let long_key = json!({ "k".repeat(MAX_SECRET_KEY + 1): "x" });
    assert_eq!(
        secret_problem(with(secret_spec(), "/target/template/data", long_key)).as_deref(),
        Some("spec.target.template.data (a key): longer than 253 characters (the CRD's maxLength)")
    );
}
