//! kubectl's imperative `create` subcommands, which send protobuf bodies for built-in kinds
//! and prefer protobuf answers: each object lands as the JSON a real server stores.

use crate::{
    kube_sim_support::sim,
    kubectl_support::{BIND_READER_TO_BOT, CREATE_SECRET_READER, Kubectl},
};
use k8s_openapi::api::{
    apps::v1::Deployment,
    batch::v1::Job,
    core::v1::{ConfigMap, Namespace, Secret, ServiceAccount},
    rbac::v1::{Role, RoleBinding},
};
use kube::Api;
use serde_json::json;

#[tokio::test]
async fn kubectl_create_subcommands_should_store_what_they_send_in_protobuf() {
    let sim = sim().await;
    let k = Kubectl::new(&sim);
    let creates: [&[&str]; 8] = [
        &["create", "namespace", "team-a"],
        &[
            "create",
            "secret",
            "generic",
            "db",
            "-n",
            "team-a",
            "--from-literal=password=hunter2",
        ],
        &[
            "create",
            "configmap",
            "settings",
            "-n",
            "team-a",
            "--from-literal=mode=fast",
        ],
        &[
            "create",
            "deployment",
            "web",
            "-n",
            "team-a",
            "--image=nginx:1.27",
            "--replicas=2",
            "--port=80",
        ],
        &["create", "serviceaccount", "bot", "-n", "team-a"],
        CREATE_SECRET_READER,
        BIND_READER_TO_BOT,
        &[
            "create",
            "job",
            "once",
            "-n",
            "team-a",
            "--image=busybox",
            "--",
            "echo",
            "hi",
        ],
    ];
    for args in creates {
        let out = k.ok(args).await;
        assert!(out.trim_end().ends_with("created"), "kubectl {args:?}: {out}");
    }
    let protobuf_creates = sim
        .audit()
        .iter()
        .filter(|e| e.verb == "create" && e.code == 201)
        .count();
    assert_eq!(protobuf_creates, 8, "every create answered 201");

    let client = sim.client();
    let ns = Api::<Namespace>::all(client.clone())
        .get("team-a")
        .await
        .expect("namespace");
    assert_eq!(
        ns.metadata.labels.expect("labels")["kubernetes.io/metadata.name"],
        "team-a"
    );
    let secret = Api::<Secret>::namespaced(client.clone(), "team-a")
        .get("db")
        .await
        .expect("secret");
    assert_eq!(secret.data.expect("data")["password"].0, b"hunter2");
    assert_eq!(secret.type_.as_deref(), Some("Opaque"));
    let cm = Api::<ConfigMap>::namespaced(client.clone(), "team-a")
        .get("settings")
        .await
        .expect("configmap");
    assert_eq!(cm.data.expect("data")["mode"], "fast");
    let deploy = Api::<Deployment>::namespaced(client.clone(), "team-a")
        .get("web")
        .await
        .expect("deployment");
    let spec = deploy.spec.expect("spec");
    assert_eq!(spec.replicas, Some(2));
    let container = &spec.template.spec.expect("pod spec").containers[0];
    assert_eq!(
        (container.name.as_str(), container.image.as_deref()),
        ("nginx", Some("nginx:1.27"))
    );
    assert_eq!(container.ports.as_ref().expect("ports")[0].container_port, 80);
    let sa = Api::<ServiceAccount>::namespaced(client.clone(), "team-a")
        .get("bot")
        .await;
    assert!(sa.is_ok(), "{sa:?}");
    let role = Api::<Role>::namespaced(client.clone(), "team-a")
        .get("reader")
        .await
        .expect("role");
    let rule = &role.rules.expect("rules")[0];
    assert_eq!(
        (rule.verbs.clone(), rule.resources.clone()),
        (vec!["get".into(), "list".into()], Some(vec!["secrets".into()]))
    );
    let binding = Api::<RoleBinding>::namespaced(client.clone(), "team-a")
        .get("bot-reads")
        .await
        .expect("rolebinding");
    let subject = &binding.subjects.expect("subjects")[0];
    assert_eq!(
        (
            subject.kind.as_str(),
            subject.name.as_str(),
            subject.namespace.as_deref()
        ),
        ("ServiceAccount", "bot", Some("team-a"))
    );
    let job = Api::<Job>::namespaced(client, "team-a")
        .get("once")
        .await
        .expect("job");
    let pod = job.spec.expect("spec").template.spec.expect("pod spec");
    assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
    assert_eq!(
        pod.containers[0].command,
        Some(vec!["echo".to_string(), "hi".to_string()])
    );
}

