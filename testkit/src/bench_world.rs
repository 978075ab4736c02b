//! The simulated cluster every process benchmark runs against: the Kubernetes simulator with
//! the CRDs, FerrVault without a rate limit, `CONNECTIONS` connections (one service-account
//! token and vault each) per namespace, and a kubeconfig file for child processes whose
//! requests the audit records as [`DRIVER_IDENTITY`].

use std::path::PathBuf;

use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::{
    ByteString,
    api::core::v1::{Namespace, Secret},
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api,
    api::{ObjectMeta, PostParams},
};

use ferrvault_operator::api::{
    ConnectionRef, FerrVaultConnection, FerrVaultConnectionSpec, FerrVaultSecret, FerrVaultSecretSpec,
    SecretKeyRef, crdgen,
};
use ferrvault_sim::{
    ferrvault::{FerrVaultSim, SimConfig, token_fingerprint},
    kube::KubeSim,
};

/// The identity the drivers' kubeconfig impersonates, as the audit records it.
pub const DRIVER_IDENTITY: &str = "bench-driver";
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
    /// An in-process client of `kube` (the benchmark's own reads and writes, not audited as
    /// the driver's).
    pub client: kube::Client,
    /// A kubeconfig pointing at `kube` as [`DRIVER_IDENTITY`], removed on drop.
    pub kubeconfig: PathBuf,
}

fn connection_name(i: usize) -> String {
    format!("conn-{i}")
}

/// The service-account token of connection `i`.
fn token(i: usize) -> String {
    format!("fvsat_bench_{i}")
}

/// The vault of connection `i`.
pub fn vault(i: usize) -> String {
    format!("vault-{i}")
}

/// The keys every vault holds.
pub const VAULT_KEYS: [&str; 2] = ["USERNAME", "PASSWORD"];

fn ferrvault_config() -> SimConfig {
    let mut config = SimConfig::default().rate_limit(1e9, 1_000_000_000);
    for i in 0..CONNECTIONS {
        let vault = vault(i);
        config = config
            .vault(
                &vault,
                [(VAULT_KEYS[0], "bench"), (VAULT_KEYS[1], "bench-not-a-secret")],
            )
            .service_account_token(&token(i), &vault);
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
        kube.write_kubeconfig_as(&kubeconfig, DRIVER_IDENTITY)
            .map_err(|e| format!("write kubeconfig: {e}"))?;
        let world = World {
            kube,
            fv,
            client,
            kubeconfig,
        };
        for ns in [NS, PROBE_NS] {
            world.add_tenant(ns).await?;
        }
        Ok(world)
    }

    /// Creates namespace `ns` with the `CONNECTIONS` connections in it.
    ///
    /// # Errors
    /// The simulator refused a create.
    pub async fn add_tenant(&self, ns: &str) -> Result<(), String> {
        self.create_namespace(ns).await?;
        for i in 0..CONNECTIONS {
            self.create_connection(ns, i).await?;
        }
        Ok(())
    }

    /// Limits connection `i`'s token at FerrVault from now on.
    pub fn limit_token(&self, i: usize, per_second: f64, burst: u32) {
        self.fv
            .set_rate_limit(&token_fingerprint(&token(i)), per_second, burst);
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
            string_data: Some([("token".to_owned(), token(i))].into()),
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
            client_cert_secret_ref: None,
            pin_sha256: None,
            suspend: None,
            change_detection: None,
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

    /// Creates FerrVaultSecrets `<prefix>-<i>` for `i` in `range`, spread over the connections,
    /// refreshed hourly.
    ///
    /// # Errors
    /// The first create the simulator refused.
    pub async fn create_secrets(
        &self,
        ns: &str,
        prefix: &str,
        range: std::ops::Range<usize>,
    ) -> Result<(), String> {
        self.create_secrets_with(ns, prefix, range, |i| secret_spec(i % CONNECTIONS, "1h"))
            .await
    }

    /// Creates FerrVaultSecrets `<prefix>-<i>` for `i` in `range` with the spec `spec(i)`.
    ///
    /// # Errors
    /// The first create the simulator refused.
    pub async fn create_secrets_with(
        &self,
        ns: &str,
        prefix: &str,
        range: std::ops::Range<usize>,
        spec: impl Fn(usize) -> FerrVaultSecretSpec,
    ) -> Result<(), String> {
        let api = Api::<FerrVaultSecret>::namespaced(self.client.clone(), ns);
        stream::iter(range)
            .map(|i| {
                let api = api.clone();
                let spec = spec(i);
                async move { create(&api, &secret_name(prefix, i), spec).await }
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

/// The name of the `i`-th FerrVaultSecret created with `prefix` (its target Secret's too).
pub fn secret_name(prefix: &str, i: usize) -> String {
    format!("{prefix}-{i:05}")
}

/// A FerrVaultSecret reading every key of connection `connection`'s vault every `refresh`.
pub fn secret_spec(connection: usize, refresh: &str) -> FerrVaultSecretSpec {
    FerrVaultSecretSpec {
        connection_ref: ConnectionRef::namespaced(connection_name(connection)),
        project: None,
        vault: vault(connection),
        selector: None,
        target: None,
        refresh_interval: refresh.into(),
        rollout_restart: Vec::new(),
        transforms: Vec::new(),
        suspend: None,
        refresh_policy: None,
    }
}

/// Creates one FerrVaultSecret reading connection/vault `i % CONNECTIONS` hourly.
///
/// # Errors
/// The simulator refused it.
pub async fn create_secret(api: &Api<FerrVaultSecret>, name: &str, i: usize) -> Result<(), String> {
    create(api, name, secret_spec(i % CONNECTIONS, "1h")).await
}

async fn create(api: &Api<FerrVaultSecret>, name: &str, spec: FerrVaultSecretSpec) -> Result<(), String> {
    api.create(&PostParams::default(), &FerrVaultSecret::new(name, spec))
        .await
        .map(drop)
        .map_err(|e| format!("create FerrVaultSecret {name}: {e}"))
}
