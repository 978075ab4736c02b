//! `sync NAME | --all | --connection NAME [-A] [--no-wait] [--timeout D]`: forces a sync of each
//! selected FerrVaultSecret by setting `ferrvault.com/force-sync` to a fresh value (the time,
//! RFC 3339 with nanoseconds), then waits ([`wait`](crate::wait)) until each one is synced or
//! failed.
//!
//! # Guarantees
//! - Only the annotation is written (a JSON merge patch of `metadata.annotations`, field manager
//!   [`FIELD_MANAGER`]); every selected object gets the same value.
//! - A suspended object is not annotated: it is reported not synced at once (resume it first), as
//!   `flux reconcile` refuses a suspended object.
//! - `--connection NAME` selects the FerrVaultSecrets using that connection and annotates each of
//!   them, so each one's own `status.observedForceSync` shows its pass (the connection itself is
//!   not annotated).
//! - Exit 0 only when every selected object synced (or, with `--no-wait`, was annotated).

use jiff::Timestamp;
use kube::api::{ListParams, Patch, PatchParams};
use serde::Serialize;
use serde_json::json;

use crate::{
    args::{OutputFormat, SyncArgs},
    cluster::{Cluster, FIELD_MANAGER, Scope},
    error::PluginError,
    object::{FORCE_SYNC_ANNOTATION, SecretView},
    output::{emit, print_out, printable},
    wait::{Outcome, SyncResult, until_settled},
};

/// The `-o json|yaml` document.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport {
    /// The `ferrvault.com/force-sync` value set on every object.
    pub force_sync: String,
    /// One per selected object.
    pub items: Vec<SyncResult>,
}

/// Runs `sync`.
///
/// # Errors
/// A request failed, nothing was selected by `NAME`/`--connection`, or some object did not sync
/// ([`PluginError::Unfinished`], after the results are printed).
pub async fn run(cluster: &Cluster, args: SyncArgs) -> Result<(), PluginError> {
    let scope = cluster.scope(args.all_namespaces);
    let selected = select(cluster, &args, &scope).await?;
    if selected.is_empty() {
        eprintln!("No resources found {}.", scope.describe());
        return Ok(());
    }
    let value = Timestamp::now().to_string();
    let requested_at = Timestamp::now();
    let mut results = Vec::new();
    let mut annotated = Vec::new();
    for view in selected {
        if view.controls.suspend {
            results.push(SyncResult::from_view(
                &view,
                Outcome::Suspended,
                "suspended: resume it first",
            ));
            continue;
        }
        annotate(cluster, &view, &value).await?;
        annotated.push(view);
    }
    eprintln!(
        "► {FORCE_SYNC_ANNOTATION}={value} set on {} FerrVaultSecret(s)",
        annotated.len()
    );
    if args.no_wait {
        results.extend(
            annotated
                .iter()
                .map(|view| SyncResult::from_view(view, Outcome::Requested, "sync requested")),
        );
    } else if !annotated.is_empty() {
        results.extend(until_settled(cluster, &scope, annotated, &value, requested_at, args.timeout).await?);
    }
    report(&value, &results, args.output, &scope)?;
    let unfinished = results
        .iter()
        .filter(|r| !matches!(r.outcome, Outcome::Synced | Outcome::Requested))
        .count();
    match unfinished {
        0 => Ok(()),
        n => Err(PluginError::Unfinished(format!(
            "{n} of {} FerrVaultSecret(s) not synced",
            results.len()
        ))),
    }
}

/// The objects `args` select: one by name (404 if missing), all of the scope, or those using a
/// connection (an error when none does).
async fn select(cluster: &Cluster, args: &SyncArgs, scope: &Scope) -> Result<Vec<SecretView>, PluginError> {
    let api = cluster.secrets_in(scope);
    if let Some(name) = &args.name {
        let object = cluster
            .call(
                || format!("getting ferrvaultsecret {name} {}", scope.describe()),
                api.get(name),
            )
            .await?;
        return Ok(vec![SecretView::read(object)?]);
    }
    let listed = cluster
        .call(
            || format!("listing ferrvaultsecrets {}", scope.describe()),
            api.list(&ListParams::default()),
        )
        .await?;
    let mut views = listed
        .items
        .into_iter()
        .map(SecretView::read)
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(connection) = &args.connection {
        views.retain(|view| {
            view.valid()
                .is_some_and(|cr| cr.spec.connection_ref.name == *connection)
        });
        if views.is_empty() {
            return Err(PluginError::Object(format!(
                "no FerrVaultSecret uses connection {connection} {}",
                scope.describe()
            )));
        }
    }
    views.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    Ok(views)
}

/// Sets the force-sync annotation of `view` to `value`.
async fn annotate(cluster: &Cluster, view: &SecretView, value: &str) -> Result<(), PluginError> {
    let patch = json!({ "metadata": { "annotations": { FORCE_SYNC_ANNOTATION: value } } });
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PatchParams::default()
    };
    cluster
        .call(
            || format!("annotating ferrvaultsecret {} in {}", view.name, view.namespace),
            cluster
                .secrets_in(&Scope::Namespace(view.namespace.clone()))
                .patch(&view.name, &params, &Patch::Merge(&patch)),
        )
        .await
        .map(drop)
}

/// Prints `results`: a line per object, or the `-o` document.
fn report(
    value: &str,
    results: &[SyncResult],
    output: Option<OutputFormat>,
    scope: &Scope,
) -> Result<(), PluginError> {
    if let Some(format) = output {
        let report = SyncReport {
            force_sync: value.to_owned(),
            items: results.to_vec(),
        };
        return emit(format, &report);
    }
    let mut text = String::new();
    for result in results {
        let object = match scope {
            Scope::All => format!("ferrvaultsecret/{} -n {}", result.name, result.namespace),
            Scope::Namespace(_) => format!("ferrvaultsecret/{}", result.name),
        };
        let detail = match result.outcome {
            Outcome::Synced | Outcome::Requested => String::new(),
            Outcome::Failed | Outcome::TimedOut | Outcome::Suspended | Outcome::Gone => format!(
                ": {} (Ready={} {})",
                result.message.as_deref().unwrap_or_default(),
                result.ready.as_deref().unwrap_or("-"),
                result.reason.as_deref().unwrap_or("-"),
            ),
        };
        text.push_str(&printable(&format!(
            "{object} {}{detail}",
            result.outcome.as_str()
        )));
        text.push('\n');
    }
    print_out(&text)
}
