//! `status [-n NS | -A] [-o json|yaml]`: a table of FerrVaultSecrets with their Ready reason,
//! last sync, next due, refresh policy and suspension.
//!
//! # Guarantees
//! - One list request: the next due time is [`verdict::judge`] on the object alone (its inputs
//!   and target taken as recorded; `explain` checks them too).
//! - Nothing of a Secret is read; the Ready message is the operator's (value-free by its
//!   guarantees) and is shown through [`printable`](crate::output::printable).

use jiff::Timestamp;
use kube::api::ListParams;
use serde::Serialize;

use crate::{
    args::StatusArgs,
    cluster::{Cluster, Scope},
    error::PluginError,
    object::SecretView,
    output::{emit, human, print_out, relative, table},
    verdict::{Due, RuleSettings, judge},
};

/// One FerrVaultSecret in `status`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusItem {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its Ready condition's status (`True`, `False`, `Unknown`); `None` before the first pass.
    pub ready: Option<String>,
    /// Its Ready condition's reason.
    pub reason: Option<String>,
    /// Its Ready condition's message.
    pub message: Option<String>,
    /// `status.lastSyncedAt`.
    pub last_synced_at: Option<Timestamp>,
    /// `Now`, `At` (see `nextDueAt`), `Never` (no scheduled refresh) or `Suspended`.
    pub due: &'static str,
    /// With `due: At`: when the next refresh is due.
    pub next_due_at: Option<Timestamp>,
    /// `spec.refreshPolicy` (`Periodic` when absent).
    pub refresh_policy: String,
    /// `spec.suspend`.
    pub suspended: bool,
    /// Whether a `ferrvault.com/force-sync` value waits for its pass.
    pub force_sync_pending: bool,
}

/// The `-o json|yaml` document: the items, as kubectl lists are.
#[derive(Debug, Serialize)]
pub struct StatusList {
    /// One per FerrVaultSecret, sorted by namespace and name.
    pub items: Vec<StatusItem>,
}

/// What `status` shows of `view` at `now`.
pub fn item(view: &SecretView, settings: RuleSettings, now: Timestamp) -> StatusItem {
    let ready = view.ready();
    let verdict = judge(view, None, settings, now);
    let (due, next_due_at) = match verdict.due {
        Due::Suspended => ("Suspended", None),
        Due::Now(_) => ("Now", None),
        Due::At(at) => ("At", Some(at)),
        Due::Never => ("Never", None),
    };
    StatusItem {
        namespace: view.namespace.clone(),
        name: view.name.clone(),
        ready: ready.as_ref().map(|c| c.status.clone()),
        reason: ready.as_ref().map(|c| c.reason.clone()),
        message: ready.map(|c| c.message),
        last_synced_at: view.status().last_synced_at.map(|t| t.0),
        due,
        next_due_at,
        refresh_policy: view.controls.refresh_policy.as_str().to_owned(),
        suspended: view.controls.suspend,
        force_sync_pending: view.controls.force_sync_pending(),
    }
}

/// Runs `status`.
///
/// # Errors
/// The list failed.
pub async fn run(cluster: &Cluster, args: StatusArgs) -> Result<(), PluginError> {
    let scope = cluster.scope(args.all_namespaces);
    let listed = cluster
        .call(
            || format!("listing ferrvaultsecrets {}", scope.describe()),
            cluster.secrets_in(&scope).list(&ListParams::default()),
        )
        .await?;
    let now = Timestamp::now();
    let mut items = listed
        .items
        .into_iter()
        .map(|object| SecretView::read(object).map(|view| item(&view, RuleSettings::default(), now)))
        .collect::<Result<Vec<_>, _>>()?;
    items.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    match args.output {
        Some(format) => emit(format, &StatusList { items }),
        None if items.is_empty() => {
            eprintln!("No resources found {}.", scope.describe());
            Ok(())
        }
        None => print_out(&text(&items, &scope, now)),
    }
}

/// The table of `items`; a NAMESPACE column with `-A`, as kubectl does.
fn text(items: &[StatusItem], scope: &Scope, now: Timestamp) -> String {
    let all = *scope == Scope::All;
    let mut headers = vec![
        "NAME",
        "READY",
        "REASON",
        "LAST SYNC",
        "NEXT DUE",
        "POLICY",
        "SUSPENDED",
    ];
    if all {
        headers.insert(0, "NAMESPACE");
    }
    let rows: Vec<Vec<String>> = items
        .iter()
        .map(|item| {
            let mut row = vec![
                item.name.clone(),
                item.ready.clone().unwrap_or_else(|| "-".to_owned()),
                item.reason.clone().unwrap_or_else(|| "-".to_owned()),
                item.last_synced_at.map_or_else(
                    || "never".to_owned(),
                    |at| human(std::time::Duration::try_from(now.duration_since(at)).unwrap_or_default()),
                ),
                match (item.due, item.next_due_at) {
                    (_, Some(at)) => relative(at, now),
                    ("Now", None) if item.force_sync_pending => "now (forced)".to_owned(),
                    ("Now", None) => "now".to_owned(),
                    ("Never", None) => "never".to_owned(),
                    _ => "-".to_owned(),
                },
                item.refresh_policy.clone(),
                item.suspended.to_string(),
            ];
            if all {
                row.insert(0, item.namespace.clone());
            }
            row
        })
        .collect();
    table(&headers, &rows)
}
