//! The rendered RBAC against what the operator really does: the rendered manifests are applied to
//! the Kubernetes simulator with `kubectl apply`, the operator runs from the rendered Deployment
//! under the rendered ServiceAccount's identity and syncs the demo's samples (connection probe,
//! target Secret write, rollout restart, status patches, Events, the Lease), and every request the
//! simulator audited under that identity must be allowed by [`Permissions`].
//!
//! NOTE: the simulator stores the RBAC objects `kubectl apply` sends but has no authorizer; the
//! rendered rules are evaluated by [`Permissions`], which decides like the RBAC authorizer.

use std::{collections::BTreeSet, process::Command, time::Duration};

use ferrvault_dev::demo::{NAMESPACE as SAMPLES, fixtures};
use ferrvault_operator::{
    api::{FerrVaultConnection, FerrVaultSecret},
    reconcile::content_hash_key::CONTENT_HASH_KEY_SECRET,
};
use ferrvault_sim::{ferrvault::FerrVaultSim, kube::KubeSim};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{
    Api,
    api::{ListParams, Patch, PatchParams},
};
use serde_json::json;

use crate::{
    operator_run::start,
    process_support::{free_port, wait_for_200},
    *,
};

/// `kubectl apply -f -` of one object; `Err` with kubectl's output.
fn kubectl_apply(kubeconfig: &str, object: &serde_json::Value) -> Result<(), String> {
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
    let secrets_done = secrets.items.len() == 2
        && secrets.into_iter().all(|s| {
            let conditions = s.status.map(|s| s.conditions).unwrap_or_default();
            // The sample with a rollout target must also have restarted its Deployment.
            ready(&conditions, "Ready")
                && (s.spec.rollout_restart.is_empty() || ready(&conditions, "RolloutRestarted"))
        });
    secrets_done
        && connections.items.len() == 2
        && connections
            .into_iter()
            .all(|c| ready(&c.status.map(|s| s.conditions).unwrap_or_default(), "Ready"))
}

