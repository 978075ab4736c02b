//! Fixtures shared by the `operator_*` test files: both simulators, the operator installed on a
//! real runtime (leader election off, small timings), object builders, bounded polling, and the
//! leak scan every test ends with.
#![allow(dead_code, missing_docs)] // each test file uses a different subset

use std::{
    collections::BTreeMap,
    future::Future,
    io::Write,
    sync::{Arc, Mutex, OnceLock},
    time::Duration,
};

use controller_actors::{BackoffConfig, Runtime};
use ferrvault_operator::{
    Operator, OperatorSettings,
    api::{
        ConnectionRef, FerrVaultConnection, FerrVaultConnectionSpec, FerrVaultSecret, FerrVaultSecretSpec,
        SecretKeyRef, crdgen,
    },
    ferrvault::{ClientConfig, ClusterIdentity, EgressPolicy, RetryPolicy},
};
use ferrvault_sim::{
    ferrvault::{FerrVaultSim, SimConfig},
    kube::KubeSim,
};
use k8s_openapi::{
    ByteString,
    api::{core::v1::Secret, events::v1::Event},
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    apimachinery::pkg::apis::meta::v1::Condition,
};
use kube::{
    Api, Resource, ResourceExt,
    api::{ApiResource, DynamicObject, ObjectMeta, PostParams},
};
use prometheus_client::registry::Registry;
use tokio::sync::oneshot;

/// Namespace every test works in.
pub const NS: &str = "default";
pub use ferrvault_sim::testkit::eventually;

/// Secret values and tokens of the FerrVault simulator: each is distinctive so the leak scan
/// can find it anywhere it should not be.
pub const DB_URL: &str = "postgres://app:LEAKCHECK-db-pass@db:5432/shop";
pub const API_KEY: &str = "sk_live_LEAKCHECK_apikey_0123";
pub const PROD_TOKEN: &str = "fvsat_LEAKCHECK_prod_token";
pub const OTHER_TOKEN: &str = "fvsat_LEAKCHECK_other_token";
pub const ORG_TOKEN: &str = "fft_LEAKCHECK_org_token";
pub const OIDC_JWT: &str = "LEAKCHECK.projected.jwt";
pub const CLUSTER_ID: &str = "0b6f7e2c-1d2e-4f00-8a9b-0123456789ab";
/// `{"host":"db","port":5432,"tls":true}` for jsonExpand.
pub const JSON_CONFIG: &str = r#"{"host":"LEAKCHECK-host","port":5432,"tls":true}"#;
/// Base64 of bytes that are not UTF-8 (0xff 0xfe 0x00 0x01 …), for base64Decode.
pub const BINARY_B64: &str = "//4AAUxFQUtDSEVDSw==";

/// Every string that must never appear outside a Secret's data.
pub fn sensitive_strings() -> Vec<&'static str> {
    vec![
        DB_URL,
        "LEAKCHECK-db-pass",
        API_KEY,
        PROD_TOKEN,
        OTHER_TOKEN,
        ORG_TOKEN,
        OIDC_JWT,
        "LEAKCHECK-host",
        BINARY_B64,
        "ffclust_",
    ]
}

/// The FerrVault simulator's vaults and tokens every harness starts with.
pub fn sim_config() -> SimConfig {
    let yaml = format!(
        r#"
rate_limit: {{ per_second: 100.0, burst: 100 }}
cluster_token_ttl_secs: 900
vaults:
  - name: prod
    org: acme
    project: shop
    environment: production
    secrets:
      DB_URL: "{DB_URL}"
      API_KEY: "{API_KEY}"
  - name: blobs
    org: acme
    project: shop
    environment: production
    secrets:
      CONFIG: '{JSON_CONFIG}'
      CERT: "{BINARY_B64}"
service_account_tokens:
  - {{ token: {PROD_TOKEN}, vault: prod, label: prod-sat }}
  - {{ token: {OTHER_TOKEN}, vault: blobs, label: blobs-sat }}
org_tokens:
  - {{ token: {ORG_TOKEN}, org: acme, label: acme-org }}
oidc_clusters:
  - cluster_id: {CLUSTER_ID}
    jwt: {OIDC_JWT}
    org: acme
    namespaces: []
"#
    );
    SimConfig::from_yaml(&yaml).expect("test FerrVault config parses")
}

/// A tracing subscriber writing every log line of this process into one buffer.
#[derive(Clone, Default)]
struct LogBuffer(Arc<Mutex<Vec<u8>>>);

