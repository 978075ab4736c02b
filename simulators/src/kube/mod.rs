//! A Kubernetes API server simulator that `kube`, `kube-runtime` and `kubectl` accept as a
//! real cluster for the operations an operator uses.
//!
//! Start one with [`KubeSim::start`] (127.0.0.1, ephemeral port), talk to it with
//! [`KubeSim::client`] or any client given [`KubeSim::write_kubeconfig`], inject faults
//! through [`KubeSim::faults`] and read the [`KubeSim::audit`] log. The same controls are
//! served over HTTP under `/_sim/` (see [`admin`]).
//!
//! # Layout
//! - [`request`] parses paths and verbs, [`http`] serves them (faults, audit, errors),
//!   [`admin`] serves `/_sim/…`.
//! - [`api`] implements the verbs on top of [`store`] (objects, resourceVersion, history),
//!   using [`meta`] (server-owned metadata, status split), [`strategy`] (each kind's
//!   generation and unconditional-update policy), [`managed`] (`metadata.managedFields`),
//!   [`defaults`] (Secrets, Namespaces), [`immutability`] (Secret type, immutable Secrets
//!   and ConfigMaps), [`admission`] + [`schema`] (custom resources against their CRD schema:
//!   pruning, defaulting, validation, CEL), [`patch`], [`gc`] (what a delete does in the
//!   server) and [`crd`] (CRD registration and status). Errors are [`errors`] `Status`es with
//!   [`field_errors`] causes.
//! - [`collector`] is kube-controller-manager's garbage collector and namespace controller,
//!   run in the background.
//! - [`list`] + [`selectors`] serve lists, [`watch`] serves watches, [`metadata`] renders
//!   full, metadata-only and [`table`] views ([`printers`]: the columns of built-in
//!   kinds), [`discovery`] the discovery documents over the [`registry`] of resource
//!   types, [`openapi`] the OpenAPI v2 and v3 documents with the CRDs' schemas.
//! - [`encoding`] reads and writes bodies: JSON, YAML and, for built-in kinds,
//!   [`protobuf`]. [`events`] serves core Events through `events.k8s.io/v1` too;
//!   [`scale`] is the `scale` subresource; [`auth`] answers access and token reviews.
//! - [`faults`] and [`audit`] are the observation and injection points (with
//!   [`KubeSim::history`], every version of the objects of a resource);
//!   [`storage_write`] is the test control writing past admission; [`cli`] is the `sim kube`
//!   subcommand.
//!
//! # Guarantees
//! - One cluster-wide, monotonically increasing resourceVersion; every committed change
//!   has its own rv and exactly one watch event; no-op writes change nothing.
//! - Errors are `Status` objects with the real reasons, codes, messages and causes (field
//!   paths as a v1.33 server words them).
//! - Every API request is audited with its caller: `Impersonate-User`, else a bearer
//!   token's registered name (never the token), else the User-Agent (see [`audit`]).
//! - As a real server: only kinds with a spec/status split carry a generation; a PUT
//!   without resourceVersion is refused where the kind's strategy refuses it; a Secret's
//!   type and an immutable Secret's or ConfigMap's content cannot change; custom resources
//!   are pruned, defaulted (also when read) and validated against their CRD schema and CEL
//!   rules, with ratcheting and `fieldValidation`; garbage collection and namespace
//!   teardown happen in the background, dependents of owners already gone included.
//!
//! # Caveats
//! - Protobuf covers the built-in kinds served here (see [`protobuf::kinds`]) except
//!   CustomResourceDefinition objects, and not watch streams: a protobuf watch is answered
//!   in JSON (a client that accepts only protobuf for a custom resource gets 406, as on a
//!   real server). Quantities are kept as written, not canonicalised.
//! - OpenAPI documents carry the CRDs' schemas only: `kubectl explain` works for custom
//!   resources, not built-in kinds; kubectl computes strategic merge patches from its
//!   compiled-in types. Unknown fields of built-in kinds are stored, not pruned or refused
//!   (custom resources' are).
//! - Built-in kinds get the validation listed in the guarantees (and Secret data and keys),
//!   not the rest of theirs: names, labels, pod specs, selectors are not checked.
//! - CRD schemas: the value validations of `anyOf`, `oneOf` and `not` are not evaluated;
//!   formats other than `date-time`, `date`, `byte`, `uuid`, `ipv4` and `ipv6` are accepted
//!   as any string; `metadata` of custom resources keeps only ObjectMeta fields and is not
//!   validated further. CRDs are not validated beyond their names (a CRD with a rule that
//!   does not compile is accepted; writes to its objects then fail on that rule). Versions
//!   are not converted: every version is served from the same objects (a conversion
//!   strategy of `None`), each validated against its own schema, defaulted on read with the
//!   storage version's.
//! - RBAC is not enforced by default: every request is served whoever sends it, because
//!   many tests act as registered identities that no binding names. Access reviews
//!   (`kubectl auth can-i`, `SubjectAccessReview`) and `TokenReview` always answer exactly
//!   from the stored Roles, ClusterRoles and bindings and the registered tokens;
//!   [`KubeSimOptions::enforce_rbac`] (`--enforce-rbac`) authorizes every request against
//!   them too (impersonation itself is not authorized). Requests without credentials (the
//!   kubeconfig the simulator writes) are the administrator (`system:masters`). The bootstrap roles of a real cluster
//!   (discovery, `system:basic-user`) are built into the authorizer, not stored objects;
//!   ClusterRole aggregation is not done. A registered ServiceAccount token is valid
//!   only while its ServiceAccount exists (TokenReview checks it; requests do not).
//! - Server-side table columns exist for Deployments, Secrets, ConfigMaps, Namespaces,
//!   Events and Leases (and CRDs' printer columns); other built-in kinds print Name and
//!   Age. Deployments show the status a client wrote (no controller fills it).
//! - A write through the `scale` subresource is recorded in managedFields as an update of
//!   the parent object, not of its `scale` subresource.
//! - A PUT never creates: kinds whose strategy allows create-on-update (Leases, Events,
//!   Services) get 404 for a PUT of a missing object, as the other kinds do.
//! - Deleting a CRD removes its custom resources at once (no `customresourcecleanup`
//!   finalizer phase). The garbage collector matches owners by uid, kind, name and
//!   namespace, not by API version; it reacts within [`collector::PASS_INTERVAL`] of a write,
//!   or ten times its last pass's duration on a large store (see [`collector`]).
//! - Lost responses are answered with a `Status` (500 or 504), never a dropped connection.
//! - Built-in kinds are stored objects only: no controller runs (Deployments get no
//!   status or ReplicaSets). `status` of any kind changes only when a client writes it.
//! - A paginated list serves later pages from current data, not a snapshot (see [`list`]).
//! - `metadata.managedFields` are recorded per manager, operation and subresource, but their
//!   `fieldsV1` are the fields a write sent, not structured-merge-diff ownership, and apply
//!   never conflicts (see [`managed`]).
//! - Secret `data` that is not base64 gets 400 BadRequest, as the real decoder answers
//!   (issue 2 says 422; the real server says 400, see [`defaults::normalize`]).

