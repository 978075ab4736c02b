//! The ClusterFerrVaultConnection reconciler: its status says who it lets in and who it refuses
//! (counts of allowed, referencing and refused namespaces, the first 10 refused references), and
//! `ferrvault_connection_refused_references{connection}` counts the refused references.
//!
//! It also runs its change detection (`change_detection.rs`: with `changeDetection.mode:
//! Versions`, one poller for the connection and its `ChangeDetection` condition), and says what
//! its spec means to its FerrVaultSecrets: `Suspended=True/Suspended` while
//! `spec.suspend` is true (they then make no FerrVault request and show
//! `Suspended=True/ConnectionSuspended`), and the input generation they record
//! (`status.inputDigest`/`inputGeneration`: a suspend, a resume or an `allowedNamespaces` edit
//! re-syncs none of them).
//!
//! One pass reads the watches' stores only (the connection, the Namespaces' labels, every
//! FerrVaultSecret), never FerrVault (its poller lists, on its own task) and never a GET; it writes the status only when it changed.
//! It is enqueued by the connection's own new generation or first sighting, by any Namespace's
//! label change, and by a change of a FerrVaultSecret referencing it (see `watch/cluster.rs`).
//!
//! With `--shards N > 1` it also states how the shards split its token's reveal budget
//! (`status.budgetShare`, docs/sharding.md "Shared credentials"); and, running on the holder of
//! the empty namespace's shard only, it counts the references of the FerrVaultSecrets of the
//! shards that replica holds, a lower bound (docs/sharding.md "What a ClusterFerrVaultConnection's
//! status counts under shards"); `allowedNamespaces` stays exact.
//!
//! # Guarantees
//! - `refusedReferences` holds at most [`REFUSED_LISTED`] entries whatever the cluster holds; the
//!   counts are exact.
//! - The gauge has one series per ClusterFerrVaultConnection (cluster-scoped objects only cluster
//!   admins create), removed with it: its cardinality does not grow with tenants.
//! - A connection stored past its schema's bounds gets no status (its users report
//!   `InvalidConnection`).
//!
//! # Caveats
//! A FerrVaultSecret that moves from one cluster connection to another re-queues only the new
//! one; the old one's counts catch up at its next pass (any Namespace label change, its own
//! edit, or a restart).

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

use controller_actors::{ObjectKey, Outcome, ReconcileContext, Reconciler};
use jiff::Timestamp;
use kube::{
    Api, ResourceExt,
    api::{Patch, PatchParams},
};
use prometheus_client::{
    encoding::EncodeLabelSet, metrics::family::Family, metrics::gauge::Gauge, registry::Registry,
};
use serde_json::json;
use tracing::{Instrument, info_span, warn};

use super::change_detection;
use crate::{
    api::{
        ClusterFerrVaultConnection, ClusterFerrVaultConnectionStatus, ConnectionKind, NamespaceSelection,
        Reason,
    },
    ferrvault::{ClientConfig, describe_split},
    reconcile::{
        changes::cluster_id,
        context::Context,
        read::Reads,
        rules::{
            access::namespace_match::selects,
            bounds::cluster_bounds::cluster_connection_spec_problem,
            schedule::input_generation::{cluster_input_digest, cluster_input_generation},
            status::refresh_control::{suspend, without_suspension},
        },
        write::kube_error_text,
    },
};

/// The controller name of ClusterFerrVaultConnection keys.
pub(crate) const CLUSTER_CONNECTION_CONTROLLER: &str = "clusterferrvaultconnection";

/// How many refused references the status lists.
pub(crate) const REFUSED_LISTED: usize = 10;

/// The key of ClusterFerrVaultConnection `name` (cluster-scoped: no namespace).
pub(crate) fn cluster_connection_key(name: &str) -> ObjectKey {
    ObjectKey {
        controller: CLUSTER_CONNECTION_CONTROLLER,
        namespace: None,
        name: name.to_owned(),
    }
}

/// The label of the gauge: the cluster connection's name.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ConnectionLabel {
    /// The ClusterFerrVaultConnection's name.
    connection: String,
}

/// Reconciles the status of one ClusterFerrVaultConnection.
pub(crate) struct ClusterConnectionReconciler {
    /// What both reconcilers share (the client).
    ctx: Arc<Context>,
    /// The watches' stores.
    reads: Arc<Reads>,
    /// `ferrvault_connection_refused_references`.
    refused: RefusedGauge,
}

