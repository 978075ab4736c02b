//! `explain NAME [-o json|yaml]`: why a FerrVaultSecret is not Ready, or why no sync is due and
//! when the next one is, by the operator's rules ([`verdict`](crate::verdict)) applied to its
//! status and to what the cluster shows now: its connection, the metadata of its token and CA
//! bundle Secrets and of its target ([`inputs`](crate::inputs)).
//!
//! # Guarantees
//! - Secrets are read as metadata only (`PartialObjectMetadata`): their values never reach the
//!   plugin. What cannot be read (403) is taken as recorded, and said so.
//! - The text shows strings from the cluster through [`printable`].

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use serde::Serialize;

use crate::{
    args::ExplainArgs,
    cluster::{Cluster, Scope},
    error::PluginError,
    inputs,
    object::SecretView,
    output::{emit, print_out, printable, relative, timestamp},
    verdict::{Because, Due, RuleSettings, Seen, judge},
};
use ferrvault_operator::rules::format_go_duration;

/// One reason a sync is due.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reason {
    /// Which rule: `ForceSync`, `NeverSynced`, `NotSyncedHere`, `InputsChanged`,
    /// `TargetChanged`, `RefreshDue`, `InvalidSpec`, `InvalidRefreshInterval`.
    pub code: &'static str,
    /// The sentence.
    pub text: String,
}

/// What `explain` says, as `-o json|yaml` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its Ready condition: status, reason, message.
    pub ready: Option<[String; 3]>,
    /// Requested keys absent in FerrVault (`status.missingKeys`).
    pub missing_keys: Vec<String>,
    /// `spec.suspend`.
    pub suspended: bool,
    /// `spec.refreshPolicy`.
    pub refresh_policy: String,
    /// The interval the operator uses, a Go duration (`0s`: no timer).
    pub interval: Option<String>,
    /// `status.lastSyncedAt`.
    pub last_synced_at: Option<Timestamp>,
    /// `Now`, `At`, `Never` or `Suspended`.
    pub due: &'static str,
    /// With `due: At`: when.
    pub next_due_at: Option<Timestamp>,
    /// With `due: Now`: why.
    pub because: Vec<Reason>,
    /// What could not be checked (no permission), taken as the last sync recorded it.
    pub unchecked: Vec<String>,
}

/// Runs `explain`.
///
/// # Errors
/// A request failed (404 for a missing FerrVaultSecret).
pub async fn run(cluster: &Cluster, args: ExplainArgs) -> Result<(), PluginError> {
    let namespace = cluster.namespace().to_owned();
    let object = cluster
        .call(
            || format!("getting ferrvaultsecret {} in {namespace}", args.name),
            cluster
                .secrets_in(&Scope::Namespace(namespace.clone()))
                .get(&args.name),
        )
        .await?;
    let view = SecretView::read(object)?;
    let (seen, unchecked) = look(cluster, &view).await?;
    let settings = RuleSettings {
        min_refresh_interval: args
            .min_refresh_interval
            .unwrap_or(RuleSettings::default().min_refresh_interval),
    };
    let now = Timestamp::now();
    let explanation = explain(&view, &seen, unchecked, settings, now);
    match args.output {
        Some(format) => emit(format, &explanation),
        None => print_out(&text(&explanation, now)),
    }
}

/// What the cluster shows besides the object, and what could not be read.
async fn look(cluster: &Cluster, view: &SecretView) -> Result<(Seen, Vec<String>), PluginError> {
    let mut unchecked = Vec::new();
    let Some(cr) = view.valid() else {
        return Ok((Seen::default(), unchecked));
    };
    let status = view.status();
    let inputs = inputs::read(cluster, cr, status.observed_inputs.as_deref()).await?;
    if inputs.is_none() {
        unchecked.push("inputs (no permission to read the connection or its Secrets)".to_owned());
    }
    let target = cr.spec.target_name(&view.name).to_owned();
    let secrets = cluster.api::<Secret>(&view.namespace);
    let target_version = match cluster
        .call(
            || format!("getting the metadata of secret {target} in {}", view.namespace),
            secrets.get_metadata_opt(&target),
        )
        .await
    {
        Ok(meta) => Some(meta.and_then(|m| m.resource_version())),
        Err(error) if error.is_forbidden() => {
            unchecked.push("target (no permission to read its metadata)".to_owned());
            None
        }
        Err(error) => return Err(error),
    };
    Ok((
        Seen {
            inputs,
            target_version,
        },
        unchecked,
    ))
}