impl Write for LogBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn logs() -> &'static LogBuffer {
    static LOGS: OnceLock<LogBuffer> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buffer = LogBuffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter("ferrvault_operator=trace,controller_actors=debug,kube=debug,info")
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        // Another test in this process may have installed it first; then we still own `buffer`
        // only if ours won, so fall back to an empty buffer's guarantees being checked by the
        // non-empty assertion in `assert_no_leaks`.
        let _ = tracing::subscriber::set_global_default(subscriber);
        buffer
    })
}

/// Both simulators and the operator, running.
pub struct Harness {
    pub kube: KubeSim,
    pub fv: FerrVaultSim,
    pub client: kube::Client,
    pub registry: Registry,
    pub oidc_token_file: tempfile::NamedTempFile,
    settings: OperatorSettings,
    stop: Option<oneshot::Sender<()>>,
    run: tokio::task::JoinHandle<()>,
}

/// The operator on a real runtime, running until the sender is used or dropped.
fn launch_operator(
    client: &kube::Client,
    settings: OperatorSettings,
) -> (Registry, oneshot::Sender<()>, tokio::task::JoinHandle<()>) {
    let mut registry = Registry::default();
    let operator = Operator::new(client.clone(), settings, &mut registry);
    let builder = Runtime::builder()
        .max_concurrent_reconciles(4)
        .reconcile_timeout(Duration::from_secs(10))
        .kill_grace(Duration::from_secs(2))
        .probe_period(Duration::from_millis(200))
        .shutdown_grace(Duration::from_secs(2))
        .backoff(BackoffConfig {
            error_base: Duration::from_millis(100),
            error_max: Duration::from_millis(800),
            rate_base: Duration::from_millis(200),
            rate_max: Duration::from_secs(1),
            ..BackoffConfig::default()
        })
        .registry(&mut registry);
    let runtime = operator
        .install(builder)
        .build()
        .expect("valid runtime configuration");
    let (tx, rx) = oneshot::channel::<()>();
    let run = tokio::spawn(async move {
        let _ = runtime
            .run(async move {
                let _ = rx.await; // a dropped sender also means stop
            })
            .await;
    });
    (registry, tx, run)
}

/// Operator settings for tests: fast client retries, a generous budget, plain http allowed (the
/// simulators speak it), a refresh floor of 1s, and the simulators' loopback address allowed by the
/// egress policy (which refuses loopback by default). [`Harness::start_with`] adds the harness's cluster
/// identity.
pub fn test_settings() -> OperatorSettings {
    OperatorSettings {
        default_refresh_interval: Duration::from_secs(3600),
        connection_probe_interval: Duration::from_secs(600),
        watch_namespaces: Vec::new(),
        ferrvault: ClientConfig {
            rate_per_second: 50.0,
            burst: 50,
            attempt_timeout: Duration::from_secs(2),
            retry: RetryPolicy {
                max_attempts: 2,
                backoff: vec![Duration::from_millis(20)],
                jitter: 0.0,
            },
            allow_insecure_http: true,
            egress: EgressPolicy::from_flags(&["127.0.0.1/32".to_owned()], &[]).expect("a CIDR"),
            ..ClientConfig::default()
        },
        // Tests refresh every second to observe refreshes: below the 30s default floor, so it
        // is lowered here explicitly (the floor itself is tested in `tests/tenant`).
        min_refresh_interval: Duration::from_secs(1),
        ..OperatorSettings::default()
    }
}

impl Harness {
    /// Starts both simulators (CRDs installed) and the operator with [`test_settings`].
    pub async fn start() -> Harness {
        Self::start_with(test_settings()).await
    }

    /// Starts both simulators and the operator with `settings`; unless they set one, the
    /// operator's cluster identity is [`CLUSTER_ID`], the harness's projected token file and
    /// the FerrVault simulator as the one trusted URL.
    pub async fn start_with(settings: OperatorSettings) -> Harness {
        Self::start_with_fv(settings, sim_config()).await
    }