pub mod admin;
pub mod admission;
pub mod api;
pub mod audit;
pub mod auth;
pub mod cli;
pub mod collector;
pub mod crd;
pub mod defaults;
pub mod discovery;
pub mod encoding;
pub mod errors;
pub mod events;
pub mod faults;
pub mod field_errors;
pub mod gc;
pub mod http;
pub mod immutability;
pub mod kubeconfig;
pub mod list;
pub mod managed;
pub mod meta;
pub mod metadata;
pub mod openapi;
pub mod patch;
pub mod printers;
pub mod protobuf;
pub mod registry;
pub mod request;
pub mod scale;
pub mod schema;
pub mod selectors;
pub mod state;
pub mod storage_write;
pub mod store;
pub mod strategy;
pub mod table;
pub mod watch;

pub use audit::AuditEntry;
pub use faults::{FaultConfig, Faults};

use serde_json::json;
use state::Shared;
use std::{net::SocketAddr, path::Path, sync::Arc, time::Duration};
use tokio::task::JoinHandle;

/// Errors starting or using the simulator.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The listening socket could not be bound.
    #[error("binding {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The kubeconfig could not be written.
    #[error("writing kubeconfig {path}: {source}")]
    WriteKubeconfig {
        /// Target file.
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Bootstrapping the default namespaces failed (a bug in the simulator).
    #[error("bootstrapping namespace {namespace}: {message}")]
    Bootstrap {
        /// The namespace being created.
        namespace: &'static str,
        /// The Status message.
        message: String,
    },
}

/// Tunables of a simulator instance.
#[derive(Debug, Clone)]
pub struct KubeSimOptions {
    /// Changes kept for watch replay; older resourceVersions get 410 Gone.
    pub history: usize,
    /// Interval of periodic BOOKMARK events.
    pub bookmark_interval: Duration,
    /// Authorize every request against the stored RBAC objects, as a real server does
    /// (requests without credentials stay the administrator's; see [`auth::enforce`]).
    pub enforce_rbac: bool,
}

