//! The manifests the READMEs tell a newcomer to apply (the `<<'YAML'` blocks of `README.md` and
//! the chart's README) are admitted by the CRDs, and every field they set is a field of the
//! CRD: the API server would prune an unknown one silently, and the example would then not do
//! what it says.

use ferrvault_operator::api::{FerrVaultConnection, FerrVaultSecret};
use kube::CustomResourceExt;
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

use crate::go_manifests::refusals;

/// Every document of every `<<'YAML'` block of `file` (relative to the workspace root).
fn applied_documents(file: &str) -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {file}: {e}"));
    text.split("<<'YAML'\n")
        .skip(1)
        .map(|block| block.split("\nYAML\n").next().expect("a block"))
        .flat_map(|block| block.split("\n---\n").map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

/// The paths of `shown` whose value `kept` does not hold (`kept` may hold more: defaults).
fn dropped(shown: &Value, kept: &Value, path: &str, out: &mut Vec<String>) {
    match (shown, kept) {
        (Value::Object(shown), Value::Object(kept)) => {
            for (key, value) in shown {
                let inner = format!("{path}.{key}");
                match kept.get(key) {
                    Some(kept) => dropped(value, kept, &inner, out),
                    None => out.push(inner),
                }
            }
        }
        (Value::Array(shown), Value::Array(kept)) if shown.len() == kept.len() => {
            for (i, (value, kept)) in shown.iter().zip(kept).enumerate() {
                dropped(value, kept, &format!("{path}[{i}]"), out);
            }
        }
        _ if shown == kept => {}
        _ => out.push(path.to_owned()),
    }
}

/// Why the API server would refuse `doc` or drop part of it; empty if it keeps all of it.
fn problems<K>(doc: &str) -> Vec<String>
where
    K: CustomResourceExt + Serialize + DeserializeOwned,
{
    let refused = refusals::<K>(doc);
    if !refused.is_empty() {
        return refused;
    }
    let shown: Value = serde_norway::from_str(doc).expect("YAML");
    let typed: K = serde_json::from_value(shown.clone()).expect("admitted, so readable");
    let kept = serde_json::to_value(&typed).expect("serializes");
    let mut out = Vec::new();
    dropped(&shown["spec"], &kept["spec"], "spec", &mut out);
    out.into_iter()
        .map(|path| format!("{path}: not a field of the CRD"))
        .collect()
}

#[test]
fn the_readmes_manifests_should_be_admitted_with_every_field_they_set() {
    let mut checked = 0;
    for file in ["README.md", "charts/ferrvault-operator/README.md"] {
        for doc in applied_documents(file) {
            let found = if doc.contains("kind: FerrVaultConnection") {
                problems::<FerrVaultConnection>(&doc)
            } else if doc.contains("kind: FerrVaultSecret") {
                problems::<FerrVaultSecret>(&doc)
            } else {
                continue;
            };
            checked += 1;
            assert!(found.is_empty(), "{file}: {found:?} in\n{doc}");
        }
    }
    assert!(
        checked >= 4,
        "the READMEs' connections and FerrVaultSecrets were found ({checked})"
    );
}
