//! The simulated cluster every process benchmark runs against: the Kubernetes simulator with
//! the CRDs, FerrVault without a rate limit, `CONNECTIONS` connections (one service-account
//! token and vault each), a kubeconfig file for child processes, and watchers that time when
//! objects become Ready and when target Secrets appear.

use std::{
    collections::{HashMap, HashSet},
    path::PathBuf,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::{
    ByteString,
    api::core::v1::{Namespace, Secret},
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api, ResourceExt,
    api::{ObjectMeta, PostParams},
    runtime::{WatchStreamExt, watcher},
};
use tokio::{sync::watch, task::JoinHandle, time::Instant};

use ferrvault_operator::api::{
    ConnectionRef, FerrVaultConnection, FerrVaultConnectionSpec, FerrVaultSecret, FerrVaultSecretSpec,
    SecretKeyRef, crdgen,
};
use ferrvault_sim::{
    ferrvault::{FerrVaultSim, SimConfig},
    kube::KubeSim,
};

/// Namespace of the measured FerrVaultSecrets.
pub const NS: &str = "bench";
/// Namespace of the probe objects whose latency is measured.
pub const PROBE_NS: &str = "bench-probe";
/// Connections (tokens, vaults) the objects are spread over.
pub const CONNECTIONS: usize = 10;
/// Creates in flight while filling the cluster.
const CREATE_CONCURRENCY: usize = 64;

/// Both simulators, populated, plus a kubeconfig for child processes.
pub struct World {
    /// The Kubernetes API simulator.
    pub kube: KubeSim,
    /// The FerrVault simulator (unlimited rate).
    pub fv: FerrVaultSim,
    /// An in-process client of `kube` (the benchmark's own reads and writes).
    pub client: kube::Client,
    /// A kubeconfig pointing at `kube`, removed on drop.
    pub kubeconfig: PathBuf,
}

fn connection_name(i: usize) -> String {
    format!("conn-{i}")
}

fn ferrvault_config() -> SimConfig {
    let mut config = SimConfig::default().rate_limit(1e9, 1_000_000_000);
    for i in 0..CONNECTIONS {
        let vault = format!("vault-{i}");
        config = config
            .vault(
                &vault,
                [("USERNAME", "bench"), ("PASSWORD", "bench-not-a-secret")],
            )
            .service_account_token(&format!("fvsat_bench_{i}"), &vault);
    }
    config
}

impl World {
    /// Starts both simulators and creates the CRDs, both namespaces and the connections.
    ///
    /// # Errors
    /// A simulator did not start or refused a create.
    pub async fn start() -> Result<World, String> {
        let kube = KubeSim::start()
            .await
            .map_err(|e| format!("kube simulator: {e}"))?;
        let fv = FerrVaultSim::start(ferrvault_config())
            .await
            .map_err(|e| format!("FerrVault simulator: {e}"))?;
        let client = kube.client();
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        for crd in crdgen::crds() {
            crds.create(&PostParams::default(), &crd)
                .await
                .map_err(|e| format!("create CRD: {e}"))?;
        }
        static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let kubeconfig =
            std::env::temp_dir().join(format!("ferrvault-bench-{}-{n}.kubeconfig", std::process::id()));
        kube.write_kubeconfig(&kubeconfig)
            .map_err(|e| format!("write kubeconfig: {e}"))?;
        let world = World {
            kube,
            fv,
            client,
            kubeconfig,
        };
        for ns in [NS, PROBE_NS] {
            world.create_namespace(ns).await?;
            for i in 0..CONNECTIONS {
                world.create_connection(ns, i).await?;
            }
        }
        Ok(world)
    }

    /// Creates a namespace.
    ///
    /// # Errors
    /// The simulator refused it.
    pub async fn create_namespace(&self, name: &str) -> Result<(), String> {
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
            .map(drop)
            .map_err(|e| format!("create namespace {name}: {e}"))
    }

    async fn create_connection(&self, ns: &str, i: usize) -> Result<(), String> {
        let token_secret = format!("token-{i}");
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(token_secret.clone()),
                ..ObjectMeta::default()
            },
            string_data: Some([("token".to_owned(), format!("fvsat_bench_{i}"))].into()),
            ..Secret::default()
        };
        Api::<Secret>::namespaced(self.client.clone(), ns)
            .create(&PostParams::default(), &secret)
            .await
            .map_err(|e| format!("create token Secret: {e}"))?;
        let spec = FerrVaultConnectionSpec {
            mode: Default::default(),
            url: self.fv.url(),
            organization: None,
            token_secret_ref: Some(SecretKeyRef {
                name: token_secret,
                key: "token".into(),
            }),
            oidc: None,
            ca_bundle_secret_ref: None,
        };
        Api::<FerrVaultConnection>::namespaced(self.client.clone(), ns)
            .create(
                &PostParams::default(),
                &FerrVaultConnection::new(&connection_name(i), spec),
            )
            .await
            .map(drop)
            .map_err(|e| format!("create FerrVaultConnection: {e}"))
    }

    /// Creates FerrVaultSecrets `<prefix>-<i>` for `i` in `range`, spread over the connections.
    ///
    /// # Errors
    /// The first create the simulator refused.
    pub async fn create_secrets(
        &self,
        ns: &str,
        prefix: &str,
        range: std::ops::Range<usize>,
    ) -> Result<(), String> {
        let api = Api::<FerrVaultSecret>::namespaced(self.client.clone(), ns);
        stream::iter(range)
            .map(|i| {
                let api = api.clone();
                async move { create_secret(&api, &format!("{prefix}-{i:05}"), i).await }
            })
            .buffer_unordered(CREATE_CONCURRENCY)
            .try_for_each(|()| async { Ok(()) })
            .await
    }

    /// Creates `count` Secrets of `bytes` bytes each in `ns`, unrelated to the operator.
    ///
    /// # Errors
    /// The first create the simulator refused.
    pub async fn create_unrelated_secrets(&self, ns: &str, count: usize, bytes: usize) -> Result<(), String> {
        let api = Api::<Secret>::namespaced(self.client.clone(), ns);
        let payload = ByteString(vec![b'x'; bytes]);
        stream::iter(0..count)
            .map(|i| {
                let api = api.clone();
                let secret = Secret {
                    metadata: ObjectMeta {
                        name: Some(format!("unrelated-{i:05}")),
                        ..ObjectMeta::default()
                    },
                    data: Some([("blob".to_owned(), payload.clone())].into()),
                    ..Secret::default()
                };
                async move {
                    api.create(&PostParams::default(), &secret)
                        .await
                        .map(drop)
                        .map_err(|e| format!("create unrelated Secret: {e}"))
                }
            })
            .buffer_unordered(8)
            .try_for_each(|()| async { Ok(()) })
            .await
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.kubeconfig);
    }
}