    /// [`Harness::start_with`] against a FerrVault simulator configured as `fv_config` (usually
    /// [`sim_config`] with a change).
    pub async fn start_with_fv(mut settings: OperatorSettings, fv_config: SimConfig) -> Harness {
        let _ = rustls::crypto::ring::default_provider().install_default(); // first caller wins
        logs();
        let kube = KubeSim::start().await.expect("kube simulator starts");
        let fv = FerrVaultSim::start(fv_config)
            .await
            .expect("FerrVault simulator starts");
        let client = kube.client();
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        for crd in crdgen::crds() {
            crds.create(&PostParams::default(), &crd)
                .await
                .expect("CRD installs");
        }
        let mut oidc_token_file = tempfile::NamedTempFile::new().expect("temp file");
        writeln!(oidc_token_file, "{OIDC_JWT}").expect("write projected token");
        if settings.ferrvault.cluster_identity.is_none() {
            let identity = ClusterIdentity::new(
                CLUSTER_ID,
                oidc_token_file.path().to_owned(),
                &[fv.url()],
                settings.ferrvault.allow_insecure_http,
            )
            .expect("a valid cluster identity");
            settings.ferrvault.cluster_identity = Some(identity);
        }
        let (registry, stop, run) = launch_operator(&client, settings.clone());
        Harness {
            kube,
            fv,
            client,
            registry,
            oidc_token_file,
            settings,
            stop: Some(stop),
            run,
        }
    }

    /// Stops the operator and starts a new one (new process state: caches, key, metrics) against
    /// the same simulators, as a restart or an upgrade would.
    pub async fn restart_operator(&mut self) {
        self.stop_operator().await;
        self.start_operator().await;
    }

    /// Stops the operator (the simulators keep running), as a crash, an upgrade or a failover
    /// leaves the cluster between two operators.
    pub async fn stop_operator(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = tokio::time::timeout(Duration::from_secs(20), &mut self.run).await;
    }

    /// Starts a new operator (new process state: caches, key, metrics) after [`Harness::stop_operator`].
    pub async fn start_operator(&mut self) {
        let (registry, stop, run) = launch_operator(&self.client, self.settings.clone());
        (self.registry, self.stop, self.run) = (registry, Some(stop), run);
    }

    pub fn secrets(&self) -> Api<Secret> {
        Api::namespaced(self.client.clone(), NS)
    }

    pub fn fvs(&self) -> Api<FerrVaultSecret> {
        Api::namespaced(self.client.clone(), NS)
    }

    pub fn fvc(&self) -> Api<FerrVaultConnection> {
        Api::namespaced(self.client.clone(), NS)
    }

