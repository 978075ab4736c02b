//! The size bounds (issue 34, point 2): every string and list of both specs has a `maxLength` or
//! `maxItems` (a string map `maxProperties` and values' `maxLength`), and the reconciler's own check ([`spec_bounds`]) refuses exactly what the schema
//! refuses, field by field, found by walking the generated schema (so a field added without a
//! bound, or with a schema bound the reconciler does not share, fails here).

use ferrvault_operator::{
    api::{FerrVaultConnection, FerrVaultConnectionSpec, FerrVaultSecret, FerrVaultSecretSpec},
    rules::{connection_spec_problem, secret_spec_problem},
};
use jsonschema::error::ValidationErrorKind;
use kube::CustomResourceExt;
use serde_json::{Value, json};

/// The schema of `K`'s `spec`.
fn spec_schema<K: CustomResourceExt>() -> Value {
    let crd = serde_json::to_value(K::crd()).expect("CRD serializes");
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"].clone()
}

/// A bound found in a schema: where (a JSON pointer into the spec, with `0` for list items),
/// which keyword and its value.
#[derive(Debug)]
struct Bound {
    pointer: String,
    keyword: &'static str,
    max: usize,
}

/// Every bound under `schema` (at `pointer`), and every string or list node without one.
fn bounds(schema: &Value, pointer: &str, found: &mut Vec<Bound>, unbounded: &mut Vec<String>) {
    let max = |keyword: &str| schema.get(keyword).and_then(Value::as_u64);
    match schema["type"].as_str() {
        // An enum is bounded by its values.
        Some("string") if schema.get("enum").is_none() => match max("maxLength") {
            Some(max) => found.push(Bound {
                pointer: pointer.to_owned(),
                keyword: "maxLength",
                max: max as usize,
            }),
            None => unbounded.push(pointer.to_owned()),
        },
        Some("array") => {
            match max("maxItems") {
                Some(max) => found.push(Bound {
                    pointer: pointer.to_owned(),
                    keyword: "maxItems",
                    max: max as usize,
                }),
                None => unbounded.push(pointer.to_owned()),
            }
            bounds(&schema["items"], &format!("{pointer}/0"), found, unbounded);
        }
        // A string map (`target.metadata`): bounded in entries and values. Its agreement with the
        // reconciler is tested by the `spec_bounds` unit tests (a map has no item to size here).
        Some("object") if schema.get("additionalProperties").is_some() => {
            if max("maxProperties").is_none() {
                unbounded.push(format!("{pointer} (maxProperties)"));
            }
            let values = &schema["additionalProperties"];
            if values["type"] == "string" && values.get("maxLength").is_none() {
                unbounded.push(format!("{pointer}/* (maxLength)"));
            }
        }
        _ => {}
    }
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        bounds(property, &format!("{pointer}/{name}"), found, unbounded);
    }
}

/// The bounds of `K`'s spec; fails naming every string or list without one.
fn all_bounds<K: CustomResourceExt>() -> Vec<Bound> {
    let (mut found, mut unbounded) = (Vec::new(), Vec::new());
    bounds(&spec_schema::<K>(), "", &mut found, &mut unbounded);
    assert_eq!(unbounded, Vec::<String>::new(), "unbounded in {}", K::crd_name());
    found
}