/// The gauge `ferrvault_connection_refused_references`, registered in `registry`.
pub(crate) fn register_refused_gauge(registry: &mut Registry) -> RefusedGauge {
    let refused = RefusedGauge::default();
    registry.register(
        "ferrvault_connection_refused_references",
        "FerrVaultSecrets referencing the ClusterFerrVaultConnection from a namespace it does not allow",
        refused.clone(),
    );
    refused
}

/// `ferrvault_connection_refused_references`, one series per ClusterFerrVaultConnection.
pub(crate) type RefusedGauge = Family<ConnectionLabel, Gauge>;

impl ClusterConnectionReconciler {
    /// The reconciler over the shared context, reading `reads`, setting `refused`.
    pub(crate) fn new(ctx: Arc<Context>, reads: Arc<Reads>, refused: RefusedGauge) -> Self {
        Self { ctx, reads, refused }
    }

    async fn run(&self, name: &str) -> Outcome {
        let stores = &self.reads.stores;
        let listed = async {
            stores.cluster_connections.wait_until_listed().await?;
            stores.namespaces.wait_until_listed().await?;
            stores.secrets.wait_until_listed().await
        };
        if let Err(e) = listed.await {
            return Outcome::Error {
                reason: "ClusterStoresUnavailable",
                message: e.to_string(),
            };
        }
        let label = ConnectionLabel {
            connection: name.to_owned(),
        };
        let Some(stored) = stores.cluster_connections.get("", name) else {
            self.ctx.changes.forget(&cluster_id(name));
            self.refused.remove(&label);
            return Outcome::done();
        };
        let Some(connection) = stored.valid() else {
            self.ctx.changes.forget(&cluster_id(name));
            return Outcome::done();
        };
        if cluster_connection_spec_problem(&connection.spec).is_err() {
            self.ctx.changes.forget(&cluster_id(name));
            return Outcome::done();
        }
        let namespaces: Vec<(String, BTreeMap<String, String>)> = stores
            .namespaces
            .state()
            .iter()
            .map(|n| {
                let meta = &n.metadata;
                (
                    meta.name.clone().unwrap_or_default(),
                    meta.labels.clone().unwrap_or_default(),
                )
            })
            .collect();
        let references: Vec<(String, String)> = stores
            .secrets
            .state()
            .iter()
            .filter_map(|s| s.valid())
            .filter(|s| {
                s.spec.connection_ref.kind == ConnectionKind::ClusterFerrVaultConnection
                    && s.spec.connection_ref.name == name
            })
            .map(|s| (s.namespace().unwrap_or_default(), s.name_any()))
            .collect();
        let (mut status, refused) = tally(&connection.spec.allowed_namespaces, &namespaces, &references);
        observe_spec(connection, &mut status);
        status.budget_share = budget_share(connection, self.ctx.ferrvault.config());
        let own = cluster_connection_key(name);
        change_detection::follow_cluster(&self.ctx, &self.reads, (connection, own), &mut status.conditions);
        self.refused
            .get_or_create(&label)
            .set(i64::try_from(refused).unwrap_or(i64::MAX));
        if connection.status.as_ref() == Some(&status) {
            return Outcome::done();
        }
        let api = Api::<ClusterFerrVaultConnection>::all(self.ctx.client.clone());
        let patch = json!({ "status": status });
        match api
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => Outcome::done(),
            Err(e) => {
                let message = kube_error_text(&e);
                warn!(%message, "cannot write the cluster connection's status");
                Outcome::Error {
                    reason: "StatusWriteFailed",
                    message,
                }
            }
        }
    }
}

/// The status of a connection allowing `selection`, given every namespace (name, labels) and
/// every reference to it (namespace, FerrVaultSecret name), and how many references it refuses.
pub(crate) fn tally(
    selection: &NamespaceSelection,
    namespaces: &[(String, BTreeMap<String, String>)],
    references: &[(String, String)],
) -> (ClusterFerrVaultConnectionStatus, usize) {
    let allowed: BTreeSet<&str> = namespaces
        .iter()
        .filter(|(name, labels)| selects(selection, name, labels))
        .map(|(name, _)| name.as_str())
        .collect();
    let referencing: BTreeSet<&str> = references.iter().map(|(ns, _)| ns.as_str()).collect();
    let mut refused: Vec<String> = references
        .iter()
        .filter(|(ns, _)| !allowed.contains(ns.as_str()))
        .map(|(ns, name)| format!("{ns}/{name}"))
        .collect();
    refused.sort();
    let refused_total = refused.len();
    let refused_namespaces = referencing.iter().filter(|ns| !allowed.contains(*ns)).count();
    refused.truncate(REFUSED_LISTED);
    let small = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let status = ClusterFerrVaultConnectionStatus {
        conditions: Vec::new(),
        allowed_namespaces: small(allowed.len()),
        referencing_namespaces: small(referencing.len()),
        refused_namespaces: small(refused_namespaces),
        refused_references: refused,
        last_checked_at: None,
        input_digest: None,
        input_generation: None,
        budget_share: None,
    };
    (status, refused_total)
}

