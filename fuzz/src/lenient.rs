//! Targets `lenient_secret` and `lenient_connection`: reading a custom resource through
//! `api::Lenient<K>` from the JSON bytes an API server without (or with a stale) schema may hold,
//! then the reconciler's spec bounds check (`reconcile::rules::spec_bounds`) on what reads.
//!
//! # Properties checked
//! - No problem (`SpecProblem`, the error of unusable metadata, a spec bounds problem) ever
//!   quotes a value: every string and number of the object is planted with a marker and read
//!   again, once in `metadata` and once elsewhere (a planted timestamp fails the metadata, which
//!   would hide the rest), and no problem's `Display` or `Debug` shows the marker.
//! - A problem is `path: expected`, with `expected` one of the fixed wordings.
//! - The spec bounds check refuses a spec exactly when the CRD's schema would (a string over
//!   its `maxLength` in characters, a list over its `maxItems`), and names a field that is over.

use std::{fmt::Debug, sync::OnceLock};

use ferrvault_operator::{
    api::{FerrVaultConnection, FerrVaultSecret, Lenient, SpecProblem, crdgen},
    rules::SpecBounds,
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Map, Value};

/// Planted around every string of the object.
const MARKER: &str = "LEAK~m4rk3r";

/// Planted instead of every number of the object (too large for any integer field but `u64`'s).
const MARKER_NUMBER: u64 = 7_357_735_773_577;

/// Checks `Lenient<K>` and the spec bounds on `body` (see the module's properties).
pub fn check<K>(body: &[u8])
where
    K: DeserializeOwned + Serialize + SpecBounds + Kind,
{
    if let Ok(Lenient::Valid(object)) = read::<K>(body, &[]) {
        assert_bounds_as_schema(&object);
    }
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return;
    };
    let markers = [MARKER.to_owned(), MARKER_NUMBER.to_string()];
    // A marker the input already holds (in a map key, which a problem's path names) would be
    // found where no planted value is: such an input says nothing of quoting.
    if markers
        .iter()
        .any(|marker| body.windows(marker.len()).any(|w| w == marker.as_bytes()))
    {
        return;
    }
    for planted_in in [Planted::Metadata, Planted::Rest] {
        let planted = serde_json::to_vec(&plant(value.clone(), planted_in, false)).expect("JSON encodes");
        let _ = read::<K>(&planted, &markers);
    }
}

/// Which part of the object the markers go in.
#[derive(Clone, Copy, PartialEq)]
enum Planted {
    Metadata,
    Rest,
}

/// Reads `body` as `Lenient<K>`, checking every problem's shape and that it shows none of
/// `markers`.
fn read<K>(body: &[u8], markers: &[String]) -> Result<Lenient<K>, serde_json::Error>
where
    K: DeserializeOwned + SpecBounds,
{
    let read = serde_json::from_slice::<Lenient<K>>(body);
    match &read {
        Ok(Lenient::Valid(object)) => {
            if let Some(problem) = object.bounds_problem() {
                assert_bounds_problem(&problem);
                assert_shows_none(&problem, markers);
            }
        }
        Ok(Lenient::Invalid(invalid)) => {
            assert_problem(&invalid.problem);
            assert_shows_none(&invalid.problem, markers);
        }
        Err(error) => assert_shows_none(error, markers),
    }
    read
}

/// `value` with [`MARKER`] around every string and [`MARKER_NUMBER`] for every number, in
/// `metadata` only or everywhere else; `inside` says whether `value` is in the part planted.
fn plant(value: Value, planted_in: Planted, inside: bool) -> Value {
    match value {
        Value::String(text) if inside => Value::String(format!("{MARKER}{text}{MARKER}")),
        Value::Number(_) if inside => Value::from(MARKER_NUMBER),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| plant(item, planted_in, inside))
                .collect(),
        ),
        Value::Object(fields) => Value::Object(plant_fields(fields, planted_in, inside)),
        other @ (Value::Null | Value::Bool(_) | Value::String(_) | Value::Number(_)) => other,
    }
}