/// The headers of the response kubectl logged at `-v=8` for `status` (like `409 Conflict`).
fn response_headers<'a>(log: &'a str, status: &str) -> &'a str {
    let start = log
        .find(&format!("\"Response\" status=\"{status}\""))
        .unwrap_or_else(|| panic!("no {status} response logged: {log}"));
    let block = &log[start..];
    &block[..block.find(" >").unwrap_or(block.len())]
}

#[tokio::test]
async fn kubectl_create_should_get_protobuf_answers_and_decode_a_protobuf_status() {
    let sim = sim().await;
    let k = Kubectl::new(&sim);
    let first = k
        .run(&["create", "configmap", "c", "--from-literal=a=b", "-v=8"])
        .await;
    assert!(first.status.success());
    let log = String::from_utf8_lossy(&first.stderr);
    assert!(
        response_headers(&log, "201 Created").contains("Content-Type: application/vnd.kubernetes.protobuf"),
        "{log}"
    );
    let again = k
        .run(&["create", "configmap", "c", "--from-literal=a=b", "-v=8"])
        .await;
    assert!(!again.status.success());
    let log = String::from_utf8_lossy(&again.stderr);
    assert!(
        response_headers(&log, "409 Conflict").contains("Content-Type: application/vnd.kubernetes.protobuf"),
        "{log}"
    );
    assert!(
        log.contains(r#"error: failed to create configmap: configmaps "c" already exists"#),
        "kubectl decoded the protobuf Status: {log}"
    );
}

#[tokio::test]
async fn a_client_that_accepts_only_protobuf_should_get_406_for_a_custom_resource() {
    let sim = sim().await;
    crate::kube_sim_support::install_widget_crd(&sim.client()).await;
    let http = reqwest::Client::new();
    let url = format!(
        "{}/apis/sim.ferrvault.dev/v1/namespaces/default/widgets",
        sim.url()
    );
    let only_protobuf = http
        .get(&url)
        .header("Accept", "application/vnd.kubernetes.protobuf")
        .send()
        .await
        .expect("request");
    assert_eq!(only_protobuf.status(), 406);
    let with_fallback = http
        .get(&url)
        .header("Accept", "application/vnd.kubernetes.protobuf, application/json")
        .send()
        .await
        .expect("request");
    assert_eq!(with_fallback.status(), 200);
    assert_eq!(
        with_fallback.headers()["content-type"],
        "application/json",
        "custom resources have no protobuf form"
    );
    let body: serde_json::Value = with_fallback.json().await.expect("json");
    assert_eq!(body["kind"], json!("WidgetList"));
}

#[tokio::test]
async fn kubectl_create_service_pdb_registry_secret_and_run_should_work_too() {
    let sim = sim().await;
    let k = Kubectl::new(&sim);
    for args in [
        &["create", "service", "clusterip", "web", "--tcp=80:8080"][..],
        &[
            "create",
            "poddisruptionbudget",
            "web",
            "--selector=app=web",
            "--min-available=50%",
        ],
        &[
            "create",
            "secret",
            "docker-registry",
            "pull",
            "--docker-server=registry.example",
            "--docker-username=u",
            "--docker-password=p",
        ],
        &[
            "run",
            "once",
            "--image=busybox",
            "--restart=Never",
            "--env=MODE=fast",
            "--",
            "sleep",
            "1",
        ],
    ] {
        k.ok(args).await;
    }
    let service: serde_json::Value =
        serde_json::from_str(&k.ok(&["get", "service", "web", "-o", "json"]).await).expect("json");
    assert_eq!(
        service["spec"]["ports"][0],
        json!({"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}),
        "int-or-string targetPort kept its JSON type"
    );
    let pdb: serde_json::Value =
        serde_json::from_str(&k.ok(&["get", "pdb", "web", "-o", "json"]).await).expect("json");
    assert_eq!(pdb["spec"]["minAvailable"], "50%");
    let pull = Api::<Secret>::namespaced(sim.client(), "default")
        .get("pull")
        .await
        .expect("secret");
    assert_eq!(pull.type_.as_deref(), Some("kubernetes.io/dockerconfigjson"));
    let config: serde_json::Value =
        serde_json::from_slice(&pull.data.expect("data")[".dockerconfigjson"].0).expect("docker config");
    assert_eq!(config["auths"]["registry.example"]["username"], "u");
    let pod: serde_json::Value =
        serde_json::from_str(&k.ok(&["get", "pod", "once", "-o", "json"]).await).expect("json");
    assert_eq!(pod["spec"]["restartPolicy"], "Never");
    assert_eq!(
        pod["spec"]["containers"][0]["env"],
        json!([{"name": "MODE", "value": "fast"}])
    );
    assert_eq!(pod["spec"]["containers"][0]["args"], json!(["sleep", "1"]));
}
