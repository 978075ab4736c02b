//! What every plugin test shares: the Kubernetes simulator with the CRDs, the plugin binary run
//! against it, objects and statuses written as the operator writes them, and a byte relay that
//! shows what the API server sent the plugin.

use std::{
    path::PathBuf,
    process::Stdio,
    sync::{Arc, Mutex},
};

use ferrvault_operator::api::crdgen;
use ferrvault_sim::{
    kube::{KubeSim, kubeconfig},
    testkit::within,
};
use jiff::Timestamp;
use k8s_openapi::{
    ByteString,
    api::core::v1::{Namespace, Secret},
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    apimachinery::pkg::apis::meta::v1::{Condition, Time},
};
use kube::{
    Api,
    api::{ApiResource, DynamicObject, ObjectMeta, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

/// The namespace the tests work in (the kubeconfig's).
pub const NS: &str = "default";

/// How a plugin run ended.
#[derive(Debug)]
pub struct Run {
    /// The exit code.
    pub code: i32,
    /// stdout.
    pub stdout: String,
    /// stderr.
    pub stderr: String,
}

impl Run {
    /// stdout as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{self:?}"))
    }
}

/// Whether a CRD of this cluster carries the fields issue 36 adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crds {
    /// `spec.suspend`, `spec.refreshPolicy`, `status.observedForceSync` (added to the operator's
    /// CRDs when they do not have them yet).
    WithIssue36,
    /// The operator's CRDs without them: a cluster whose operator predates issue 36.
    WithoutIssue36,
}

/// The simulator with the CRDs installed, and a kubeconfig for it.
pub struct Cluster {
    /// The simulator.
    pub sim: KubeSim,
    /// A client of it.
    pub client: kube::Client,
    /// Holds the kubeconfig.
    pub dir: tempfile::TempDir,
    /// The kubeconfig pointing at the simulator.
    pub kubeconfig: PathBuf,
}

impl Cluster {
    /// A cluster whose CRDs have the issue 36 fields.
    pub async fn start() -> Self {
        Self::start_with(Crds::WithIssue36).await
    }

    /// A cluster with `crds`.
    pub async fn start_with(crds: Crds) -> Self {
        let sim = KubeSim::start().await.expect("the simulator starts");
        let client = sim.client();
        let api: Api<CustomResourceDefinition> = Api::all(client.clone());
        for crd in crdgen::crds() {
            let crd = issue36_fields(crd, crds);
            api.create(&PostParams::default(), &crd)
                .await
                .expect("CRD created");
        }
        let dir = tempfile::tempdir().expect("a temp dir");
        let kubeconfig = dir.path().join("kubeconfig");
        sim.write_kubeconfig(&kubeconfig).expect("kubeconfig written");
        Self {
            sim,
            client,
            dir,
            kubeconfig,
        }
    }

    /// Runs the plugin with `args` against this cluster.
    pub async fn plugin(&self, args: &[&str]) -> Run {
        plugin_with(&self.kubeconfig, args).await
    }

    /// FerrVaultSecrets of `namespace`, untyped.
    pub fn fvs(&self, namespace: &str) -> Api<DynamicObject> {
        Api::namespaced_with(
            self.client.clone(),
            namespace,
            &resource("ferrvaultsecrets", "FerrVaultSecret"),
        )
    }

    /// FerrVaultConnections of `namespace`, untyped.
    pub fn fvc(&self, namespace: &str) -> Api<DynamicObject> {
        Api::namespaced_with(
            self.client.clone(),
            namespace,
            &resource("ferrvaultconnections", "FerrVaultConnection"),
        )
    }

    /// Secrets of `namespace`.
    pub fn secrets(&self, namespace: &str) -> Api<Secret> {
        Api::namespaced(self.client.clone(), namespace)
    }

    /// Creates namespace `name`.
    pub async fn namespace(&self, name: &str) {
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        Api::<Namespace>::all(self.client.clone())
            .create(&PostParams::default(), &namespace)
            .await
            .expect("namespace created");
    }

    /// Creates FerrVaultSecret `name` in `namespace` using connection `connection`, with `spec`
    /// merged over `vault: shop`, `refreshInterval: 1h`.
    pub async fn create_fvs(
        &self,
        namespace: &str,
        name: &str,
        connection: &str,
        spec: Value,
    ) -> DynamicObject {
        let mut full =
            json!({ "connectionRef": { "name": connection }, "vault": "shop", "refreshInterval": "1h" });
        for (key, value) in spec.as_object().expect("a spec map") {
            full[key] = value.clone();
        }
        let object: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "ferrvault.com/v1alpha1",
            "kind": "FerrVaultSecret",
            "metadata": { "name": name, "namespace": namespace },
            "spec": full,
        }))
        .expect("an object");
        self.fvs(namespace)
            .create(&PostParams::default(), &object)
            .await
            .expect("FerrVaultSecret created")
    }

    /// Creates a ferrvault-mode connection `name` reading its token from Secret `token_secret`
    /// (created with `token`).
    pub async fn create_connection(
        &self,
        namespace: &str,
        name: &str,
        token_secret: &str,
        token: &str,
    ) -> DynamicObject {
        self.put_secret(namespace, token_secret, &[("token", token)])
            .await;
        let object: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "ferrvault.com/v1alpha1",
            "kind": "FerrVaultConnection",
            "metadata": { "name": name, "namespace": namespace },
            "spec": { "url": "https://ferrvault.example", "tokenSecretRef": { "name": token_secret, "key": "token" } },
        }))
        .expect("an object");
        self.fvc(namespace)
            .create(&PostParams::default(), &object)
            .await
            .expect("FerrVaultConnection created")
    }

    /// Creates or replaces Secret `name` holding `data`.
    pub async fn put_secret(&self, namespace: &str, name: &str, data: &[(&str, &str)]) -> Secret {
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                ..ObjectMeta::default()
            },
            data: Some(
                data.iter()
                    .map(|(k, v)| ((*k).to_owned(), ByteString(v.as_bytes().to_vec())))
                    .collect(),
            ),
            ..Secret::default()
        };
        let api = self.secrets(namespace);
        let params = PatchParams::apply("plugin-tests").force();
        api.patch(name, &params, &Patch::Apply(&secret))
            .await
            .expect("Secret applied")
    }

    /// Merges `status` into the status of FerrVaultSecret `name`, through the status
    /// subresource, as the operator writes it.
    pub async fn write_status(&self, namespace: &str, name: &str, status: Value) -> DynamicObject {
        self.fvs(namespace)
            .patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(&json!({ "status": status })),
            )
            .await
            .expect("status written")
    }
}