    /// An untyped API of kind `K`: reads and writes objects whatever their spec holds.
    pub fn raw<K: Resource<DynamicType = ()>>(&self) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), NS, &ApiResource::erase::<K>(&()))
    }

    /// Stores `name` of kind `K` with `spec` exactly as given, past the CRD schema (see
    /// [`store_unvalidated`]).
    pub async fn create_raw<K: Resource<DynamicType = ()>>(&self, name: &str, spec: serde_json::Value) {
        store_unvalidated::<K>(&self.kube, name, spec);
    }

    /// Waits until `name` of kind `K` (read untyped) has a Ready condition with `reason`.
    pub async fn wait_raw_reason<K: Resource<DynamicType = ()>>(
        &self,
        name: &str,
        reason: &str,
    ) -> Condition {
        let api = self.raw::<K>();
        eventually(&format!("{} {name} Ready reason {reason}", K::kind(&())), || {
            let api = api.clone();
            async move {
                let object = api.get(name).await.ok()?;
                let conditions: Vec<Condition> =
                    serde_json::from_value(object.data.pointer("/status/conditions")?.clone()).ok()?;
                ready(Some(&conditions)).filter(|c| c.reason == reason).cloned()
            }
        })
        .await
    }

    /// Creates a Secret holding `data` (string values).
    pub async fn put_secret(&self, name: &str, data: &[(&str, &str)]) -> Secret {
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            data: Some(
                data.iter()
                    .map(|(k, v)| ((*k).to_owned(), ByteString(v.as_bytes().to_vec())))
                    .collect(),
            ),
            ..Secret::default()
        };
        match self.secrets().get_opt(name).await.expect("read Secret") {
            Some(existing) => {
                let mut updated = secret;
                updated.metadata = existing.metadata;
                self.secrets()
                    .replace(name, &PostParams::default(), &updated)
                    .await
                    .expect("replace Secret")
            }
            None => self
                .secrets()
                .create(&PostParams::default(), &secret)
                .await
                .expect("create Secret"),
        }
    }

    /// A token Secret `name` with key `token` and a connection `conn` in ferrvault mode using it.
    ///
    /// Returns once the connection was probed (any Ready condition), so its first Ready change
    /// (which resyncs dependants) is over before the test creates FerrVaultSecrets.
    pub async fn connection(&self, conn: &str, token_secret: &str, token: &str) -> FerrVaultConnection {
        self.put_secret(token_secret, &[("token", token)]).await;
        self.create_connection(conn, connection_spec(&self.fv.url(), token_secret))
            .await;
        let api = self.fvc();
        eventually(&format!("FerrVaultConnection {conn} probed"), || {
            let api = api.clone();
            async move {
                let c = api.get(conn).await.ok()?;
                ready(c.status.as_ref().map(|s| s.conditions.as_slice()))?;
                Some(c)
            }
        })
        .await
    }

    pub async fn create_connection(&self, name: &str, spec: FerrVaultConnectionSpec) -> FerrVaultConnection {
        self.fvc()
            .create(&PostParams::default(), &FerrVaultConnection::new(name, spec))
            .await
            .expect("create FerrVaultConnection")
    }

    pub async fn create_secret(&self, name: &str, spec: FerrVaultSecretSpec) -> FerrVaultSecret {
        self.fvs()
            .create(&PostParams::default(), &FerrVaultSecret::new(name, spec))
            .await
            .expect("create FerrVaultSecret")
    }

    /// Polls `probe` until it returns `Some`, or fails naming `what` after [`DEADLINE`].
    pub async fn eventually<T, F, Fut>(&self, what: &str, probe: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Option<T>>,
    {
        eventually(what, probe).await
    }

    /// Waits until the FerrVaultSecret's Ready condition has `reason`; returns the object.
    pub async fn wait_secret_reason(&self, name: &str, reason: &str) -> FerrVaultSecret {
        let api = self.fvs();
        eventually(&format!("FerrVaultSecret {name} Ready reason {reason}"), || {
            let api = api.clone();
            async move {
                let cr = api.get(name).await.ok()?;
                (ready(cr.status.as_ref().map(|s| s.conditions.as_slice()))?.reason == reason).then_some(cr)
            }
        })
        .await
    }

    /// Waits until the FerrVaultConnection's Ready condition has `reason`; returns the object.
    pub async fn wait_connection_reason(&self, name: &str, reason: &str) -> FerrVaultConnection {
        let api = self.fvc();
        eventually(
            &format!("FerrVaultConnection {name} Ready reason {reason}"),
            || {
                let api = api.clone();
                async move {
                    let c = api.get(name).await.ok()?;
                    (ready(c.status.as_ref().map(|s| s.conditions.as_slice()))?.reason == reason).then_some(c)
                }
            },
        )
        .await
    }

    /// Waits until Secret `name` exists and `check` accepts it.
    pub async fn wait_target(&self, name: &str, check: impl Fn(&Secret) -> bool) -> Secret {
        self.wait_target_for("in the expected state", name, check).await
    }

    /// [`Harness::wait_target`] with `what` in the failure message.
    pub async fn wait_target_for(&self, what: &str, name: &str, check: impl Fn(&Secret) -> bool) -> Secret {
        let api = self.secrets();
        let check = &check;
        eventually(&format!("target Secret {name} {what}"), || {
            let api = api.clone();
            async move { api.get_opt(name).await.ok().flatten().filter(|s| check(s)) }
        })
        .await
    }

    /// The Prometheus text of the operator's and runtime's registry.
    pub fn metrics_text(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry).expect("metrics encode");
        out
    }

    /// Every Event in the namespace (events.k8s.io/v1).
    pub async fn events(&self) -> Vec<Event> {
        Api::<Event>::namespaced(self.client.clone(), NS)
            .list(&Default::default())
            .await
            .expect("list Events")
            .items
    }

    /// Events with `reason` about object `name`.
    pub async fn events_for(&self, name: &str, reason: &str) -> Vec<Event> {
        self.events()
            .await
            .into_iter()
            .filter(|e| {
                e.reason.as_deref() == Some(reason)
                    && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name)
            })
            .collect()
    }

    /// Stops the operator, then scans captured logs, Events, statuses of every custom resource
    /// and the `/metrics` text for any secret value or token. Every test ends with this.
    pub async fn finish(mut self) {
        let mut corpus = String::new();
        for event in self.events().await {
            corpus.push_str(&serde_json::to_string(&event).unwrap());
        }
        // Raw lists: an object that bypassed the schema must be scanned too, not fail the list.
        for raw in [self.raw::<FerrVaultSecret>(), self.raw::<FerrVaultConnection>()] {
            for object in raw
                .list(&Default::default())
                .await
                .expect("list custom resources")
                .items
            {
                corpus.push_str(&serde_json::to_string(&object.data.get("status")).unwrap());
            }
        }
        corpus.push_str(&self.metrics_text());
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = tokio::time::timeout(Duration::from_secs(20), &mut self.run).await;
        let log_text = String::from_utf8_lossy(&logs().0.lock().unwrap()).into_owned();
        assert!(
            log_text.contains("reconcile"),
            "the log capture saw no reconcile (is the subscriber installed?)"
        );
        corpus.push_str(&log_text);
        for needle in sensitive_strings() {
            assert!(
                !corpus.contains(needle),
                "a secret value or token ({}…) leaked into logs, Events, status or metrics",
                &needle[..6.min(needle.len())]
            );
        }
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The Ready condition of a conditions list.
pub fn ready(conditions: Option<&[Condition]>) -> Option<&Condition> {
    conditions?.iter().find(|c| c.type_ == "Ready")
}

/// A condition of `type_`.
pub fn condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// A ferrvault-mode connection spec reading its token from `token_secret`/`token`.
pub fn connection_spec(url: &str, token_secret: &str) -> FerrVaultConnectionSpec {
    FerrVaultConnectionSpec {
        mode: Default::default(),
        url: url.to_owned(),
        organization: None,
        token_secret_ref: Some(SecretKeyRef {
            name: token_secret.into(),
            key: "token".into(),
        }),
        oidc: None,
        ca_bundle_secret_ref: None,
    }
}

/// A FerrVaultSecret spec reading `vault` through connection `conn`.
pub fn secret_spec(conn: &str, vault: &str) -> FerrVaultSecretSpec {
    FerrVaultSecretSpec {
        connection_ref: ConnectionRef { name: conn.into() },
        project: None,
        vault: vault.into(),
        selector: None,
        target: None,
        refresh_interval: "1h".into(),
        rollout_restart: Vec::new(),
        transforms: Vec::new(),
    }
}

/// The string data of a Secret (lossy), for assertions.
pub fn data_of(secret: &Secret) -> BTreeMap<String, Vec<u8>> {
    secret
        .data
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v.0))
        .collect()
}