impl Default for KubeSimOptions {
    fn default() -> Self {
        KubeSimOptions {
            history: store::DEFAULT_HISTORY,
            bookmark_interval: state::DEFAULT_BOOKMARK_INTERVAL,
            enforce_rbac: false,
        }
    }
}

/// A running simulator. Dropping it (or [`KubeSim::shutdown`]) stops the server and ends
/// every open watch.
#[derive(Debug)]
pub struct KubeSim {
    shared: Arc<Shared>,
    addr: SocketAddr,
    server: Option<JoinHandle<()>>,
}

/// Namespaces that exist from the start, as on a fresh cluster.
pub const DEFAULT_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

impl KubeSim {
    /// Starts on 127.0.0.1 with an ephemeral port and default options.
    ///
    /// # Errors
    /// [`SimError::Bind`] if no port can be bound.
    pub async fn start() -> Result<KubeSim, SimError> {
        Self::start_with(SocketAddr::from(([127, 0, 0, 1], 0)), KubeSimOptions::default()).await
    }

    /// Starts on `addr` with default options.
    ///
    /// # Errors
    /// [`SimError::Bind`] if `addr` cannot be bound.
    pub async fn start_on(addr: SocketAddr) -> Result<KubeSim, SimError> {
        Self::start_with(addr, KubeSimOptions::default()).await
    }

