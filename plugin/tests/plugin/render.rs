//! `render`: the operator's pipeline over local values, offline, never a Secret read.

use std::{collections::BTreeMap, path::Path};

use k8s_openapi::api::core::v1::Secret;
use serde_json::json;

use crate::support::{Cluster, NS, plugin_with};

/// The spec of a FerrVaultSecret with a selector, every transform type and a target.
fn spec() -> serde_json::Value {
    json!({
        "selector": { "names": ["DB_URL", "CONFIG", "CERT", "PORT"] },
        "transforms": [
            { "type": "jsonExpand", "key": "CONFIG" },
            { "type": "base64Decode", "keys": ["CERT"] },
            { "type": "rename", "from": "DB_URL", "to": "DATABASE_URL" },
            { "type": "prefix", "value": "APP_" },
        ],
        "target": { "name": "app-env", "type": "example.com/app" },
    })
}

const VALUES: &str = r#"
DB_URL: "postgres://app:LEAKCHECK-render@db/shop"
CONFIG: '{"host":"db","port":5432}'
CERT: "AAEC/w=="
PORT: 5432
UNSELECTED: "not written"
"#;

fn write(dir: &Path, name: &str, content: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, content).expect("file written");
    path.display().to_string()
}

fn rendered(stdout: &str) -> (Secret, BTreeMap<String, Vec<u8>>) {
    let secret: Secret =
        serde_norway::from_str(stdout).unwrap_or_else(|e| panic!("a Secret ({e}):\n{stdout}"));
    let data = secret
        .data
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v.0))
        .collect();
    (secret, data)
}

fn expected() -> BTreeMap<String, Vec<u8>> {
    BTreeMap::from([
        ("APP_CERT".to_owned(), vec![0, 1, 2, 255]),
        ("APP_CONFIG_HOST".to_owned(), b"db".to_vec()),
        ("APP_CONFIG_PORT".to_owned(), b"5432".to_vec()),
        (
            "APP_DATABASE_URL".to_owned(),
            b"postgres://app:LEAKCHECK-render@db/shop".to_vec(),
        ),
        ("APP_PORT".to_owned(), b"5432".to_vec()),
    ])
}

#[tokio::test(flavor = "multi_thread")]
async fn render_should_apply_the_clusters_spec_to_local_values_and_read_no_secret() {
    let cluster = Cluster::start().await;
    cluster.create_fvs(NS, "app", "prod", spec()).await;
    cluster
        .put_secret(NS, "app-env", &[("APP_PORT", "from the cluster")])
        .await;
    let values = write(cluster.dir.path(), "values.yaml", VALUES);
    cluster.sim.clear_audit();

    let run = cluster.plugin(&["render", "app", "--values", &values]).await;
    assert_eq!(run.code, 0, "{run:?}");
    let (secret, data) = rendered(&run.stdout);
    assert_eq!(secret.metadata.name.as_deref(), Some("app-env"));
    assert_eq!(secret.metadata.namespace.as_deref(), Some(NS));
    assert_eq!(secret.type_.as_deref(), Some("example.com/app"));
    assert_eq!(data, expected());

    let secret_reads: Vec<_> = cluster
        .sim
        .audit()
        .into_iter()
        .filter(|e| e.resource == "secrets")
        .collect();
    assert!(secret_reads.is_empty(), "render read Secrets: {secret_reads:?}");
    let json = cluster
        .plugin(&["render", "app", "--values", &values, "-o", "json"])
        .await;
    let from_json: Secret = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(from_json, secret);
}