/// Whether a Secret carries a controller owner reference to `owner`.
pub fn controlled_by(secret: &Secret, owner: &FerrVaultSecret) -> bool {
    secret.owner_references().iter().any(|o| {
        o.controller == Some(true)
            && o.block_owner_deletion == Some(true)
            && Some(&o.uid) == owner.metadata.uid.as_ref()
    })
}

impl Harness {
    /// A cloud-mode connection (organization `acme`) to the FerrVault simulator opting in to the
    /// operator's cluster identity (`oidc: {}`).
    pub fn oidc_connection_spec(&self) -> FerrVaultConnectionSpec {
        FerrVaultConnectionSpec {
            mode: ferrvault_operator::api::ConnectionMode::Cloud,
            url: self.fv.url(),
            organization: Some("acme".into()),
            token_secret_ref: None,
            oidc: Some(ferrvault_operator::api::OidcSpec::default()),
            ca_bundle_secret_ref: None,
        }
    }

    /// Reveal requests the FerrVault simulator received (both modes).
    pub fn reveals(&self) -> u64 {
        let endpoints = self.fv.stats().total.endpoints;
        endpoints.get("reveal").copied().unwrap_or(0) + endpoints.get("cloud_reveal").copied().unwrap_or(0)
    }

    /// The value of the metric sample whose line starts with `series` (name and labels).
    pub fn metric(&self, series: &str) -> Option<f64> {
        self.metrics_text()
            .lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
    }
}

/// Stores an object of kind `K` named `name` in [`NS`] with `spec` exactly as given, so it can
/// carry what the CRD schema refuses. The API server would refuse it (422), so it is written
/// straight into storage (the simulator's test control
/// [`KubeSim::store_bypassing_admission`]), as an object stored under an older schema, or
/// written into etcd directly, exists in a real cluster.
pub fn store_unvalidated<K: Resource<DynamicType = ()>>(kube: &KubeSim, name: &str, spec: serde_json::Value) {
    let object = serde_json::json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "metadata": { "name": name, "namespace": NS },
        "spec": spec,
    });
    kube.store_bypassing_admission(&K::group(&()), &K::version(&()), &K::plural(&()), object)
        .unwrap_or_else(|e| panic!("{name} written into storage: {}", e.message));
}
