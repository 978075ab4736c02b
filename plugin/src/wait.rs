//! The wait of `sync`: polls the annotated objects until each is synced or failed, printing a
//! progress line on stderr, bounded by `--timeout`.
//!
//! # When an object is settled ([`settle`])
//! - **Synced**: `status.observedForceSync` equals the value set and Ready is `True`.
//! - **Failed**: Ready is not `True`, and either the pass recorded the value or Ready turned so
//!   after the request (its `lastTransitionTime`, at the API server's second precision, is not
//!   before the request's second).
//! - **Gone** (deleted or recreated), **Suspended** meanwhile, or **Failed** when its annotation
//!   now holds another value (another sync superseded this one).
//!
//! # Guarantees
//! - One request per poll ([`POLL`]): a GET for one object, else one list of the scope.
//! - A progress line whenever the counts change, and at least every [`PROGRESS_EVERY`].
//! - Every object is settled, or reported [`Outcome::TimedOut`] with its Ready condition at the
//!   deadline.

use std::{collections::BTreeMap, time::Duration};

use jiff::Timestamp;
use kube::api::ListParams;
use serde::Serialize;
use tokio::time::Instant;

use crate::{
    cluster::{Cluster, Scope},
    error::PluginError,
    object::SecretView,
    output::human,
};

/// How often the objects are read again.
pub const POLL: Duration = Duration::from_millis(500);

/// The longest time between two progress lines.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// How a forced sync ended for one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Outcome {
    /// A pass synced it for this value.
    Synced,
    /// Its pass failed (Ready is not True), or another value replaced this one.
    Failed,
    /// Not settled before `--timeout`.
    TimedOut,
    /// `--no-wait`: annotated, not awaited.
    Requested,
    /// Suspended: not annotated, or suspended while waiting.
    Suspended,
    /// Deleted (or recreated) while waiting.
    Gone,
}

impl Outcome {
    /// How the outcome reads in a text line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Synced => "synced",
            Self::Failed => "failed",
            Self::TimedOut => "not synced before the timeout",
            Self::Requested => "sync requested",
            Self::Suspended => "not synced",
            Self::Gone => "gone",
        }
    }
}

/// What happened to one selected object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncResult {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// How its sync ended.
    pub outcome: Outcome,
    /// Its Ready condition's status when it ended (`None`: none yet).
    pub ready: Option<String>,
    /// Its Ready condition's reason.
    pub reason: Option<String>,
    /// Why it is not synced, or the Ready message.
    pub message: Option<String>,
}

impl SyncResult {
    /// The result `outcome` for `view` as it reads now, with `message`.
    pub fn from_view(view: &SecretView, outcome: Outcome, message: &str) -> Self {
        let ready = view.ready();
        Self {
            namespace: view.namespace.clone(),
            name: view.name.clone(),
            outcome,
            ready: ready.as_ref().map(|c| c.status.clone()),
            reason: ready.as_ref().map(|c| c.reason.clone()),
            message: Some(message.to_owned()),
        }
    }
}

/// Whether `current` (the object now; `None`: gone) is settled for the force-sync `value` set at
/// `requested_at`, and with which message; see the module doc.
pub fn settle(
    current: Option<&SecretView>,
    value: &str,
    requested_at: Timestamp,
) -> Option<(Outcome, String)> {
    let Some(view) = current else {
        return Some((Outcome::Gone, "deleted while waiting".to_owned()));
    };
    let controls = &view.controls;
    if controls.suspend {
        return Some((Outcome::Suspended, "suspended while waiting".to_owned()));
    }
    if controls.force_sync.as_deref() != Some(value) {
        return Some((
            Outcome::Failed,
            "its force-sync annotation was changed meanwhile (another sync?)".to_owned(),
        ));
    }
    let observed = controls.observed_force_sync.as_deref() == Some(value);
    let ready = view.ready();
    let message = ready.as_ref().map(|c| c.message.clone()).unwrap_or_default();
    match ready {
        Some(ready) if ready.status == "True" => observed.then_some((Outcome::Synced, message)),
        Some(ready) => {
            let since_request = ready.last_transition_time.0.as_second() >= requested_at.as_second();
            (observed || since_request).then_some((Outcome::Failed, message))
        }
        None => None,
    }
}

/// Waits until every object of `awaited` is settled for `value`, or `timeout` passes.
///
/// # Errors
/// A request failed.
pub async fn until_settled(
    cluster: &Cluster,
    scope: &Scope,
    awaited: Vec<SecretView>,
    value: &str,
    requested_at: Timestamp,
    timeout: Duration,
) -> Result<Vec<SyncResult>, PluginError> {
    let started = Instant::now();
    let deadline = started + timeout;
    let total = awaited.len();
    let mut pending = awaited;
    let mut done = Vec::new();
    let mut shown: Option<(usize, Instant)> = None;
    loop {
        let mut current = read(cluster, scope, &pending).await?;
        let mut waiting = Vec::new();
        for view in pending {
            let now = current.remove(&(view.namespace.clone(), view.name.clone()));
            let now = now.filter(|n| n.metadata().uid == view.metadata().uid);
            match settle(now.as_ref(), value, requested_at) {
                Some((outcome, message)) => {
                    done.push(SyncResult::from_view(
                        now.as_ref().unwrap_or(&view),
                        outcome,
                        &message,
                    ));
                }
                None => waiting.push(now.unwrap_or(view)),
            }
        }
        pending = waiting;
        let tick = Instant::now();
        if shown.is_none_or(|(count, at)| count != pending.len() || tick - at >= PROGRESS_EVERY) {
            let failed = done.iter().filter(|r| r.outcome != Outcome::Synced).count();
            eprintln!(
                "◎ waiting for {total} FerrVaultSecret(s): {} synced, {failed} failed, {} pending ({} elapsed, timeout {})",
                done.len() - failed,
                pending.len(),
                human(tick - started),
                human(timeout)
            );
            shown = Some((pending.len(), tick));
        }
        if pending.is_empty() {
            break;
        }
        if tick >= deadline {
            done.extend(pending.iter().map(|view| {
                let message = view.ready().map(|c| c.message).unwrap_or_default();
                SyncResult::from_view(view, Outcome::TimedOut, &message)
            }));
            break;
        }
        tokio::time::sleep(POLL.min(deadline - tick)).await;
    }
    done.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    Ok(done)
}

/// The objects of `pending` as they are now, by namespace and name (absent: gone).
async fn read(
    cluster: &Cluster,
    scope: &Scope,
    pending: &[SecretView],
) -> Result<BTreeMap<(String, String), SecretView>, PluginError> {
    let objects = match pending {
        [one] => {
            let api = cluster.secrets_in(&Scope::Namespace(one.namespace.clone()));
            let got = cluster
                .call(
                    || format!("getting ferrvaultsecret {} in {}", one.name, one.namespace),
                    api.get_opt(&one.name),
                )
                .await?;
            got.into_iter().collect()
        }
        _ => {
            cluster
                .call(
                    || format!("listing ferrvaultsecrets {}", scope.describe()),
                    cluster.secrets_in(scope).list(&ListParams::default()),
                )
                .await?
                .items
        }
    };
    objects
        .into_iter()
        .map(|object| {
            SecretView::read(object).map(|view| ((view.namespace.clone(), view.name.clone()), view))
        })
        .collect()
}

#[cfg(test)]
mod tests;
