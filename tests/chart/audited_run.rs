//! One run of the real operator from the rendered chart, against the Kubernetes simulator, doing
//! everything the rendered RBAC is for, with every request it made under its ServiceAccount
//! recorded by the simulator's audit:
//!
//! - the demo's samples synced (connection probes, target Secrets written, Events, the Lease,
//!   the content-hash key created);
//! - a target whose `type` changes (replaced: delete, then create);
//! - a content change restarting a Deployment, a StatefulSet and a DaemonSet;
//! - a FerrVaultSecret whose connection does not exist (read with a GET, not from the store);
//! - with `metrics.secure.enabled`, a scrape by a ServiceAccount the rendering binds to the
//!   metrics-reader ClusterRole (TokenReview, SubjectAccessReview).
//!
//! The rendered RBAC objects are applied to the simulator with `kubectl apply`; the simulator
//! does not enforce them here, [`Permissions`] judges the recorded requests instead.

use std::{collections::BTreeSet, process::Command, time::Duration};

use ferrvault_operator::api::{ClusterFerrVaultSecret, FerrVaultConnection, FerrVaultSecret};
use ferrvault_sim::{
    ferrvault::FerrVaultSim,
    kube::{AuditEntry, KubeSim},
};
use ferrvault_testkit::sample_world::{self, NAMESPACE as SAMPLES};
use k8s_openapi::{api::core::v1::Secret, apimachinery::pkg::apis::meta::v1::Condition};
use kube::{
    Api,
    api::{DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams},
    core::{ApiResource, GroupVersionKind},
};
use serde_json::{Value, json};

use crate::{
    operator_run::start,
    process_support::{free_port, wait_for_200},
    *,
};

/// The ServiceAccount scraping the secure metrics in [`SCRAPER_SETS`].
pub const SCRAPER: (&str, &str) = ("monitoring", "prometheus");

/// Secure metrics with [`SCRAPER`] bound to the metrics-reader ClusterRole.
pub const SCRAPER_SETS: &[&str] = &[
    "metrics.secure.enabled=true",
    "metrics.secure.readerSubjects[0].kind=ServiceAccount",
    "metrics.secure.readerSubjects[0].name=prometheus",
    "metrics.secure.readerSubjects[0].namespace=monitoring",
];

/// What one run saw.
pub struct AuditedRun {
    /// The rendering the operator ran from.
    pub rendering: Rendering,
    /// The rendered RBAC of the operator's ServiceAccount.
    pub permissions: Permissions,
    /// Every resource request the operator made, as the simulator audited it.
    pub requests: Vec<AuditEntry>,
    /// Requests the API server makes on the operator's behalf, which no audit entry shows: the
    /// admission check of a `blockOwnerDeletion` owner reference (`update` of the owner's
    /// `finalizers` subresource), once per owner reference the operator set.
    pub implied: Vec<AuditEntry>,
}

impl AuditedRun {
    /// Every request, audited or implied.
    pub fn all_requests(&self) -> impl Iterator<Item = &AuditEntry> {
        self.requests.iter().chain(&self.implied)
    }
}

/// `resource/subresource` of an audit entry.
pub fn resource_of(entry: &AuditEntry) -> String {
    match entry.subresource.as_str() {
        "" => entry.resource.clone(),
        sub => format!("{}/{sub}", entry.resource),
    }
}

