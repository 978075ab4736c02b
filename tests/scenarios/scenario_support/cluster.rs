//! Both simulators in the test process, the CRDs installed, and what scenarios read back.

use std::{collections::BTreeMap, time::Duration};

use ferrvault_operator::api::{FerrVaultConnection, FerrVaultSecret, FerrVaultSecretSpec};
use ferrvault_sim::ferrvault::{SimConfig, rate_limit::RateLimit};
use ferrvault_testkit::cluster::{Cluster as SimCluster, ClusterOptions};
use k8s_openapi::{
    api::apps::v1::Deployment,
    api::{core::v1::Secret, events::v1::Event},
    apimachinery::pkg::apis::meta::v1::Condition,
};
use kube::{
    Api,
    api::{DynamicObject, ListParams, PostParams},
};

use super::{
    fixtures::{API_KEY, DB_URL, NS, PROD_TOKEN, connection_spec, ready, secret_spec},
    leaks::Evidence,
    poll_until,
};

/// The FerrVault vault every scenario reads and its token's label in the simulator's stats.
pub const VAULT: &str = "prod";
pub const TOKEN_LABEL: &str = "prod-sat";
/// The token Secret and connection healthy FerrVaultSecrets use.
pub const TOKEN_SECRET: &str = "prod-token";
pub const CONNECTION: &str = "prod";

/// FerrVault with vault [`VAULT`] holding `DB_URL` and `API_KEY`, read by [`PROD_TOKEN`]
/// (labelled [`TOKEN_LABEL`]), limited to `rate` per token.
pub fn ferrvault_config(rate: RateLimit, rejected_requests_spend_budget: bool) -> SimConfig {
    SimConfig {
        rate_limit: rate,
        rejected_requests_spend_budget,
        ..SimConfig::default()
    }
    .vault(VAULT, [("DB_URL", DB_URL), ("API_KEY", API_KEY)])
    .service_account_token(PROD_TOKEN, VAULT)
    .token_label(PROD_TOKEN, TOKEN_LABEL)
}

/// A FerrVault that never rate-limits a scenario that is not about rate limits.
pub fn unlimited() -> RateLimit {
    RateLimit {
        per_second: 10_000.0,
        burst: 10_000,
    }
}

/// The Kubernetes and FerrVault simulators, running in the test process, the test's own client
/// audited as `scenario-test`: [`ferrvault_testkit::cluster::Cluster`] (which it dereferences
/// to: `cluster.kube`, `cluster.kubeconfig(…)`, `cluster.secrets()`) with the scenarios'
/// builders and reads.
pub struct Cluster(SimCluster);

impl std::ops::Deref for Cluster {
    type Target = SimCluster;

    fn deref(&self) -> &SimCluster {
        &self.0
    }
}

impl Cluster {
    /// Starts both simulators and installs the CRDs.
    pub async fn start(ferrvault: SimConfig) -> Cluster {
        let options = ClusterOptions {
            client_identity: Some("scenario-test".to_owned()),
            ..ClusterOptions::default()
        };
        Cluster(SimCluster::start_with(ferrvault, options).await)
    }

    /// Creates Secret `name` with string `data`.
    pub async fn create_secret(&self, name: &str, data: &[(&str, &str)]) {
        let secret: Secret = serde_json::from_value(serde_json::json!({
            "metadata": { "name": name },
            "stringData": data.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>(),
        }))
        .expect("a Secret");
        self.secrets()
            .create(&PostParams::default(), &secret)
            .await
            .expect("create Secret");
    }

    /// A minimal Deployment `name` for rollout restarts.
    pub async fn create_deployment(&self, name: &str) {
        let deployment: Deployment = serde_json::from_value(serde_json::json!({
            "metadata": { "name": name },
            "spec": {
                "selector": { "matchLabels": { "app": name } },
                "template": {
                    "metadata": { "labels": { "app": name } },
                    "spec": { "containers": [{ "name": "app", "image": "example/app:1" }] }
                }
            }
        }))
        .expect("a Deployment");
        Api::<Deployment>::namespaced(self.client.clone(), NS)
            .create(&PostParams::default(), &deployment)
            .await
            .expect("create Deployment");
    }

    /// The healthy path: token Secret [`TOKEN_SECRET`] and connection [`CONNECTION`].
    pub async fn healthy_connection(&self) {
        self.create_secret(TOKEN_SECRET, &[("token", PROD_TOKEN)]).await;
        self.connection(CONNECTION, TOKEN_SECRET).await;
    }

    /// A ferrvault-mode connection reading its token from `token_secret`/`token`.
    pub async fn connection(&self, name: &str, token_secret: &str) {
        self.connection_to(name, token_secret, &self.fv.url()).await;
    }

    /// A ferrvault-mode connection to the FerrVault at `url`.
    pub async fn connection_to(&self, name: &str, token_secret: &str, url: &str) {
        self.fvc()
            .create(
                &PostParams::default(),
                &FerrVaultConnection::new(name, connection_spec(url, token_secret)),
            )
            .await
            .expect("create FerrVaultConnection");
    }

    /// FerrVaultSecret `name` with `spec`.
    pub async fn create_fvs(&self, name: &str, spec: FerrVaultSecretSpec) {
        self.fvs()
            .create(&PostParams::default(), &FerrVaultSecret::new(name, spec))
            .await
            .expect("create FerrVaultSecret");
    }

    /// `count` FerrVaultSecrets `<prefix>-<i>` reading [`VAULT`] through `connection`.
    pub async fn create_many(&self, prefix: &str, count: usize, connection: &str) -> Vec<String> {
        let mut names = Vec::with_capacity(count);
        for i in 0..count {
            let name = format!("{prefix}-{i:03}");
            self.create_fvs(&name, secret_spec(connection, VAULT)).await;
            names.push(name);
        }
        names
    }