#[tokio::test(flavor = "multi_thread")]
async fn render_from_a_manifest_should_need_no_cluster() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let manifest = json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "FerrVaultSecret",
        "metadata": { "name": "app", "namespace": "team-a" },
        "spec": { "connectionRef": { "name": "prod" }, "vault": "shop", "refreshInterval": "1h" },
    });
    let mut manifest = manifest;
    for (key, value) in spec().as_object().expect("a map") {
        manifest["spec"][key] = value.clone();
    }
    let manifest = write(
        dir.path(),
        "fvs.yaml",
        &serde_norway::to_string(&manifest).expect("YAML"),
    );
    let values = write(
        dir.path(),
        "values.json",
        &serde_json::to_string(&serde_norway::from_str::<serde_json::Value>(VALUES).expect("values"))
            .expect("JSON"),
    );
    let nowhere = dir.path().join("no-such-kubeconfig");
    let run = plugin_with(&nowhere, &["render", "-f", &manifest, "--values", &values]).await;
    assert_eq!(run.code, 0, "{run:?}");
    let (secret, data) = rendered(&run.stdout);
    assert_eq!(secret.metadata.namespace.as_deref(), Some("team-a"));
    assert_eq!(data, expected());
}

#[tokio::test(flavor = "multi_thread")]
async fn render_should_fail_naming_keys_and_transforms_never_values() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let nowhere = dir.path().join("no-such-kubeconfig");
    let manifest = |case: &str, spec: serde_json::Value| {
        let mut full = json!({ "connectionRef": { "name": "prod" }, "vault": "shop" });
        for (key, value) in spec.as_object().expect("a map") {
            full[key] = value.clone();
        }
        let object = json!({
            "apiVersion": "ferrvault.com/v1alpha1", "kind": "FerrVaultSecret",
            "metadata": { "name": "app" }, "spec": full,
        });
        write(dir.path(), &format!("{case}.json"), &object.to_string())
    };
    let values = write(dir.path(), "values.yaml", "A: LEAKCHECK-a\nB: LEAKCHECK-b\n");
    let cases: Vec<(String, String, &str)> = vec![
        (
            manifest("selector", json!({ "selector": { "names": ["A", "MISSING"] } })),
            values.clone(),
            "the values have no MISSING (selected by spec.selector.names",
        ),
        (
            manifest(
                "rename",
                json!({ "transforms": [{ "type": "rename", "from": "A", "to": "B" }] }),
            ),
            values.clone(),
            "transforms[0] (rename): destination key \"B\" already exists (the operator would report TransformError)",
        ),
        (
            manifest("decode", json!({ "transforms": [{ "type": "base64Decode" }] })),
            values.clone(),
            "not valid base64 (the operator would report TransformError)",
        ),
        (
            manifest("nested", json!({})),
            write(dir.path(), "nested.yaml", "A: { inner: LEAKCHECK-a }\n"),
            "the value of \"A\" is not a string, a number or a boolean",
        ),
        (
            manifest("broken", json!({})),
            write(dir.path(), "broken.yaml", "A: [LEAKCHECK-a, {B: LEAKCHECK-b\n"),
            "not the expected YAML or JSON document (line",
        ),
    ];
    for (manifest, values, expected) in cases {
        let run = plugin_with(&nowhere, &["render", "-f", &manifest, "--values", &values]).await;
        assert_eq!(run.code, 1, "{run:?}");
        assert!(run.stderr.contains(expected), "{expected:?} in {:?}", run.stderr);
        assert!(
            !run.stderr.contains("LEAKCHECK") && run.stdout.is_empty(),
            "a value in an error: {run:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn render_should_refuse_a_values_file_over_its_bound() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let manifest = write(
        dir.path(),
        "fvs.yaml",
        "apiVersion: ferrvault.com/v1alpha1\nkind: FerrVaultSecret\nmetadata: {name: app}\nspec: {connectionRef: {name: prod}, vault: shop}\n",
    );
    let huge = dir.path().join("huge.yaml");
    let mut content = String::from("A: \"");
    content.push_str(&"x".repeat(5 << 20));
    content.push_str("\"\n");
    std::fs::write(&huge, content).expect("file written");
    let run = plugin_with(
        &dir.path().join("no-such-kubeconfig"),
        &["render", "-f", &manifest, "--values", &huge.display().to_string()],
    )
    .await;
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.ends_with("huge.yaml: larger than 4194304 bytes\n"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());
}