/// `kubectl apply -f -` of one object; `Err` with kubectl's output.
fn kubectl_apply(kubeconfig: &str, object: &Value) -> Result<(), String> {
    use std::io::Write;
    let mut child = Command::new("kubectl")
        .args(["--kubeconfig", kubeconfig, "apply", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl is installed");
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(object.to_string().as_bytes())
        .expect("write the manifest");
    let output = child.wait_with_output().expect("kubectl finishes");
    if output.status.success() {
        Ok(())
    } else {
        Err(tools::describe(&output))
    }
}

fn ready(conditions: &[Condition], kind: &str) -> bool {
    conditions.iter().any(|c| c.type_ == kind && c.status == "True")
}

async fn samples_synced(client: &kube::Client) -> bool {
    let lp = ListParams::default();
    let secrets: Api<FerrVaultSecret> = Api::namespaced(client.clone(), SAMPLES);
    let connections: Api<FerrVaultConnection> = Api::namespaced(client.clone(), SAMPLES);
    let (Ok(secrets), Ok(connections)) = (secrets.list(&lp).await, connections.list(&lp).await) else {
        return false;
    };
    let samples = sample_world::manifests().expect("samples parse");
    let secrets_done = secrets.items.len() == sample_world::secrets_in_namespace(&samples)
        && secrets.into_iter().all(|s| {
            let conditions = s.status.map(|s| s.conditions).unwrap_or_default();
            // A suspended sample is settled once it says so; the sample with a rollout target must
            // also have restarted its Deployment.
            ready(&conditions, "Suspended")
                || (ready(&conditions, "Ready")
                    && (s.spec.rollout_restart.is_empty() || ready(&conditions, "RolloutRestarted")))
        });
    // The cluster secret sample: its three copies written.
    let cluster: Api<ClusterFerrVaultSecret> = Api::all(client.clone());
    let cluster_done = cluster.list(&lp).await.is_ok_and(|list| {
        list.items.len() == 1
            && list
                .into_iter()
                .all(|c| ready(&c.status.map(|s| s.conditions).unwrap_or_default(), "Ready"))
    });
    secrets_done
        && cluster_done
        && connections.items.len() == 2
        && connections
            .into_iter()
            .all(|c| ready(&c.status.map(|s| s.conditions).unwrap_or_default(), "Ready"))
}

/// Waits up to a minute for `done`, failing with the operator's output.
async fn until<F, Fut>(what: &str, operator: &ferrvault_sim::testkit::process::Spawned, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !done().await {
        assert!(
            std::time::Instant::now() < deadline,
            "{what} did not happen within 60s:\n{}",
            operator.output()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// A StatefulSet `cache` and a DaemonSet `agent` in the samples' namespace, restarted by
/// `app-config` besides its Deployment.
async fn more_workloads(admin: &kube::Client) {
    for (kind, plural, name) in [
        ("StatefulSet", "statefulsets", "cache"),
        ("DaemonSet", "daemonsets", "agent"),
    ] {
        let resource = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("apps", "v1", kind), plural);
        let api: Api<DynamicObject> = Api::namespaced_with(admin.clone(), SAMPLES, &resource);
        let object: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "apps/v1",
            "kind": kind,
            "metadata": {"name": name, "namespace": SAMPLES},
            "spec": {
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": name, "image": "registry.k8s.io/pause:3.10"}]}
                }
            }
        }))
        .expect("a workload");
        api.create(&PostParams::default(), &object)
            .await
            .expect("workload created");
    }
}

