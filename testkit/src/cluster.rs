//! The one cluster every test against the simulators starts from: the Kubernetes API simulator
//! with the CRDs installed, the FerrVault simulator, the test's own client, a kubeconfig per
//! identity, and the APIs of the operator's kinds in [`NS`].
//!
//! The in-process [`Harness`](crate::harness::Harness), the scenarios' cluster and the tenant
//! attacks' world each hold one and add what their tests need (the operator in the process,
//! object builders, RBAC and namespaces); they dereference to it, so `h.kube`, `world.fv` or
//! `cluster.secrets()` reach it whichever wrapper a test holds.

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
};

use ferrvault_operator::api::{FerrVaultConnection, FerrVaultSecret, crdgen};
use ferrvault_sim::{
    ferrvault::{FerrVaultSim, SimConfig},
    kube::{KubeSim, KubeSimOptions},
};
use k8s_openapi::{
    api::core::v1::Secret, apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api, Resource,
    api::{ApiResource, DynamicObject, PostParams},
};
use tempfile::TempDir;

use crate::fixtures::{NS, store_unvalidated};

/// How the Kubernetes simulator is started and who the test's own client is.
pub struct ClusterOptions {
    /// Where the Kubernetes simulator listens (`127.0.0.1:0` unless set).
    pub kube_address: SocketAddr,
    /// The Kubernetes simulator's options (RBAC enforcement, history, bookmarks).
    pub kube: KubeSimOptions,
    /// The identity the simulator audits the test's own client as; `None`: a client without
    /// credentials, which the simulator serves as `system:masters`.
    pub client_identity: Option<String>,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            kube_address: SocketAddr::from(([127, 0, 0, 1], 0)),
            kube: KubeSimOptions::default(),
            client_identity: None,
        }
    }
}

/// Both simulators, running in the test process, with the CRDs installed.
pub struct Cluster {
    /// The Kubernetes API simulator.
    pub kube: KubeSim,
    /// The FerrVault simulator.
    pub fv: FerrVaultSim,
    /// The test's own client of [`Cluster::kube`] ([`ClusterOptions::client_identity`]).
    pub client: kube::Client,
    /// Kubeconfigs and whatever else a test writes; removed with the cluster.
    dir: TempDir,
}

impl Cluster {
    /// Starts both simulators with the default [`ClusterOptions`] and installs the CRDs.
    pub async fn start(ferrvault: SimConfig) -> Cluster {
        Self::start_with(ferrvault, ClusterOptions::default()).await
    }

    /// Starts both simulators with `options` and installs the CRDs (as the test's client).
    ///
    /// # Panics
    /// When a simulator does not start or a CRD is refused.
    pub async fn start_with(ferrvault: SimConfig, options: ClusterOptions) -> Cluster {
        let _ = rustls::crypto::ring::default_provider().install_default(); // first caller wins
        let kube = KubeSim::start_with(options.kube_address, options.kube)
            .await
            .expect("kube simulator starts");
        let fv = FerrVaultSim::start(ferrvault)
            .await
            .expect("FerrVault simulator starts");
        let client = match &options.client_identity {
            Some(identity) => kube.client_as(identity),
            None => kube.client(),
        };
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        for crd in crdgen::crds() {
            crds.create(&PostParams::default(), &crd)
                .await
                .expect("CRD installs");
        }
        Cluster {
            kube,
            fv,
            client,
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// A kubeconfig whose requests the simulator audits as `identity`.
    pub fn kubeconfig(&self, identity: &str) -> PathBuf {
        let path = self.dir.path().join(format!("{identity}.kubeconfig"));
        self.kube
            .write_kubeconfig_as(&path, identity)
            .expect("kubeconfig written");
        path
    }

    /// A scratch directory that lives as long as the cluster.
    pub fn scratch(&self) -> &Path {
        self.dir.path()
    }

    /// Secrets in [`NS`].
    pub fn secrets(&self) -> Api<Secret> {
        Api::namespaced(self.client.clone(), NS)
    }

    /// FerrVaultSecrets in [`NS`].
    pub fn fvs(&self) -> Api<FerrVaultSecret> {
        Api::namespaced(self.client.clone(), NS)
    }

    /// FerrVaultConnections in [`NS`].
    pub fn fvc(&self) -> Api<FerrVaultConnection> {
        Api::namespaced(self.client.clone(), NS)
    }

    /// An untyped API of kind `K` in [`NS`]: reads and writes objects whatever their spec
    /// holds (objects the typed client cannot read).
    pub fn raw<K: Resource<DynamicType = ()>>(&self) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), NS, &ApiResource::erase::<K>(&()))
    }

    /// Stores `name` of kind `K` with `spec` exactly as given, past the CRD schema (see
    /// [`store_unvalidated`]).
    pub async fn create_raw<K: Resource<DynamicType = ()>>(&self, name: &str, spec: serde_json::Value) {
        store_unvalidated::<K>(&self.kube, name, spec);
    }
}