#[tokio::test(flavor = "multi_thread")]
async fn every_api_call_the_operator_makes_under_the_rendered_service_account_should_be_allowed_by_the_rendered_rbac()
 {
    check_every_call_is_allowed(DEFAULTS).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn with_watch_namespace_every_api_call_should_be_allowed_by_the_namespaced_roles() {
    check_every_call_is_allowed(&["watchNamespace=demo"]).await;
}

/// Renders with `sets`, runs the operator through a sync and a rollout, and checks the audit.
async fn check_every_call_is_allowed(sets: &[&str]) {
    // The FerrVault simulator speaks plain http.
    let sets = &[sets, &["ferrvault.allowInsecureHttp=true"]].concat();
    let rendering = Rendering::new(sets);
    let account = rendering.names_of("ServiceAccount");
    assert_eq!(account.len(), 1, "{account:?}");
    let identity = format!("system:serviceaccount:{NAMESPACE}:{}", account[0]);
    let permissions = Permissions::of_service_account(&rendering.objects, NAMESPACE, &account[0]);

    // The cluster: the namespaces the rendering lives in (the release namespace and, with
    // `watchNamespace`, the watched one: Helm does not create them), then every rendered object,
    // RBAC included.
    let sim = KubeSim::start().await.expect("the simulator starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let admin_kubeconfig = dir.path().join("admin.kubeconfig");
    sim.write_kubeconfig(&admin_kubeconfig).expect("kubeconfig");
    let admin_kubeconfig = admin_kubeconfig.display().to_string();
    let namespaces: BTreeSet<&str> = rendering
        .objects
        .iter()
        .filter_map(|object| object["metadata"]["namespace"].as_str())
        .chain([NAMESPACE])
        .collect();
    for namespace in namespaces {
        kubectl_apply(
            &admin_kubeconfig,
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
        )
        .unwrap_or_else(|error| panic!("namespace {namespace} applied: {error}"));
    }
    let mut applied = BTreeSet::new();
    for object in &rendering.objects {
        let kind = object["kind"].as_str().unwrap_or_default();
        kubectl_apply(&admin_kubeconfig, object)
            .unwrap_or_else(|error| panic!("kubectl apply {kind}: {error}"));
        applied.insert(kind.to_owned());
    }
    for kind in [
        "CustomResourceDefinition",
        "Deployment",
        "ServiceAccount",
        "Role",
        "RoleBinding",
    ] {
        assert!(applied.contains(kind), "{kind} not applied: {applied:?}");
    }

    // The samples of the demo, against a FerrVault simulator.
    let mut manifests = fixtures::manifests().expect("samples parse");
    let ferrvault = FerrVaultSim::start(fixtures::ferrvault_config(&manifests))
        .await
        .expect("FerrVault simulator starts");
    fixtures::point_connections_at(&mut manifests, &ferrvault.url());
    let admin = sim.client();
    fixtures::apply_samples(&admin, &manifests)
        .await
        .expect("samples applied");

    // The operator, started from the rendered Deployment, as the ServiceAccount.
    // The kubeconfig impersonates the account (`users[].user.as`): the audit records that name.
    let operator_kubeconfig = dir.path().join("operator.kubeconfig");
    sim.write_kubeconfig_as(&operator_kubeconfig, &identity)
        .expect("kubeconfig");
    let probes = free_port();
    let launch = launch(sets)
        .with_flag("health-probe-bind-address", &format!("127.0.0.1:{probes}"))
        .with_flag("metrics-bind-address", &format!("127.0.0.1:{}", free_port()))
        .with_flag("kubeconfig", &operator_kubeconfig.display().to_string());
    let mut operator = start(&launch);
    operator.wait_for_line("http servers listening", Duration::from_secs(30));
    wait_for_200(
        &format!("http://127.0.0.1:{probes}/readyz"),
        Duration::from_secs(30),
    )
    .await;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !samples_synced(&admin).await {
        assert!(
            std::time::Instant::now() < deadline,
            "the samples did not sync within 60s:\n{}",
            operator.output()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // A content change: the rollout target is restarted (apps get + patch).
    let secrets: Api<FerrVaultSecret> = Api::namespaced(admin.clone(), SAMPLES);
    let rollout_hash = |s: FerrVaultSecret| s.status.and_then(|s| s.last_rollout_hash);
    let before = rollout_hash(secrets.get("app-config").await.expect("app-config"));
    assert!(ferrvault.put_secret(fixtures::VAULT, "api_key", "rotated-api-key"));
    secrets
        .patch(
            "app-config",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"refreshInterval": "29m"}})),
        )
        .await
        .expect("spec change");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let now = rollout_hash(secrets.get("app-config").await.expect("app-config"));
        if now.is_some() && now != before {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no rollout after the content changed (lastRolloutHash {before:?} -> {now:?}):\n{}",
            operator.output()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    operator.sigterm();
    let exit = operator.wait_exit(Duration::from_secs(30));
    assert_eq!(exit.code(), Some(0), "{}", operator.output());

    // Every audited request of that identity against the rendered rules.
    let audit: Vec<_> = sim
        .audit()
        .into_iter()
        .filter(|e| e.identity == identity)
        .collect();
    let resource_requests: Vec<_> = audit.iter().filter(|e| !e.resource.is_empty()).collect();
    let mut seen = BTreeSet::new();
    let mut denied = BTreeSet::new();
    for entry in &resource_requests {
        let resource = match entry.subresource.as_str() {
            "" => entry.resource.clone(),
            sub => format!("{}/{sub}", entry.resource),
        };
        let request = ApiRequest {
            verb: &entry.verb,
            group: &entry.group,
            resource: &resource,
            namespace: Some(entry.namespace.as_str()).filter(|ns| !ns.is_empty()),
            name: Some(entry.name.as_str()).filter(|name| !name.is_empty()),
        };
        let line = format!(
            "{} {}/{} ns={} name={}",
            entry.verb, entry.group, resource, entry.namespace, entry.name
        );
        if !permissions.allows(&request) {
            denied.insert(line.clone());
        }
        seen.insert(format!("{} {}/{}", entry.verb, entry.group, resource));
    }
    // The run exercised what the RBAC is for, so the check covers it.
    for expected in [
        "watch ferrvault.com/ferrvaultsecrets",
        "patch ferrvault.com/ferrvaultsecrets/status",
        "patch ferrvault.com/ferrvaultconnections/status",
        "create /secrets",
        "get apps/deployments",
        "patch apps/deployments",
        "create events.k8s.io/events",
        "create coordination.k8s.io/leases",
    ] {
        assert!(
            seen.contains(expected),
            "{sets:?}: the operator never did {expected:?}; it did {seen:#?}"
        );
    }
    // The content-hash key Secret: read (and created on this first start) in the release namespace.
    for verb in ["get", "create"] {
        assert!(
            resource_requests.iter().any(|e| e.verb == verb
                && e.resource == "secrets"
                && e.namespace == NAMESPACE
                && (verb == "create" || e.name == CONTENT_HASH_KEY_SECRET)),
            "{sets:?}: the operator never did {verb} of its content-hash key Secret"
        );
    }
    assert!(
        denied.is_empty(),
        "{sets:?}: requests the rendered RBAC does not allow:\n{}",
        denied.into_iter().collect::<Vec<_>>().join("\n")
    );
    // And the check can fail: the setup's own requests include ones the account may not make.
    assert!(
        !permissions.allows(&ApiRequest {
            verb: "create",
            group: "apiextensions.k8s.io",
            resource: "customresourcedefinitions",
            namespace: None,
            name: None,
        }),
        "the ServiceAccount must not create CRDs"
    );
}