/// A FerrVaultSecret spec holding every field (every list with one item).
fn full_secret_spec() -> Value {
    json!({
        "connectionRef": { "name": "c" },
        "project": "p",
        "vault": "v",
        "selector": { "names": ["A"] },
        "target": {
            "name": "t",
            "type": "kubernetes.io/dockerconfigjson",
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

/// A FerrVaultConnection spec holding every field.
fn full_connection_spec() -> Value {
    json!({
        "mode": "ferrvault",
        "url": "https://x",
        "organization": "o",
        "tokenSecretRef": { "name": "t", "key": "token" },
        "oidc": { "clusterID": "0b6f7e2c-1d2e-4f00-8a9b-0123456789ab", "tokenPath": "/p", "audience": "a" },
        "caBundleSecretRef": { "name": "ca", "key": "ca.crt" },
        "clientCertSecretRef": { "name": "client-tls" },
        "pinSha256": ["a".repeat(64)],
        "changeDetection": { "mode": "Versions", "interval": "30s" },
    })
}

/// `spec` with the field at `bound` made `len` long (characters or items), staying valid
/// otherwise: URLs keep their scheme, cluster IDs their hex digits, list items are copies of the
/// first.
fn sized(spec: &Value, bound: &Bound, len: usize) -> Value {
    let mut spec = spec.clone();
    let field = spec
        .pointer_mut(&bound.pointer)
        .unwrap_or_else(|| panic!("the full spec has no {}: add it", bound.pointer));
    *field = match bound.keyword {
        "maxItems" => Value::Array(vec![field[0].clone(); len]),
        _ if bound.pointer == "/url" => json!(format!("https://{}", "a".repeat(len - 8))),
        _ if bound.pointer.ends_with("/clusterID") => json!("0".repeat(len)),
        // Still a duration (leading zeros), above the CEL floor.
        _ if bound.pointer.ends_with("/interval") => json!(format!("{}5s", "0".repeat(len - 2))),
        _ => json!("a".repeat(len)),
    };
    spec
}

/// The reconciler's path for a spec pointer: `/transforms/0/keys/0` → `spec.transforms[0].keys[0]`.
fn path_of(pointer: &str) -> String {
    pointer
        .split('/')
        .skip(1)
        .fold("spec".to_owned(), |path, segment| {
            if segment.parse::<usize>().is_ok() {
                format!("{path}[{segment}]")
            } else {
                format!("{path}.{segment}")
            }
        })
}

/// Whether the schema refuses `spec` for the bound at its pointer.
fn schema_refuses(schema: &Value, spec: &Value, bound: &Bound) -> bool {
    let validator = jsonschema::validator_for(schema).expect("the spec schema compiles");
    validator.iter_errors(spec).any(|error| {
        error.instance_path().to_string() == bound.pointer
            && matches!(
                error.kind(),
                ValidationErrorKind::MaxLength { .. } | ValidationErrorKind::MaxItems { .. }
            )
    })
}

/// For every bound of `K`: at the bound the schema and the reconciler's `check` admit the spec;
/// one over, both refuse it, the reconciler naming the same field and bound.
fn assert_schema_and_reconciler_agree<K: CustomResourceExt>(
    full: Value,
    check: impl Fn(&Value) -> Option<String>,
) {
    let schema = spec_schema::<K>();
    let bounds = all_bounds::<K>();
    assert!(!bounds.is_empty());
    assert_eq!(check(&full), None, "the full spec is within every bound");
    for bound in &bounds {
        let at = sized(&full, bound, bound.max);
        let validator = jsonschema::validator_for(&schema).expect("the spec schema compiles");
        assert!(
            validator.is_valid(&at),
            "the schema admits {bound:?} at its bound"
        );
        assert_eq!(check(&at), None, "the reconciler admits {bound:?} at its bound");
        let over = sized(&full, bound, bound.max + 1);
        assert!(
            schema_refuses(&schema, &over, bound),
            "the schema refuses {bound:?} one over"
        );
        let (unit, words) = match bound.keyword {
            "maxItems" => ("items", "more than"),
            _ => ("characters", "longer than"),
        };
        assert_eq!(
            check(&over),
            Some(format!(
                "{}: {words} {} {unit} (the CRD's {})",
                path_of(&bound.pointer),
                bound.max,
                bound.keyword
            )),
            "the reconciler refuses {bound:?} one over"
        );
    }
}

#[test]
fn every_string_and_list_of_both_specs_should_have_a_bound() {
    let pointers = |bounds: Vec<Bound>| -> Vec<String> {
        let mut pointers: Vec<String> = bounds.into_iter().map(|b| b.pointer).collect();
        pointers.sort();
        pointers
    };
    assert_eq!(
        pointers(all_bounds::<FerrVaultSecret>()),
        [
            "/connectionRef/name",
            "/project",
            "/refreshInterval",
            "/rolloutRestart",
            "/rolloutRestart/0/name",
            "/selector/names",
            "/selector/names/0",
            "/target/name",
            "/target/template/dockerConfig/emailKey",
            "/target/template/dockerConfig/passwordKey",
            "/target/template/dockerConfig/server",
            "/target/template/dockerConfig/usernameKey",
            "/target/type",
            "/transforms",
            "/transforms/0/from",
            "/transforms/0/key",
            "/transforms/0/keys",
            "/transforms/0/keys/0",
            "/transforms/0/to",
            "/transforms/0/value",
            "/vault",
        ]
    );
    assert_eq!(
        pointers(all_bounds::<FerrVaultConnection>()),
        [
            "/caBundleSecretRef/key",
            "/caBundleSecretRef/name",
            "/changeDetection/interval",
            "/clientCertSecretRef/name",
            "/oidc/audience",
            "/oidc/clusterID",
            "/oidc/tokenPath",
            "/organization",
            "/pinSha256",
            "/pinSha256/0",
            "/tokenSecretRef/key",
            "/tokenSecretRef/name",
            "/url",
        ]
    );
}

#[test]
fn the_reconciler_should_refuse_exactly_what_the_secret_schema_refuses() {
    assert_schema_and_reconciler_agree::<FerrVaultSecret>(full_secret_spec(), |spec| {
        let spec: FerrVaultSecretSpec = serde_json::from_value(spec.clone()).expect("a spec");
        secret_spec_problem(&spec).err().map(|p| p.to_string())
    });
}

#[test]
fn the_reconciler_should_refuse_exactly_what_the_connection_schema_refuses() {
    assert_schema_and_reconciler_agree::<FerrVaultConnection>(full_connection_spec(), |spec| {
        let spec: FerrVaultConnectionSpec = serde_json::from_value(spec.clone()).expect("a spec");
        connection_spec_problem(&spec).err().map(|p| p.to_string())
    });
}