/// The explanation of `view`, with what the cluster shows (`seen`), at `now`.
pub fn explain(
    view: &SecretView,
    seen: &Seen,
    unchecked: Vec<String>,
    settings: RuleSettings,
    now: Timestamp,
) -> Explanation {
    let verdict = judge(view, Some(seen), settings, now);
    let status = view.status();
    let (due, next_due_at, because) = match verdict.due {
        Due::Suspended => ("Suspended", None, Vec::new()),
        Due::Now(because) => ("Now", None, because.iter().map(reason).collect()),
        Due::At(at) => ("At", Some(at), Vec::new()),
        Due::Never => ("Never", None, Vec::new()),
    };
    Explanation {
        namespace: view.namespace.clone(),
        name: view.name.clone(),
        ready: view.ready().map(|c| [c.status, c.reason, c.message]),
        missing_keys: status.missing_keys.clone(),
        suspended: view.controls.suspend,
        refresh_policy: view.controls.refresh_policy.as_str().to_owned(),
        interval: verdict.interval.map(|i| format_go_duration(i.effective)),
        last_synced_at: status.last_synced_at.map(|t| t.0),
        due,
        next_due_at,
        because,
        unchecked,
    }
}

/// The sentence of one reason.
fn reason(because: &Because) -> Reason {
    let (code, text) = match because {
        Because::InvalidSpec(problem) => (
            "InvalidSpec",
            format!("the object does not match its type ({problem}); only an edit fixes it"),
        ),
        Because::InvalidInterval(problem) => (
            "InvalidRefreshInterval",
            format!("spec.refreshInterval: {problem}"),
        ),
        Because::ForceSync(value) => (
            "ForceSync",
            format!("a sync was forced (ferrvault.com/force-sync={value}) and no pass has synced for it yet"),
        ),
        Because::NeverSynced => ("NeverSynced", "it has never synced".to_owned()),
        Because::NotSyncedHere => (
            "NotSyncedHere",
            "the last pass did not sync this generation (see Ready), or a rollout restart is still due; \
             the operator retries"
                .to_owned(),
        ),
        Because::InputsChanged(changes) if changes.is_empty() => (
            "InputsChanged",
            "the last sync recorded no inputs (an older operator's sync)".to_owned(),
        ),
        Because::InputsChanged(changes) => {
            let listed: Vec<String> = changes
                .iter()
                .map(|c| {
                    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".to_owned());
                    format!("{} {} → {}", c.input, show(&c.recorded), show(&c.now))
                })
                .collect();
            (
                "InputsChanged",
                format!("its inputs changed since the last sync: {}", listed.join(", ")),
            )
        }
        Because::TargetChanged { recorded, now } => (
            "TargetChanged",
            match now {
                None => "the target Secret does not exist".to_owned(),
                Some(now) => format!(
                    "the target Secret changed since the last sync (resourceVersion {} → {now})",
                    recorded.as_deref().unwrap_or("(none)")
                ),
            },
        ),
        Because::RefreshDue => ("RefreshDue", "the scheduled refresh is due".to_owned()),
    };
    Reason { code, text }
}

/// The text of `explanation`, as `kubectl describe` lays fields out.
fn text(e: &Explanation, now: Timestamp) -> String {
    let mut lines = vec![
        format!("Name:          {}", e.name),
        format!("Namespace:     {}", e.namespace),
    ];
    lines.push(match &e.ready {
        Some([status, reason, message]) => format!("Ready:         {status} ({reason}): {message}"),
        None => "Ready:         - (no pass yet)".to_owned(),
    });
    if !e.missing_keys.is_empty() {
        lines.push(format!("Missing keys:  {}", e.missing_keys.join(", ")));
    }
    lines.push(format!("Suspended:     {}", e.suspended));
    lines.push(format!(
        "Policy:        {}{}",
        e.refresh_policy,
        e.interval
            .as_ref()
            .map(|i| format!(", refresh every {i}"))
            .unwrap_or_default()
    ));
    lines.push(match e.last_synced_at {
        Some(at) => format!("Last sync:     {} ({})", timestamp(at), relative(at, now)),
        None => "Last sync:     never".to_owned(),
    });
    match (e.due, e.next_due_at) {
        (_, Some(at)) => lines.push(format!(
            "Next sync:     {} ({}): nothing is due before then (synced at this generation, inputs and \
             target as that sync left them)",
            timestamp(at),
            relative(at, now)
        )),
        ("Suspended", None) => {
            lines.push("Next sync:     none while suspended (kubectl ferrvault resume)".to_owned())
        }
        ("Never", None) => lines
            .push("Next sync:     on a change only (no scheduled refresh): nothing is due now".to_owned()),
        _ => {
            lines.push("Next sync:     now, because:".to_owned());
            lines.extend(e.because.iter().map(|r| format!("  - {}", r.text)));
        }
    }
    for what in &e.unchecked {
        lines.push(format!("Not checked:   {what}"));
    }
    lines.iter().map(|l| printable(l) + "\n").collect()
}
