//! `render (NAME | -f FILE) --values FILE [-o json|yaml]`: the target Secret a FerrVaultSecret
//! would produce from local values, offline: its selector, its transforms (the operator's own
//! pipeline, [`apply_transforms`]), its target name and type.
//!
//! # Guarantees
//! - No Secret is read: the values come from the user's file; the cluster is asked for the
//!   FerrVaultSecret only (with `NAME`), and not at all with `-f` (no kubeconfig is loaded).
//! - Both files are bounded ([`MAX_INPUT_BYTES`]) before they are read, and their problems are
//!   described by position and key name, never by quoting their content.
//! - The output is what the user gave, transformed: the only command that prints values.

use std::{collections::BTreeMap, io::Read, path::Path};

use ferrvault_operator::{
    api::{FerrVaultSecret, Lenient},
    rules::{SecretData, apply_transforms},
};
use k8s_openapi::{ByteString, api::core::v1::Secret};
use kube::api::ObjectMeta;
use serde::Deserialize;
use serde_json::Value;

use crate::{
    args::{ClusterArgs, OutputFormat, RenderArgs},
    cluster::{Cluster, Scope},
    error::PluginError,
    output::emit,
};

/// The largest values file or manifest read: 4 MiB, twice the most the operator accepts from a
/// FerrVault reveal (2 MiB decoded).
pub const MAX_INPUT_BYTES: u64 = 4 << 20;

/// Runs `render`.
///
/// # Errors
/// A file is unusable, the FerrVaultSecret cannot be read, a selected key has no value, or a
/// transform fails (as the operator would report it).
pub async fn run(cluster_args: &ClusterArgs, args: RenderArgs) -> Result<(), PluginError> {
    let values = read_values(&args.values)?;
    let (cr, namespace) = match (&args.filename, &args.name) {
        (Some(path), _) => {
            let cr = read_manifest(path)?;
            let namespace = cr
                .metadata
                .namespace
                .clone()
                .or_else(|| cluster_args.namespace.clone());
            (cr, namespace)
        }
        (None, Some(name)) => {
            let cluster = Cluster::connect(cluster_args).await?;
            let namespace = cluster.namespace().to_owned();
            let object = cluster
                .call(
                    || format!("getting ferrvaultsecret {name} in {namespace}"),
                    cluster.secrets_in(&Scope::Namespace(namespace.clone())).get(name),
                )
                .await?;
            let value = serde_json::to_value(object).map_err(|e| PluginError::Object(e.to_string()))?;
            (typed(value, name)?, Some(namespace))
        }
        (None, None) => unreachable!("clap requires NAME or -f"),
    };
    let secret = render(&cr, namespace, values)?;
    emit(args.output.unwrap_or(OutputFormat::Yaml), &secret)
}

/// The target Secret `cr` produces from `values`, in `namespace`.
///
/// # Errors
/// [`PluginError::Object`] naming the selected keys without a value, or the failing transform
/// (with the condition reason the operator would write).
pub fn render(
    cr: &FerrVaultSecret,
    namespace: Option<String>,
    values: SecretData,
) -> Result<Secret, PluginError> {
    let name = cr.metadata.name.clone().unwrap_or_default();
    let selected = cr.spec.selected_names();
    let input: SecretData = if selected.is_empty() {
        values
    } else {
        let missing: Vec<&str> = selected
            .iter()
            .filter(|key| !values.contains_key(*key))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(PluginError::Object(format!(
                "the values have no {} (selected by spec.selector.names; the operator would report \
                 MissingKeys)",
                missing.join(", ")
            )));
        }
        values
            .into_iter()
            .filter(|(key, _)| selected.contains(key))
            .collect()
    };
    let data = apply_transforms(&input, &cr.spec.transforms).map_err(|e| {
        PluginError::Object(format!("{e} (the operator would report {})", e.reason().as_str()))
    })?;
    Ok(Secret {
        metadata: ObjectMeta {
            name: Some(cr.spec.target_name(&name).to_owned()),
            namespace,
            ..ObjectMeta::default()
        },
        type_: Some(cr.spec.target_type().to_owned()),
        data: Some(data.into_iter().map(|(k, v)| (k, ByteString(v))).collect()),
        ..Secret::default()
    })
}

/// The values file: a map of key to value (strings; numbers and booleans as their text).
fn read_values(path: &Path) -> Result<SecretData, PluginError> {
    let fail = |problem: String| PluginError::File {
        path: path.to_owned(),
        problem,
    };
    let document: BTreeMap<String, Value> = parse(path, &read_bounded(path)?)?;
    document
        .into_iter()
        .map(|(key, value)| match value {
            Value::String(text) => Ok((key, text.into_bytes())),
            Value::Number(_) | Value::Bool(_) => Ok((key, value.to_string().into_bytes())),
            Value::Null | Value::Array(_) | Value::Object(_) => Err(fail(format!(
                "the value of {key:?} is not a string, a number or a boolean"
            ))),
        })
        .collect()
}

/// A FerrVaultSecret manifest.
fn read_manifest(path: &Path) -> Result<FerrVaultSecret, PluginError> {
    let value: Value = parse(path, &read_bounded(path)?)?;
    let name = value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if value.get("kind").and_then(Value::as_str) != Some("FerrVaultSecret") {
        return Err(PluginError::File {
            path: path.to_owned(),
            problem: "not a FerrVaultSecret manifest (kind)".to_owned(),
        });
    }
    typed(value, &name)
}

/// `value` as a FerrVaultSecret; its problem (path and expectation, never a value) otherwise.
fn typed(value: Value, name: &str) -> Result<FerrVaultSecret, PluginError> {
    match Lenient::<FerrVaultSecret>::deserialize(value) {
        Ok(Lenient::Valid(cr)) => Ok(cr),
        Ok(Lenient::Invalid(invalid)) => Err(PluginError::Object(format!(
            "ferrvaultsecret {name} does not match its type: {}",
            invalid.problem
        ))),
        Err(_) => Err(PluginError::Object(format!(
            "ferrvaultsecret {name}: its metadata is unusable"
        ))),
    }
}

/// The bytes of `path`, refused before reading when over [`MAX_INPUT_BYTES`].
fn read_bounded(path: &Path) -> Result<Vec<u8>, PluginError> {
    let fail = |problem: String| PluginError::File {
        path: path.to_owned(),
        problem,
    };
    let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    let over = || fail(format!("larger than {MAX_INPUT_BYTES} bytes"));
    if file.metadata().map_err(|e| fail(e.to_string()))?.len() > MAX_INPUT_BYTES {
        return Err(over());
    }
    let mut bytes = Vec::new();
    // Read one byte past the bound, in case the file grew since its length was read.
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(e.to_string()))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(over());
    }
    Ok(bytes)
}

/// `bytes` as YAML (JSON is YAML); an error names the position only (parser messages can quote
/// the content).
fn parse<T: serde::de::DeserializeOwned>(path: &Path, bytes: &[u8]) -> Result<T, PluginError> {
    serde_norway::from_slice(bytes).map_err(|error| PluginError::File {
        path: path.to_owned(),
        problem: match error.location() {
            Some(at) => format!(
                "not the expected YAML or JSON document (line {}, column {})",
                at.line(),
                at.column()
            ),
            None => "not the expected YAML or JSON document".to_owned(),
        },
    })
}