/// At the top level, `metadata` is planted for [`Planted::Metadata`] and the rest for
/// [`Planted::Rest`]; below it, as the parent is.
fn plant_fields(fields: Map<String, Value>, planted_in: Planted, inside: bool) -> Map<String, Value> {
    fields
        .into_iter()
        .map(|(name, value)| {
            let inside = match (inside, planted_in) {
                (true, _) => true,
                (false, Planted::Metadata) => name == "metadata",
                (false, Planted::Rest) => name != "metadata",
            };
            (name, plant(value, planted_in, inside))
        })
        .collect()
}

fn assert_shows_none(problem: &(impl std::fmt::Display + Debug), markers: &[String]) {
    for shown in [problem.to_string(), format!("{problem:?}")] {
        for marker in markers {
            assert!(!shown.contains(marker.as_str()), "quotes a value: {shown}");
        }
    }
}

/// serde's fixed wordings, as `api::lenient::problem` keeps them.
fn assert_problem(problem: &SpecProblem) {
    assert!(!problem.path.is_empty(), "{problem:?}");
    let expected = &problem.expected;
    let names_a_field = ["missing field `", "duplicate field `"]
        .iter()
        .any(|opening| expected.starts_with(opening));
    let fixed = [
        "invalid type",
        "invalid value",
        "invalid length",
        "unknown variant",
        "unknown field",
    ]
    .iter()
    .any(|kind| expected.starts_with(kind));
    assert!(
        names_a_field || fixed || expected == "unreadable value",
        "{problem:?}"
    );
    assert_eq!(problem.to_string(), format!("{}: {}", problem.path, expected));
}

fn assert_bounds_problem(problem: &SpecProblem) {
    assert!(problem.path.starts_with("spec."), "{problem:?}");
    assert!(
        problem.expected.ends_with("(the CRD's maxLength)")
            || problem.expected.ends_with("(the CRD's maxItems)"),
        "{problem:?}"
    );
}

/// The spec bounds check agrees with the CRD schema's `maxLength` and `maxItems`.
fn assert_bounds_as_schema<K: Serialize + SpecBounds + Kind>(object: &K) {
    let problem = object.bounds_problem();
    let object = serde_json::to_value(object).expect("the object serializes");
    let mut over = Vec::new();
    schema_violations(&object["spec"], spec_schema(K::KIND), "spec", &mut over);
    match problem {
        Some(problem) => assert!(
            over.contains(&problem.path),
            "{problem} but the schema finds {over:?}"
        ),
        None => assert!(
            over.is_empty(),
            "the schema refuses {over:?}, the reconciler does not"
        ),
    }
}

/// Every path under `path` where `value` is over a `maxLength` (in characters, as the API server
/// counts) or a `maxItems` of `schema`.
fn schema_violations(value: &Value, schema: &Value, path: &str, over: &mut Vec<String>) {
    let bound = |name: &str| schema[name].as_u64().and_then(|max| usize::try_from(max).ok());
    match value {
        Value::String(text) => {
            if bound("maxLength").is_some_and(|max| text.chars().count() > max) {
                over.push(path.to_owned());
            }
        }
        Value::Array(items) => {
            if bound("maxItems").is_some_and(|max| items.len() > max) {
                over.push(path.to_owned());
            }
            for (index, item) in items.iter().enumerate() {
                schema_violations(item, &schema["items"], &format!("{path}[{index}]"), over);
            }
        }
        Value::Object(fields) => {
            for (name, field) in fields {
                schema_violations(
                    field,
                    &schema["properties"][name],
                    &format!("{path}.{name}"),
                    over,
                );
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// The CRD schema of `kind`'s `spec`, as the operator generates it.
fn spec_schema(kind: &str) -> &'static Value {
    static CRDS: OnceLock<Vec<Value>> = OnceLock::new();
    let crds = CRDS.get_or_init(|| {
        crdgen::crds()
            .iter()
            .map(|crd| serde_json::to_value(crd).expect("a CRD serializes"))
            .collect()
    });
    let crd = crds
        .iter()
        .find(|crd| crd["spec"]["names"]["kind"] == kind)
        .expect("a CRD of each kind");
    &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
}

/// A custom resource kind with a CRD.
pub trait Kind {
    /// Its `kind`.
    const KIND: &'static str;
}

impl Kind for FerrVaultSecret {
    const KIND: &'static str = "FerrVaultSecret";
}

impl Kind for FerrVaultConnection {
    const KIND: &'static str = "FerrVaultConnection";
}
