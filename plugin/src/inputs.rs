//! What `explain` compares with `status.observedInputs`: the versions of what a sync reads besides
//! FerrVault (its connection's UID, generation and Ready status, its token and CA bundle Secrets'
//! `resourceVersion`s), built by the operator's own [`secret_inputs_by`] from what the cluster
//! shows now.
//!
//! # Guarantees
//! - Only metadata is read: the connection, and the token and CA bundle Secrets' metadata (never
//!   their data).
//! - The content-hash key's identifier is the one input the plugin cannot know (the key is the
//!   operator's secret): it is taken as recorded, so rotating the key shows in the operator, not
//!   here.

use std::collections::BTreeMap;

use ferrvault_operator::{
    api::{FerrVaultConnection, FerrVaultSecret, Lenient},
    rules::{ContentHashKey, connection_secret_names, secret_inputs_by},
};
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use serde::Deserialize;

use crate::{cluster::Cluster, error::PluginError};

/// The name of the one input taken as recorded (see the module guarantees).
const KEY_INPUT: &str = "key";

/// One input that differs from what the last sync recorded.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct InputChange {
    /// Which input: `connection`, `token` or `ca`.
    pub input: String,
    /// What the last sync recorded (`None`: nothing).
    pub recorded: Option<String>,
    /// What the cluster shows now (`None`: the connection does not exist).
    pub now: Option<String>,
}

/// The inputs of `cr` now, as `status.observedInputs` would record them, and how they differ
/// from `recorded`; `None` when they cannot be read (no permission).
///
/// # Errors
/// A request failed other than by 403 or 404.
pub async fn read(
    cluster: &Cluster,
    cr: &FerrVaultSecret,
    recorded: Option<&str>,
) -> Result<Option<(String, Vec<InputChange>)>, PluginError> {
    let namespace = cr.namespace().unwrap_or_default();
    let name = &cr.spec.connection_ref.name;
    let connections = cluster.connections(&namespace);
    let connection = match cluster
        .call(
            || format!("getting ferrvaultconnection {name} in {namespace}"),
            connections.get_opt(name),
        )
        .await
    {
        Ok(Some(object)) => serde_json::to_value(object)
            .ok()
            .and_then(|value| Lenient::<FerrVaultConnection>::deserialize(value).ok()),
        Ok(None) => None,
        Err(error) if error.is_forbidden() => return Ok(None),
        Err(error) => return Err(error),
    };
    let Some(Lenient::Valid(connection)) = connection else {
        // No usable connection: nothing to build inputs from; the sync is due (the operator
        // reports the connection).
        let change = InputChange {
            input: "connection".to_owned(),
            recorded: fields(recorded).remove("connection"),
            now: None,
        };
        return Ok(Some((String::new(), vec![change])));
    };
    let mut versions = BTreeMap::new();
    let secrets = cluster.api::<Secret>(&namespace);
    for secret in connection_secret_names(&connection) {
        let version = match cluster
            .call(
                || format!("getting the metadata of secret {secret} in {namespace}"),
                secrets.get_metadata_opt(secret),
            )
            .await
        {
            Ok(meta) => meta.and_then(|m| m.metadata.resource_version),
            Err(error) if error.is_forbidden() => return Ok(None),
            Err(error) => return Err(error),
        };
        versions.insert(secret.to_owned(), version);
    }
    let placeholder = ContentHashKey::from_bytes(&[0; ContentHashKey::LEN]).expect("a full-length key");
    let now = secret_inputs_by(
        &connection,
        &|name| versions.get(name).cloned().flatten(),
        &placeholder,
    );
    Ok(Some(compare(&now, recorded)))
}

/// `now` with the recorded key identifier, and how it differs from `recorded`: equal to
/// `recorded` when no input but the key differs.
pub fn compare(now: &str, recorded: Option<&str>) -> (String, Vec<InputChange>) {
    let (mut now_fields, mut recorded_fields) = (fields(Some(now)), fields(recorded));
    now_fields.remove(KEY_INPUT);
    recorded_fields.remove(KEY_INPUT);
    let names: std::collections::BTreeSet<&String> =
        now_fields.keys().chain(recorded_fields.keys()).collect();
    let changes: Vec<InputChange> = names
        .into_iter()
        .filter(|name| now_fields.get(*name) != recorded_fields.get(*name))
        .map(|name| InputChange {
            input: name.clone(),
            recorded: recorded_fields.get(name).cloned(),
            now: now_fields.get(name).cloned(),
        })
        .collect();
    match (changes.is_empty(), recorded) {
        (true, Some(recorded)) => (recorded.to_owned(), changes),
        _ => (now.to_owned(), changes),
    }
}

/// The `name=value` fields of an inputs record.
fn fields(inputs: Option<&str>) -> BTreeMap<String, String> {
    inputs
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|field| field.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_should_compare_every_field_but_the_key() {
        let recorded = "connection=u/1/True token=10 ca=- key=abc";
        let (observed, changes) = compare("connection=u/1/True token=10 ca=- key=000", Some(recorded));
        assert_eq!((observed.as_str(), changes.len()), (recorded, 0));
        let (observed, changes) = compare("connection=u/2/True token=11 ca=- key=000", Some(recorded));
        assert_ne!(observed, recorded);
        let changed: Vec<_> = changes.iter().map(|c| c.input.as_str()).collect();
        assert_eq!(changed, ["connection", "token"]);
        assert_eq!(changes[1].recorded.as_deref(), Some("10"));
        assert_eq!(changes[1].now.as_deref(), Some("11"));
    }

    #[test]
    fn inputs_never_recorded_should_all_differ() {
        let (_, changes) = compare("connection=u/1/True token=10 ca=- key=000", None);
        assert_eq!(changes.len(), 3);
        assert!(changes.iter().all(|c| c.recorded.is_none()));
    }
}