    /// FerrVaultSecrets as stored ([`SimCluster::raw`]).
    pub fn raw_fvs(&self) -> Api<DynamicObject> {
        self.raw::<FerrVaultSecret>()
    }

    /// FerrVaultConnections as stored ([`SimCluster::raw`]).
    pub fn raw_fvc(&self) -> Api<DynamicObject> {
        self.raw::<FerrVaultConnection>()
    }

    /// Every FerrVaultSecret's Ready condition by name (`None`: no condition yet).
    pub async fn ready_conditions(&self) -> BTreeMap<String, Option<Condition>> {
        ready_conditions_of(&self.raw_fvs()).await
    }

    /// Every FerrVaultConnection's Ready condition by name (`None`: no condition yet).
    pub async fn connection_ready_conditions(&self) -> BTreeMap<String, Option<Condition>> {
        ready_conditions_of(&self.raw_fvc()).await
    }

    /// Waits until every FerrVaultSecret in `names` has Ready `status`/`reason`.
    pub async fn wait_reason(&self, names: &[String], status: &str, reason: &str, within: Duration) {
        wait_reason_of(&self.raw_fvs(), names, status, reason, within).await;
    }

    /// Waits until every FerrVaultConnection in `names` has Ready `status`/`reason`.
    pub async fn wait_connection_reason(
        &self,
        names: &[String],
        status: &str,
        reason: &str,
        within: Duration,
    ) {
        wait_reason_of(&self.raw_fvc(), names, status, reason, within).await;
    }

    /// Asserts that the target Secret `name` holds exactly the vault's two keys and values: a
    /// key the vault does not have (left over, or written by someone else) fails it too.
    pub async fn assert_synced_target(&self, name: &str) {
        let secret = self
            .secrets()
            .get(name)
            .await
            .unwrap_or_else(|e| panic!("target {name}: {e}"));
        let data = secret.data.unwrap_or_default();
        let held: BTreeMap<&str, &[u8]> = data.iter().map(|(k, v)| (k.as_str(), v.0.as_slice())).collect();
        let vault = BTreeMap::from([("API_KEY", API_KEY.as_bytes()), ("DB_URL", DB_URL.as_bytes())]);
        // Keys only in the message: the values are secrets.
        assert!(
            held == vault,
            "target {name} should hold exactly the vault's keys {:?} with its values; it holds {:?}",
            vault.keys().collect::<Vec<_>>(),
            held.keys().collect::<Vec<_>>()
        );
    }

    /// Reveal requests the FerrVault simulator received for [`VAULT`].
    pub fn vault_requests(&self) -> u64 {
        self.fv.stats().total.vaults.get(VAULT).copied().unwrap_or(0)
    }

    /// Events, FerrVaultSecret and FerrVaultConnection statuses, and the simulators' own
    /// accounting, for the leak scan.
    pub async fn evidence(&self) -> Evidence {
        let mut evidence = Evidence::default();
        let events = Api::<Event>::all(self.client.clone())
            .list(&ListParams::default())
            .await
            .expect("list Events");
        evidence.add(
            "events",
            serde_json::to_string(&events.items).expect("Events serialise"),
        );
        let fvs = self
            .raw_fvs()
            .list(&ListParams::default())
            .await
            .expect("list fvs");
        let statuses: Vec<_> = fvs.items.iter().map(|cr| cr.data.get("status")).collect();
        evidence.add(
            "FerrVaultSecret statuses",
            serde_json::to_string(&statuses).expect("serialise"),
        );
        let fvc = self
            .raw_fvc()
            .list(&ListParams::default())
            .await
            .expect("list fvc");
        let statuses: Vec<_> = fvc.items.iter().map(|c| c.data.get("status")).collect();
        evidence.add(
            "FerrVaultConnection statuses",
            serde_json::to_string(&statuses).expect("serialise"),
        );
        evidence.add(
            "kube audit",
            serde_json::to_string(&self.kube.audit()).expect("serialise"),
        );
        evidence
    }
}

/// Every object's Ready condition by name (`None`: no condition yet), read untyped from `api`.
async fn ready_conditions_of(api: &Api<DynamicObject>) -> BTreeMap<String, Option<Condition>> {
    api.list(&ListParams::default())
        .await
        .expect("list custom resources")
        .items
        .into_iter()
        .map(|cr| {
            let name = cr.metadata.name.clone().unwrap_or_default();
            let conditions: Vec<Condition> = cr
                .data
                .pointer("/status/conditions")
                .and_then(|c| serde_json::from_value(c.clone()).ok())
                .unwrap_or_default();
            (name, ready(Some(&conditions)).cloned())
        })
        .collect()
}

/// Waits until every object of `api` in `names` has Ready `status`/`reason`.
async fn wait_reason_of(
    api: &Api<DynamicObject>,
    names: &[String],
    status: &str,
    reason: &str,
    within: Duration,
) {
    poll_until(
        &format!("{} objects Ready={status} reason {reason}", names.len()),
        within,
        || async {
            let conditions = ready_conditions_of(api).await;
            let pending: Vec<String> = names
                .iter()
                .filter(|name| {
                    !matches!(conditions.get(*name), Some(Some(c)) if c.status == status && c.reason == reason)
                })
                .map(|name| format!("{name}: {:?}", conditions.get(name).cloned().flatten().map(|c| (c.status, c.reason))))
                .collect();
            if pending.is_empty() { Ok(()) } else { Err(format!("{} pending, e.g. {:?}", pending.len(), &pending[..pending.len().min(5)])) }
        },
    )
    .await;
}