/// Renders with `sets`, runs the operator through everything its RBAC is for, and returns what
/// it did.
pub async fn audited_run(sets: &[&str]) -> AuditedRun {
    // The FerrVault simulator speaks plain http.
    // The FerrVault simulator speaks plain http on loopback, which the egress policy refuses by default.
    let sets = &[
        sets,
        &[
            "ferrvault.allowInsecureHttp=true",
            "ferrvault.allowedCIDRs={127.0.0.1/32}",
        ],
    ]
    .concat();
    let rendering = Rendering::new(sets);
    let account = rendering.names_of("ServiceAccount");
    assert_eq!(account.len(), 1, "{account:?}");
    let identity = format!("system:serviceaccount:{NAMESPACE}:{}", account[0]);
    let permissions = Permissions::of_service_account(&rendering.objects, NAMESPACE, &account[0]);
    let secure_metrics = sets.contains(&"metrics.secure.enabled=true");

    // The cluster: the namespaces the rendering lives in (Helm does not create them) and the
    // scraper's, then every rendered object, RBAC included.
    let sim = KubeSim::start().await.expect("the simulator starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let admin_kubeconfig = dir.path().join("admin.kubeconfig");
    sim.write_kubeconfig(&admin_kubeconfig).expect("kubeconfig");
    let admin_kubeconfig = admin_kubeconfig.display().to_string();
    let namespaces: BTreeSet<&str> = rendering
        .objects
        .iter()
        .filter_map(|object| object["metadata"]["namespace"].as_str())
        .chain([NAMESPACE, SCRAPER.0])
        .collect();
    for namespace in namespaces {
        kubectl_apply(
            &admin_kubeconfig,
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
        )
        .unwrap_or_else(|error| panic!("namespace {namespace} applied: {error}"));
    }
    let scraper = json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": SCRAPER.1, "namespace": SCRAPER.0}});
    kubectl_apply(&admin_kubeconfig, &scraper).expect("scraper ServiceAccount applied");
    for object in &rendering.objects {
        let kind = object["kind"].as_str().unwrap_or_default();
        kubectl_apply(&admin_kubeconfig, object)
            .unwrap_or_else(|error| panic!("kubectl apply {kind}: {error}"));
    }

    // The samples of the demo, against a FerrVault simulator.
    let mut manifests = sample_world::manifests().expect("samples parse");
    let ferrvault = FerrVaultSim::start(sample_world::ferrvault_config(&manifests))
        .await
        .expect("FerrVault simulator starts");
    sample_world::point_connections_at(&mut manifests, &ferrvault.url());
    let admin = sim.client();
    sample_world::apply_samples(&admin, &manifests)
        .await
        .expect("samples applied");
    more_workloads(&admin).await;

    // The operator, started from the rendered Deployment, as the ServiceAccount.
    // The kubeconfig impersonates the account (`users[].user.as`): the audit records that name.
    let operator_kubeconfig = dir.path().join("operator.kubeconfig");
    sim.write_kubeconfig_as(&operator_kubeconfig, &identity)
        .expect("kubeconfig");
    let (probes, metrics) = (free_port(), free_port());
    let launch = launch(sets)
        .with_flag("health-probe-bind-address", &format!("127.0.0.1:{probes}"))
        .with_flag("metrics-bind-address", &format!("127.0.0.1:{metrics}"))
        .with_flag("kubeconfig", &operator_kubeconfig.display().to_string());
    let mut operator = start(&launch);
    operator.wait_for_line("http servers listening", Duration::from_secs(30));
    wait_for_200(
        &format!("http://127.0.0.1:{probes}/readyz"),
        Duration::from_secs(30),
    )
    .await;
    until("the samples' sync", &operator, || samples_synced(&admin)).await;

    if secure_metrics {
        let token = sim.register_identity(&format!("system:serviceaccount:{}:{}", SCRAPER.0, SCRAPER.1));
        let _ = rustls::crypto::ring::default_provider().install_default();
        let scrape = reqwest::Client::builder()
            .tls_danger_accept_invalid_certs(true)
            .build()
            .expect("client")
            .get(format!("https://127.0.0.1:{metrics}/metrics"))
            .bearer_auth(token)
            .send()
            .await
            .expect("scrape");
        assert_eq!(
            scrape.status(),
            200,
            "the rendered metrics-reader binding admits the scraper"
        );
    }

    // A target type change: the target is replaced (delete, then create).
    let secrets: Api<FerrVaultSecret> = Api::namespaced(admin.clone(), SAMPLES);
    let targets: Api<Secret> = Api::namespaced(admin.clone(), SAMPLES);
    secrets
        .patch(
            "api-key",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"target": {"type": "example.com/custom"}}})),
        )
        .await
        .expect("type change");
    until("the target's replacement", &operator, || async {
        targets
            .get("api-key")
            .await
            .is_ok_and(|s| s.type_.as_deref() == Some("example.com/custom"))
    })
    .await;

    // A content change: every rollout target is restarted (apps get + patch).
    let rollout_hash = |s: FerrVaultSecret| s.status.and_then(|s| s.last_rollout_hash);
    let before = rollout_hash(secrets.get("app-config").await.expect("app-config"));
    assert!(ferrvault.put_secret(sample_world::VAULT, "api_key", "rotated-api-key"));
    let restart_all = json!({"spec": {"refreshInterval": "29m", "rolloutRestart": [
        {"kind": "Deployment", "name": "web"},
        {"kind": "StatefulSet", "name": "cache"},
        {"kind": "DaemonSet", "name": "agent"}
    ]}});
    secrets
        .patch("app-config", &PatchParams::default(), &Patch::Merge(restart_all))
        .await
        .expect("spec change");
    until("the rollout", &operator, || async {
        let now = rollout_hash(secrets.get("app-config").await.expect("app-config"));
        now.is_some() && now != before
    })
    .await;

    // The first content back: its `Synced` Event recurs after another one, and folds into the
    // Event already written (a patch of its `series`).
    let original = sample_world::VAULT_SECRETS
        .iter()
        .find(|(key, _)| *key == "api_key")
        .map(|(_, value)| *value)
        .expect("the sample vault holds api_key");
    assert!(ferrvault.put_secret(sample_world::VAULT, "api_key", original));
    secrets
        .patch(
            "app-config",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"refreshInterval": "28m"}})),
        )
        .await
        .expect("spec change");
    until(
        "the first content's Synced Event counted again",
        &operator,
        || async {
            sim.audit()
                .iter()
                .any(|e| e.verb == "patch" && e.resource == "events" && e.namespace == SAMPLES)
        },
    )
    .await;

    // A FerrVaultSecret naming a connection that does not exist: the connection store does not
    // hold it, so the pass reads it with a GET before acting on its absence (the first rule of
    // `src/reconcile/reads.rs`).
    let orphan: FerrVaultSecret = serde_json::from_value(json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "FerrVaultSecret",
        "metadata": {"name": "orphan"},
        "spec": {"connectionRef": {"name": "not-there"}, "vault": sample_world::VAULT},
    }))
    .expect("a FerrVaultSecret");
    secrets
        .create(&PostParams::default(), &orphan)
        .await
        .expect("orphan created");
    until("the missing connection reported", &operator, || async {
        secrets
            .get("orphan")
            .await
            .ok()
            .and_then(|s| s.status)
            .is_some_and(|s| s.conditions.iter().any(|c| c.reason == "ConnectionNotFound"))
    })
    .await;

    // The cluster secret deleted: its finalizer lets go of its copies (a delete each), then of
    // the object (a patch).
    let cluster: Api<ClusterFerrVaultSecret> = Api::all(admin.clone());
    cluster
        .delete("shared-config", &DeleteParams::default())
        .await
        .expect("the cluster secret deleted");
    until("the cluster secret gone", &operator, || async {
        cluster.get_opt("shared-config").await.is_ok_and(|c| c.is_none())
    })
    .await;

    operator.sigterm();
    let exit = operator.wait_exit(Duration::from_secs(30));
    assert_eq!(exit.code(), Some(0), "{}", operator.output());

    let requests: Vec<AuditEntry> = sim
        .audit()
        .into_iter()
        .filter(|e| e.identity == identity && !e.resource.is_empty())
        .collect();
    let implied = owner_reference_checks(&targets, &identity).await;
    AuditedRun {
        rendering,
        permissions,
        requests,
        implied,
    }
}

/// The `update` of `ferrvaultsecrets/finalizers` the API server's admission
/// (OwnerReferencesPermissionEnforcement) checks for each target Secret whose owner reference to
/// a FerrVaultSecret sets `blockOwnerDeletion`.
async fn owner_reference_checks(targets: &Api<Secret>, identity: &str) -> Vec<AuditEntry> {
    let list = targets
        .list(&ListParams::default())
        .await
        .expect("target Secrets");
    list.items
        .iter()
        .flat_map(|secret| secret.metadata.owner_references.iter().flatten())
        .filter(|owner| owner.kind == "FerrVaultSecret" && owner.block_owner_deletion == Some(true))
        .map(|owner| AuditEntry {
            time: String::new(),
            verb: "update".into(),
            group: "ferrvault.com".into(),
            resource: "ferrvaultsecrets".into(),
            subresource: "finalizers".into(),
            namespace: SAMPLES.into(),
            name: owner.name.clone(),
            identity: identity.into(),
            code: 200,
            path: String::new(),
        })
        .collect()
}