/// Creates one FerrVaultSecret reading connection/vault `i % CONNECTIONS`.
///
/// # Errors
/// The simulator refused it.
pub async fn create_secret(api: &Api<FerrVaultSecret>, name: &str, i: usize) -> Result<(), String> {
    let c = i % CONNECTIONS;
    let spec = FerrVaultSecretSpec {
        connection_ref: ConnectionRef {
            name: connection_name(c),
        },
        project: None,
        vault: format!("vault-{c}"),
        selector: None,
        target: None,
        refresh_interval: "1h".into(),
        rollout_restart: Vec::new(),
        transforms: Vec::new(),
    };
    api.create(&PostParams::default(), &FerrVaultSecret::new(name, spec))
        .await
        .map(drop)
        .map_err(|e| format!("create FerrVaultSecret {name}: {e}"))
}

/// Whether `cr`'s status says Ready=True.
pub fn is_ready(cr: &FerrVaultSecret) -> bool {
    cr.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True")
    })
}

/// Counts the FerrVaultSecrets of a namespace that are Ready, from a watch.
pub struct ReadyCounter {
    count: watch::Receiver<usize>,
    task: JoinHandle<()>,
}

impl ReadyCounter {
    /// Starts watching `ns`.
    pub fn start(client: &kube::Client, ns: &str) -> Self {
        let api = Api::<FerrVaultSecret>::namespaced(client.clone(), ns);
        let (tx, count) = watch::channel(0);
        let task = tokio::spawn(async move {
            let mut ready = HashSet::new();
            let mut events = std::pin::pin!(
                watcher(api, watcher::Config::default())
                    .default_backoff()
                    .applied_objects()
            );
            while let Some(event) = events.next().await {
                let Ok(cr) = event else { continue };
                let changed = if is_ready(&cr) {
                    ready.insert(cr.name_any())
                } else {
                    ready.remove(&cr.name_any())
                };
                if changed {
                    tx.send_replace(ready.len());
                }
            }
        });
        Self { count, task }
    }

    /// Waits until at least `n` are Ready; `false` when `within` passed first.
    pub async fn wait_for(&mut self, n: usize, within: Duration) -> bool {
        tokio::time::timeout(within, self.count.wait_for(|c| *c >= n))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// How many are Ready now.
    pub fn ready(&self) -> usize {
        *self.count.borrow()
    }
}

impl Drop for ReadyCounter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Records when each Secret of a namespace was first seen (the operator's target writes).
pub struct SecretArrivals {
    seen: Arc<Mutex<HashMap<String, Instant>>>,
    task: JoinHandle<()>,
}

impl SecretArrivals {
    /// Starts watching Secrets in `ns`.
    pub fn start(client: &kube::Client, ns: &str) -> Self {
        let api = Api::<Secret>::namespaced(client.clone(), ns);
        let seen = Arc::new(Mutex::new(HashMap::new()));
        let record = seen.clone();
        let task = tokio::spawn(async move {
            let mut events = std::pin::pin!(
                watcher(api, watcher::Config::default())
                    .default_backoff()
                    .applied_objects()
            );
            while let Some(event) = events.next().await {
                if let Ok(secret) = event {
                    let now = Instant::now();
                    record
                        .lock()
                        .expect("arrivals lock")
                        .entry(secret.name_any())
                        .or_insert(now);
                }
            }
        });
        Self { seen, task }
    }

    /// When Secret `name` was first seen.
    pub fn seen(&self, name: &str) -> Option<Instant> {
        self.seen.lock().expect("arrivals lock").get(name).copied()
    }
}

impl Drop for SecretArrivals {
    fn drop(&mut self) {
        self.task.abort();
    }
}
