//! The cluster the tenants share: both simulators in the test process (CRDs installed, RBAC
//! enforced, one namespace per tenant with its Role, the operator's chart RBAC), an HTTPS front
//! for FerrVault, and the operator's own files.

use std::path::PathBuf;

use ferrvault_sim::{ferrvault::SimConfig, kube::KubeSimOptions};
use ferrvault_testkit::cluster::{Cluster, ClusterOptions};
use k8s_openapi::api::core::v1::Namespace;
use kube::{Api, api::PostParams};

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

/// Both simulators, the HTTPS front, the tenants' namespaces and the operator's files: a
/// [`Cluster`] (which it dereferences to: `world.kube`, `world.fv`, `world.kubeconfig(…)`,
/// `world.scratch()`) with RBAC enforced and what the attacks add.
pub struct World {
    /// The simulators; the test's client is the cluster administrator's ([`World::admin`]).
    pub cluster: Cluster,
    /// `https://127.0.0.1:…` in front of the FerrVault simulator, certified by [`TlsFront::CA_PEM`].
    pub fv_https: TlsFront,
    /// The cluster administrator's client (installs CRDs, creates namespaces, reads anything):
    /// no credentials, which the simulator serves as `system:masters`.
    pub admin: kube::Client,
    /// The user the operator authenticates as: the chart's ServiceAccount.
    pub operator_identity: String,
}

impl std::ops::Deref for World {
    type Target = Cluster;

    fn deref(&self) -> &Cluster {
        &self.cluster
    }
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
        Self::start_with(Self::ferrvault_config()).await
    }

    /// [`World::start`] with FerrVault configured as `ferrvault` (e.g. [`World::ferrvault_config`]
    /// serving HTTPS and requiring a client certificate, or with its cluster honoured for more
    /// namespaces).
    pub async fn start_with(ferrvault: SimConfig) -> World {
        // Apart from FerrVault's 127.0.0.1, so the API server is an address of its own, as in a cluster.
        let options = ClusterOptions {
            kube_address: KUBE_ADDRESS.into(),
            kube: KubeSimOptions {
                enforce_rbac: true,
                ..KubeSimOptions::default()
            },
            client_identity: None,
        };
        let cluster = Cluster::start_with(ferrvault, options).await;
        let fv_https = TlsFront::start(cluster.fv.addr()).await;
        let admin = cluster.client.clone();
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
        let dir = cluster.scratch();
        std::fs::write(dir.join("sa-token"), SA_TOKEN).expect("stand-in token written");
        std::fs::create_dir(dir.join("projected")).expect("projected token dir");
        std::fs::write(dir.join("projected/token"), SA_TOKEN).expect("projected token written");
        std::fs::write(dir.join("ca.pem"), TlsFront::CA_PEM).expect("CA written");
        World {
            cluster,
            fv_https,
            admin,
            operator_identity,
        }
    }

    /// The stand-in for the operator's ServiceAccount token
    /// (`/var/run/secrets/kubernetes.io/serviceaccount/token`): a file holding [`SA_TOKEN`].
    pub fn sa_token_path(&self) -> PathBuf {
        self.scratch().join("sa-token")
    }

    /// The operator's projected token for FerrVault (`--oidc-token-path` where a test needs it
    /// apart from [`World::sa_token_path`]); it holds the same [`SA_TOKEN`], which FerrVault
    /// accepts for [`CLUSTER_ID`].
    pub fn projected_token_path(&self) -> PathBuf {
        self.scratch().join("projected/token")
    }

    /// The CA that certifies [`World::fv_https`], as a PEM file (for `SSL_CERT_FILE`).
    pub fn ca_file(&self) -> PathBuf {
        self.scratch().join("ca.pem")
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
