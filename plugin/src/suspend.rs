//! `suspend` / `resume` (`NAME`, `TYPE/NAME` or `--all [-A]`): sets `spec.suspend: true`, or
//! removes it, on FerrVaultSecrets (or a FerrVaultConnection, `fvc/NAME`).
//!
//! # Guarantees
//! - Only `spec.suspend` is written (a JSON merge patch, field manager
//!   [`FIELD_MANAGER`](crate::cluster::FIELD_MANAGER)). Resuming removes the field rather than
//!   writing `false`, so an object resumed reads as it did before it was suspended (nothing
//!   defaulted into it that a GitOps tool would see as drift).
//! - A cluster whose CRD has no `spec.suspend` prunes the field silently; the answer is checked,
//!   and that case fails (exit 1) instead of claiming a suspension that did not happen.

use kube::{
    Api,
    api::{DynamicObject, ListParams, Patch, PatchParams},
};
use serde_json::{Value, json};

use crate::{
    args::Selection,
    cluster::{Cluster, FIELD_MANAGER, Scope},
    error::PluginError,
    output::print_out,
};

/// The kinds `suspend` and `resume` act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `FerrVaultSecret` (`fvs`), the default.
    Secret,
    /// `FerrVaultConnection` (`fvc`).
    Connection,
}

impl Kind {
    /// The kind and name of `NAME` or `TYPE/NAME`, with kubectl's spellings of the type.
    ///
    /// # Errors
    /// [`PluginError::Usage`] for another type.
    pub fn parse(argument: &str) -> Result<(Self, &str), PluginError> {
        let Some((kind, name)) = argument.split_once('/') else {
            return Ok((Self::Secret, argument));
        };
        let kind = match kind.to_ascii_lowercase().as_str() {
            "fvs"
            | "ferrvaultsecret"
            | "ferrvaultsecrets"
            | "ferrvaultsecret.ferrvault.com"
            | "ferrvaultsecrets.ferrvault.com" => Self::Secret,
            "fvc"
            | "ferrvaultconnection"
            | "ferrvaultconnections"
            | "ferrvaultconnection.ferrvault.com"
            | "ferrvaultconnections.ferrvault.com" => Self::Connection,
            _ => {
                return Err(PluginError::Usage(format!(
                    "{argument:?}: the type must be fvs or fvc (ferrvaultsecret, ferrvaultconnection)"
                )));
            }
        };
        Ok((kind, name))
    }

    fn singular(self) -> &'static str {
        match self {
            Self::Secret => "ferrvaultsecret",
            Self::Connection => "ferrvaultconnection",
        }
    }
}

/// Runs `suspend` (`suspend` true) or `resume`.
///
/// # Errors
/// A request failed, the object does not exist, or the cluster's CRD has no `spec.suspend`.
pub async fn run(cluster: &Cluster, selection: Selection, suspend: bool) -> Result<(), PluginError> {
    let targets: Vec<(Kind, String, String)> = match &selection.name {
        Some(argument) => {
            let (kind, name) = Kind::parse(argument)?;
            vec![(kind, cluster.namespace().to_owned(), name.to_owned())]
        }
        None => {
            let scope = cluster.scope(selection.all_namespaces);
            let listed = cluster
                .call(
                    || format!("listing ferrvaultsecrets {}", scope.describe()),
                    cluster.secrets_in(&scope).list(&ListParams::default()),
                )
                .await?;
            if listed.items.is_empty() {
                eprintln!("No resources found {}.", scope.describe());
            }
            listed
                .items
                .into_iter()
                .map(|o| {
                    (
                        Kind::Secret,
                        o.metadata.namespace.unwrap_or_default(),
                        o.metadata.name.unwrap_or_default(),
                    )
                })
                .collect()
        }
    };
    for (kind, namespace, name) in targets {
        patch(cluster, kind, &namespace, &name, suspend).await?;
        let done = if suspend { "suspended" } else { "resumed" };
        print_out(&format!("{}/{name} {done}\n", kind.singular()))?;
    }
    Ok(())
}

/// Writes `spec.suspend` of one object and checks that the answer holds it.
async fn patch(
    cluster: &Cluster,
    kind: Kind,
    namespace: &str,
    name: &str,
    suspend: bool,
) -> Result<(), PluginError> {
    let api: Api<DynamicObject> = match kind {
        Kind::Secret => cluster.secrets_in(&Scope::Namespace(namespace.to_owned())),
        Kind::Connection => cluster.connections(namespace),
    };
    let body = json!({ "spec": { "suspend": if suspend { Value::Bool(true) } else { Value::Null } } });
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PatchParams::default()
    };
    let answer = cluster
        .call(
            || format!("patching {} {name} in {namespace}", kind.singular()),
            api.patch(name, &params, &Patch::Merge(&body)),
        )
        .await?;
    let stored = answer.data.pointer("/spec/suspend").and_then(Value::as_bool);
    if suspend && stored != Some(true) {
        return Err(PluginError::Object(format!(
            "{}/{name}: the cluster's CRD has no spec.suspend (its operator predates it), so nothing \
             was suspended; upgrade the operator and its CRDs",
            kind.singular()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_should_take_kubectls_type_spellings() {
        for (argument, kind, name) in [
            ("app", Kind::Secret, "app"),
            ("fvs/app", Kind::Secret, "app"),
            ("ferrvaultsecret.ferrvault.com/app", Kind::Secret, "app"),
            ("fvc/prod", Kind::Connection, "prod"),
            ("FerrVaultConnection/prod", Kind::Connection, "prod"),
        ] {
            assert_eq!(Kind::parse(argument).expect(argument), (kind, name));
        }
        let refused = Kind::parse("secret/app").expect_err("another type is refused");
        assert_eq!(refused.exit_code(), 2);
    }
}