/// Runs the plugin with `--kubeconfig kubeconfig` and `args`, bounded.
pub async fn plugin_with(kubeconfig: &std::path::Path, args: &[&str]) -> Run {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_kubectl-ferrvault"));
    command
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let output = within(&format!("kubectl-ferrvault {args:?}"), command.output())
        .await
        .expect("the plugin runs");
    Run {
        code: output.status.code().expect("an exit code"),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A `Ready` condition as the operator writes it, transitioned at `at`.
pub fn ready(status: &str, reason: &str, message: &str, generation: i64, at: Timestamp) -> Value {
    serde_json::to_value(Condition {
        type_: "Ready".to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message: message.to_owned(),
        observed_generation: Some(generation),
        last_transition_time: Time(at),
    })
    .expect("a condition")
}

/// The status of a sync that succeeded at generation 1, `at`, leaving the target at
/// `target_version` with `inputs`.
pub fn synced_status(at: Timestamp, target_version: &str, inputs: &str) -> Value {
    json!({
        "conditions": [ready("True", "Synced", "1 key(s) synced", 1, at)],
        "lastSyncedAt": Time(at),
        "observedGeneration": 1,
        "syncedKeys": ["DB_URL"],
        "missingKeys": [],
        "targetResourceVersion": target_version,
        "observedInputs": inputs,
    })
}

fn resource(plural: &str, kind: &str) -> ApiResource {
    ApiResource {
        group: "ferrvault.com".into(),
        version: "v1alpha1".into(),
        api_version: "ferrvault.com/v1alpha1".into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// `crd` with (or without) the fields of issue 36; see [`Crds`].
fn issue36_fields(crd: CustomResourceDefinition, crds: Crds) -> CustomResourceDefinition {
    let mut value = serde_json::to_value(crd).expect("a CRD");
    let kind = value
        .pointer("/spec/names/kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let schema = value
        .pointer_mut("/spec/versions/0/schema/openAPIV3Schema/properties")
        .expect("a schema");
    let fields: &[(&str, &str, Value)] = &[
        ("spec", "suspend", json!({ "type": "boolean" })),
        (
            "spec",
            "refreshPolicy",
            json!({ "type": "string", "enum": ["Periodic", "OnChange", "CreatedOnce"] }),
        ),
        (
            "status",
            "observedForceSync",
            json!({ "type": "string", "maxLength": 253 }),
        ),
    ];
    for (part, field, field_schema) in fields {
        if kind == "FerrVaultConnection" && *field == "refreshPolicy" {
            continue;
        }
        let Some(properties) = schema
            .pointer_mut(&format!("/{part}/properties"))
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        match crds {
            Crds::WithIssue36 if !properties.contains_key(*field) => {
                properties.insert((*field).to_owned(), field_schema.clone());
            }
            Crds::WithoutIssue36 => {
                properties.remove(*field);
            }
            Crds::WithIssue36 => {}
        }
    }
    serde_json::from_value(value).expect("a CRD")
}

/// A TCP relay in front of the simulator keeping every byte the server sent back: what the
/// plugin received, to check that a value never reached it.
pub struct Relay {
    /// A kubeconfig pointing at the relay.
    pub kubeconfig: PathBuf,
    received: Arc<Mutex<Vec<u8>>>,
}

impl Relay {
    /// A relay to `cluster`, its kubeconfig written into the cluster's temp dir.
    pub async fn start(cluster: &Cluster) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        let kubeconfig = cluster.dir.path().join("relay.kubeconfig");
        std::fs::write(&kubeconfig, kubeconfig::render(&url, None)).expect("kubeconfig written");
        let received = Arc::new(Mutex::new(Vec::new()));
        let (upstream, kept) = (cluster.sim.addr(), received.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let server = TcpStream::connect(upstream).await.expect("the simulator accepts");
                let (mut client_read, mut client_write) = client.into_split();
                let (mut server_read, mut server_write) = server.into_split();
                tokio::spawn(async move { tokio::io::copy(&mut client_read, &mut server_write).await });
                let kept = kept.clone();
                tokio::spawn(async move {
                    let mut buffer = vec![0; 64 * 1024];
                    while let Ok(n @ 1..) = server_read.read(&mut buffer).await {
                        kept.lock().expect("relay lock").extend_from_slice(&buffer[..n]);
                        if client_write.write_all(&buffer[..n]).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        Self { kubeconfig, received }
    }

    /// Whether the server sent `needle` (raw bytes) through the relay.
    pub fn received(&self, needle: &[u8]) -> bool {
        let received = self.received.lock().expect("relay lock");
        received.windows(needle.len()).any(|window| window == needle)
    }
}
