//! The cluster the tenants share: both simulators in the test process (CRDs installed, RBAC
//! enforced, one namespace per tenant with its Role, the operator's chart RBAC), an HTTPS front
//! for FerrVault, and the operator's own files.

use std::path::{Path, PathBuf};

use ferrvault_operator::api::crdgen;
use ferrvault_sim::{
    ferrvault::{FerrVaultSim, SimConfig},
    kube::{KubeSim, KubeSimOptions},
};
use k8s_openapi::{
    api::core::v1::Namespace, apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{Api, api::PostParams};
use tempfile::TempDir;

use super::{
    ATTACKER, CLUSTER_ID, ORG, PLAYGROUND_VAULT, SA_TOKEN, VICTIM, VICTIM_DB_URL, VICTIM_VAULT,
    rbac::{self, OPERATOR_NAMESPACE},
    tenant::Tenant,
    tls_front::TlsFront,
};

/// The attacker's own FerrVault token (reads [`PLAYGROUND_VAULT`] only).
pub const ATTACKER_TOKEN: &str = "fvsat_TENANTCHECK_attacker_token";
/// The victim's FerrVault token (reads [`VICTIM_VAULT`]).
pub const VICTIM_TOKEN: &str = "fvsat_TENANTCHECK_victim_token";
/// The platform team's FerrVault token, lent by a ClusterFerrVaultConnection (reads
/// [`VICTIM_VAULT`]); FerrVault counts its requests under the label `platform`.
pub const PLATFORM_TOKEN: &str = "fvsat_TENANTCHECK_platform_token";

/// Where the Kubernetes simulator listens: on loopback, apart from FerrVault's 127.0.0.1.
pub const KUBE_ADDRESS: ([u8; 4], u16) = ([127, 0, 0, 3], 0);

/// Both simulators, the HTTPS front, the tenants' namespaces and the operator's files.
pub struct World {
    pub kube: KubeSim,
    pub fv: FerrVaultSim,
    /// `https://127.0.0.1:…` in front of [`World::fv`], certified by [`TlsFront::CA_PEM`].
    pub fv_https: TlsFront,
    /// The cluster administrator's client (installs CRDs, creates namespaces, reads anything):
    /// no credentials, which the simulator serves as `system:masters`.
    pub admin: kube::Client,
    /// The user the operator authenticates as: the chart's ServiceAccount.
    pub operator_identity: String,
    dir: TempDir,
}

impl World {
    /// FerrVault holding [`VICTIM_VAULT`] (read by [`VICTIM_TOKEN`]) and [`PLAYGROUND_VAULT`]
    /// (read by [`ATTACKER_TOKEN`]); cluster [`CLUSTER_ID`] exchanges [`SA_TOKEN`] for a token
    /// of org [`ORG`] that FerrVault honours for namespace [`VICTIM`] only.
    pub fn ferrvault_config() -> SimConfig {
        let mut config = SimConfig::default()
            .vault(VICTIM_VAULT, [("DB_URL", VICTIM_DB_URL)])
            .vault(PLAYGROUND_VAULT, [("GREETING", "hello")])
            .service_account_token(VICTIM_TOKEN, VICTIM_VAULT)
            .token_label(VICTIM_TOKEN, "victim")
            .service_account_token(ATTACKER_TOKEN, PLAYGROUND_VAULT)
            .token_label(ATTACKER_TOKEN, "attacker")
            .service_account_token(PLATFORM_TOKEN, VICTIM_VAULT)
            .token_label(PLATFORM_TOKEN, "platform")
            .oidc_cluster(CLUSTER_ID, SA_TOKEN, ORG)
            .rate_limit(1000.0, 1000);
        config.oidc_clusters[0].namespaces = vec![VICTIM.to_owned()];
        config
    }

    /// Starts everything with [`World::ferrvault_config`]; every Kubernetes request is authorized.
    pub async fn start() -> World {
        let _ = rustls::crypto::ring::default_provider().install_default(); // first caller wins
        let options = KubeSimOptions {
            enforce_rbac: true,
            ..KubeSimOptions::default()
        };
        // Apart from FerrVault's 127.0.0.1, so the API server is an address of its own, as in a cluster.
        let kube = KubeSim::start_with(KUBE_ADDRESS.into(), options)
            .await
            .expect("kube simulator starts");
        let fv = FerrVaultSim::start(Self::ferrvault_config())
            .await
            .expect("FerrVault simulator starts");
        let fv_https = TlsFront::start(fv.addr()).await;
        let admin = kube.client();
        let crds: Api<CustomResourceDefinition> = Api::all(admin.clone());
        for crd in crdgen::crds() {
            crds.create(&PostParams::default(), &crd)
                .await
                .expect("CRD installs");
        }
        let namespaces: Api<Namespace> = Api::all(admin.clone());
        for name in [OPERATOR_NAMESPACE, ATTACKER, VICTIM] {
            let namespace =
                serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).expect("a Namespace");
            namespaces
                .create(&PostParams::default(), &namespace)
                .await
                .expect("namespace created");
        }
        for tenant in [ATTACKER, VICTIM] {
            rbac::grant_tenant(&admin, tenant).await;
        }
        let operator_identity = rbac::grant_operator(&admin).await;
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("sa-token"), SA_TOKEN).expect("stand-in token written");
        std::fs::create_dir(dir.path().join("projected")).expect("projected token dir");
        std::fs::write(dir.path().join("projected/token"), SA_TOKEN).expect("projected token written");
        std::fs::write(dir.path().join("ca.pem"), TlsFront::CA_PEM).expect("CA written");
        World {
            kube,
            fv,
            fv_https,
            admin,
            operator_identity,
            dir,
        }
    }

    /// The stand-in for the operator's ServiceAccount token
    /// (`/var/run/secrets/kubernetes.io/serviceaccount/token`): a file holding [`SA_TOKEN`].
    pub fn sa_token_path(&self) -> PathBuf {
        self.dir.path().join("sa-token")
    }

    /// The operator's projected token for FerrVault (`--oidc-token-path` where a test needs it
    /// apart from [`World::sa_token_path`]); it holds the same [`SA_TOKEN`], which FerrVault
    /// accepts for [`CLUSTER_ID`].
    pub fn projected_token_path(&self) -> PathBuf {
        self.dir.path().join("projected/token")
    }

    /// The CA that certifies [`World::fv_https`], as a PEM file (for `SSL_CERT_FILE`).
    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// A scratch directory that lives as long as the world.
    pub fn scratch(&self) -> &Path {
        self.dir.path()
    }

    /// A kubeconfig whose requests the simulator audits as `identity`.
    pub fn kubeconfig(&self, identity: &str) -> PathBuf {
        let path = self.dir.path().join(format!("{identity}.kubeconfig"));
        self.kube
            .write_kubeconfig_as(&path, identity)
            .expect("kubeconfig written");
        path
    }

    /// The tenant owning `namespace`, acting through its own client as
    /// [`rbac::tenant_user`], which only the tenant's Role grants anything.
    pub fn tenant(&self, namespace: &str) -> Tenant {
        Tenant::new(self.kube.client_as(&rbac::tenant_user(namespace)), namespace)
    }

    /// The attacker ([`ATTACKER`]).
    pub fn attacker(&self) -> Tenant {
        self.tenant(ATTACKER)
    }

    /// The victim ([`VICTIM`]), another tenant that must keep syncing.
    pub fn victim(&self) -> Tenant {
        self.tenant(VICTIM)
    }
}