    /// Starts on `addr` with `options`. Binds before spawning, so a bad port fails here.
    ///
    /// # Errors
    /// [`SimError::Bind`] if `addr` cannot be bound.
    pub async fn start_with(addr: SocketAddr, options: KubeSimOptions) -> Result<KubeSim, SimError> {
        let mut shared = Shared::new(options.history, options.bookmark_interval);
        shared.enforce_rbac = options.enforce_rbac;
        let shared = Arc::new(shared);
        bootstrap(&shared)?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| SimError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| SimError::Bind { addr, source })?;
        tokio::spawn(collector::run(shared.clone()));
        let filter = http::service(shared.clone(), addr.to_string());
        let stop = shared.shutdown.clone();
        let server = tokio::spawn(
            warp::serve(filter)
                .incoming(listener)
                .graceful(stop.cancelled_owned())
                .run(),
        );
        Ok(KubeSim {
            shared,
            addr,
            server: Some(server),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The `kube::Config` behind [`KubeSim::client`], for callers that need to adjust it.
    ///
    /// NOTE: kube 5 clients retry 429, 503 and 504 by themselves (up to 15 times,
    /// honouring `Retry-After`; `Config::default_retry`). A test that wants to see
    /// injected 429/503 as errors sets `default_retry = false` and builds its own client.
    pub fn config(&self) -> kube::Config {
        let mut config = kube::Config::new(self.url().parse().expect("the simulator URL is a valid URI"));
        config.default_namespace = "default".into();
        config
    }

    /// A client for this simulator (plain HTTP, no credentials; audited by User-Agent).
    /// It retries injected 429/503 like any kube 5 client (see [`KubeSim::config`]).
    ///
    /// # Panics
    /// Outside a tokio runtime (kube's client needs one).
    pub fn client(&self) -> kube::Client {
        kube::Client::try_from(self.config()).expect("a plain-HTTP kube client always builds")
    }

    /// A client whose requests carry a bearer token that the audit log records as
    /// `identity` (the token itself is never logged).
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub fn client_as(&self, identity: &str) -> kube::Client {
        let token = self.register_identity(identity);
        let mut config = self.config();
        config.auth_info =
            serde_json::from_value(json!({ "token": token })).expect("AuthInfo with a token deserialises");
        kube::Client::try_from(config).expect("a plain-HTTP kube client always builds")
    }

    /// Mints a bearer token standing for `identity` and returns it (for non-kube clients).
    pub fn register_identity(&self, identity: &str) -> String {
        let token = format!("sim-{}", uuid::Uuid::new_v4().simple());
        self.shared.audit.register_token(token.clone(), identity);
        token
    }

    /// Writes a kubeconfig (no credentials) for kubectl and other clients.
    ///
    /// # Errors
    /// [`SimError::WriteKubeconfig`] on I/O failure.
    pub fn write_kubeconfig(&self, path: &Path) -> Result<(), SimError> {
        std::fs::write(path, kubeconfig::render(&self.url(), None)).map_err(|source| {
            SimError::WriteKubeconfig {
                path: path.display().to_string(),
                source,
            }
        })
    }

    /// Writes a kubeconfig whose user impersonates `identity` (`as: identity`), so
    /// kubectl's requests are audited under that name.
    ///
    /// NOTE: a bearer token would not do: kubectl sends no credentials to a plain-HTTP
    /// server. Impersonation headers it does send.
    ///
    /// # Errors
    /// [`SimError::WriteKubeconfig`] on I/O failure.
    pub fn write_kubeconfig_as(&self, path: &Path, identity: &str) -> Result<(), SimError> {
        write_atomically(path, &kubeconfig::render(&self.url(), Some(identity)))
    }

    /// The fault-injection handle.
    pub fn faults(&self) -> Faults {
        Faults {
            shared: self.shared.clone(),
        }
    }

    /// Every request answered so far (reads included), oldest first.
    pub fn audit(&self) -> Vec<AuditEntry> {
        self.shared.audit.snapshot()
    }

    /// Empties the audit log, so a test can look at what happens from now on.
    pub fn clear_audit(&self) {
        self.shared.audit.clear();
    }

    /// Test control: writes `object` straight into storage at `group`/`version`/`plural`,
    /// past admission (no schema pruning, defaulting or validation), as `etcdctl put`
    /// would: how a test gets an object a cluster can hold but its API no longer accepts
    /// (stored under an older or missing CRD schema). See [`storage_write`].
    ///
    /// # Errors
    /// The `Status` error: 404 for a resource not served, 409 if the object exists.
    pub fn store_bypassing_admission(
        &self,
        group: &str,
        version: &str,
        plural: &str,
        object: serde_json::Value,
    ) -> Result<serde_json::Value, errors::ApiError> {
        storage_write::store_bypassing_admission(&self.shared, group, version, plural, object)
    }

    /// From now on keeps every version of every object of `group`/`plural` (all changes,
    /// beyond the bounded watch history), for [`KubeSim::history`].
    pub fn keep_history(&self, group: &str, plural: &str) {
        let id = registry::ResourceId {
            group: group.into(),
            plural: plural.into(),
        };
        self.shared.write(|store| store.keep_revisions(&id));
    }

    /// Every change of `group`/`plural` since [`KubeSim::keep_history`], oldest first: each
    /// committed version of each object (writes whose response was lost included), and
    /// deletions.
    pub fn history(&self, group: &str, plural: &str) -> Vec<store::Revision> {
        let id = registry::ResourceId {
            group: group.into(),
            plural: plural.into(),
        };
        self.shared
            .read()
            .revisions(&id)
            .iter()
            .map(|c| store::Revision {
                resource_version: c.rv,
                event: c.kind,
                object: (*c.object).clone(),
            })
            .collect()
    }

    /// The current cluster-wide resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared.read().rv()
    }

    /// BOOKMARK events sent so far over all watches. A test that needs a watcher to
    /// hold a fresh resourceVersion waits for this to grow.
    pub fn bookmarks_sent(&self) -> u64 {
        self.shared
            .bookmarks_sent
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Stops the server, ends every watch and waits for the listener to close.
    pub async fn shutdown(mut self) {
        self.shared.shutdown.cancel();
        if let Some(server) = self.server.take() {
            // A panic in the server task has already been reported by tokio; nothing to add.
            let _ = server.await;
        }
    }
}

impl Drop for KubeSim {
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
    }
}

fn write_atomically(path: &Path, content: &str) -> Result<(), SimError> {
    let err = |source| SimError::WriteKubeconfig {
        path: path.display().to_string(),
        source,
    };
    let aside = path.with_extension("partial");
    std::fs::write(&aside, content).map_err(err)?;
    std::fs::rename(&aside, path).map_err(err)
}

fn bootstrap(shared: &Shared) -> Result<(), SimError> {
    let rt = shared
        .read()
        .registry
        .lookup("", "v1", "namespaces")
        .cloned()
        .expect("namespaces are built in");
    let opts = api::WriteOpts {
        dry_run: false,
        manager: "kube-apiserver".into(),
        directive: admission::Directive::default(),
    };
    for namespace in DEFAULT_NAMESPACES {
        let t = api::Target {
            rt: rt.clone(),
            version: "v1".into(),
            namespace: None,
            name: None,
            subresource: None,
        };
        api::create(shared, &t, json!({ "metadata": { "name": namespace } }), &opts).map_err(|e| {
            SimError::Bootstrap {
                namespace,
                message: e.message,
            }
        })?;
    }
    Ok(())
}