/// What `status` says of `connection`'s spec besides the tally: `Suspended=True` while
/// `spec.suspend` is (the other conditions kept), and the input generation its FerrVaultSecrets
/// record ([`cluster_input_generation`]).
fn observe_spec(connection: &ClusterFerrVaultConnection, status: &mut ClusterFerrVaultConnectionStatus) {
    let previous = connection.status.clone().unwrap_or_default();
    let generation = connection.metadata.generation;
    status.conditions = previous.conditions;
    if connection.spec.is_suspended() {
        suspend(
            &mut status.conditions,
            Reason::Suspended,
            generation,
            Timestamp::now(),
        );
    } else {
        without_suspension(&mut status.conditions);
    }
    status.input_generation = cluster_input_generation(connection);
    status.input_digest = Some(cluster_input_digest(&connection.spec));
}

/// `status.budgetShare`: how the shards split the budget of `connection`'s token under the
/// client's `config` (`None` with one shard); an `oidc` connection's bearers are minted per
/// namespace, each spent by one shard, so not split.
fn budget_share(connection: &ClusterFerrVaultConnection, config: &ClientConfig) -> Option<String> {
    let split = describe_split(config.shards, config.rate_per_second, config.burst)?;
    Some(match connection.spec.token_secret_ref {
        Some(_) => split,
        None => NOT_SPLIT.to_owned(),
    })
}

/// `status.budgetShare` of an `oidc` connection under shards.
const NOT_SPLIT: &str = "not split: a bearer per namespace, each spent by one shard";

impl Reconciler for ClusterConnectionReconciler {
    async fn reconcile(&self, key: &ObjectKey, _rc: &ReconcileContext) -> Outcome {
        let span = info_span!("reconcile", clusterferrvaultconnection = %key.name);
        self.run(&key.name).instrument(span).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tally_should_count_exactly_and_list_only_the_first_ten_refused_references() {
        let selection = NamespaceSelection {
            names: vec!["a".into()],
            selector: None,
        };
        let namespaces: Vec<(String, BTreeMap<String, String>)> = ["a", "b", "c"]
            .iter()
            .map(|n| ((*n).to_owned(), BTreeMap::new()))
            .collect();
        let mut references = vec![("a".to_owned(), "ok".to_owned())];
        for i in 0..12 {
            references.push(("b".to_owned(), format!("s{i:02}")));
        }
        references.push(("c".to_owned(), "x".to_owned()));
        let (status, refused) = tally(&selection, &namespaces, &references);
        assert_eq!(
            (
                status.allowed_namespaces,
                status.referencing_namespaces,
                status.refused_namespaces
            ),
            (1, 3, 2)
        );
        assert_eq!(status.refused_references.len(), REFUSED_LISTED);
        assert_eq!(status.refused_references[0], "b/s00");
        assert_eq!(refused, 13, "every refused reference counts, listed or not");
    }

    #[test]
    fn budget_share_should_state_the_split_of_a_token_only_under_shards() {
        let connection = |spec: serde_json::Value| {
            let spec = serde_json::from_value(spec).expect("a spec");
            ClusterFerrVaultConnection::new("platform", spec)
        };
        let token = connection(serde_json::json!({
            "url": "https://ferrvault.example",
            "tokenSecretRef": { "namespace": "platform", "name": "token", "key": "token" },
        }));
        let oidc = connection(serde_json::json!({
            "url": "https://ferrvault.example",
            "oidc": {},
        }));
        let config = |shards| ClientConfig {
            shards,
            ..ClientConfig::default()
        };
        assert_eq!(
            budget_share(&token, &config(1)),
            None,
            "one shard: the whole budget, no field"
        );
        assert_eq!(budget_share(&oidc, &config(1)), None);
        let split = budget_share(&token, &config(8)).expect("split");
        assert!(split.starts_with("1/8 of 1 requests/s per shard"), "{split}");
        assert_eq!(budget_share(&oidc, &config(8)).as_deref(), Some(NOT_SPLIT));
    }
}
