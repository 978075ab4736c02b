//! The cluster as kubectl users name it (`--kubeconfig`, `--context`, `-n`), and the deadline of
//! every request to it.
//!
//! # Guarantees
//! - The kubeconfig is found as kubectl finds it: `--kubeconfig`, else `$KUBECONFIG`, else
//!   `~/.kube/config`, else the in-cluster service account; `--context` picks a context.
//! - The namespace is `-n`, else the context's, else `default`.
//! - Every request ends within `--request-timeout`, with a [`PluginError::Timeout`] naming it.

use std::{future::Future, time::Duration};

use ferrvault_operator::api::{FerrVaultConnection, FerrVaultSecret};
use kube::{
    Api, Client, Config,
    api::{ApiResource, DynamicObject},
    config::{KubeConfigOptions, Kubeconfig},
};

use crate::{args::ClusterArgs, error::PluginError};

/// The field manager of the plugin's writes (kubectl's is `kubectl-<verb>`).
pub const FIELD_MANAGER: &str = "kubectl-ferrvault";

/// Which namespaces a command reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// One namespace.
    Namespace(String),
    /// Every namespace (`-A`).
    All,
}

impl Scope {
    /// How the scope reads in a message: `in namespace default`, `in any namespace`.
    pub fn describe(&self) -> String {
        match self {
            Self::Namespace(namespace) => format!("in namespace {namespace}"),
            Self::All => "in any namespace".to_owned(),
        }
    }
}

/// A client of the cluster, its namespace and the deadline of each request.
#[derive(Clone)]
pub struct Cluster {
    client: Client,
    namespace: String,
    timeout: Duration,
}

impl Cluster {
    /// Loads the configuration `args` name and builds the client (no request is sent).
    ///
    /// # Errors
    /// [`PluginError::Config`] when no configuration can be loaded.
    pub async fn connect(args: &ClusterArgs) -> Result<Self, PluginError> {
        let mut config = load_config(args).await?;
        config.read_timeout = Some(args.request_timeout);
        config.write_timeout = Some(args.request_timeout);
        config.connect_timeout = Some(args.request_timeout);
        let namespace = args
            .namespace
            .clone()
            .unwrap_or_else(|| config.default_namespace.clone());
        let client = Client::try_from(config).map_err(|e| PluginError::Config(e.to_string()))?;
        Ok(Self {
            client,
            namespace,
            timeout: args.request_timeout,
        })
    }

    /// The namespace of `-n` (or the context's).
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Every namespace with `-A`, else [`Cluster::namespace`].
    pub fn scope(&self, all_namespaces: bool) -> Scope {
        if all_namespaces {
            Scope::All
        } else {
            Scope::Namespace(self.namespace.clone())
        }
    }

    /// FerrVaultSecrets of `scope`, read untyped: a field the operator added after this plugin
    /// was built still reads, and one object stored past the schema fails alone.
    pub fn secrets_in(&self, scope: &Scope) -> Api<DynamicObject> {
        let resource = ApiResource::erase::<FerrVaultSecret>(&());
        match scope {
            Scope::Namespace(namespace) => Api::namespaced_with(self.client.clone(), namespace, &resource),
            Scope::All => Api::all_with(self.client.clone(), &resource),
        }
    }

    /// FerrVaultConnections of `namespace`, read untyped (see [`Cluster::secrets_in`]).
    pub fn connections(&self, namespace: &str) -> Api<DynamicObject> {
        let resource = ApiResource::erase::<FerrVaultConnection>(&());
        Api::namespaced_with(self.client.clone(), namespace, &resource)
    }

    /// Objects of kind `K` in `namespace`.
    pub fn api<K>(&self, namespace: &str) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        Api::namespaced(self.client.clone(), namespace)
    }

    /// Runs `request` within the deadline; `action` names it in errors (`getting …`).
    ///
    /// # Errors
    /// The request's failure, or [`PluginError::Timeout`].
    pub async fn call<T>(
        &self,
        action: impl FnOnce() -> String,
        request: impl Future<Output = kube::Result<T>>,
    ) -> Result<T, PluginError> {
        match tokio::time::timeout(self.timeout, request).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(PluginError::from_kube(action(), error)),
            Err(_) => Err(PluginError::Timeout {
                action: action(),
                after: self.timeout,
            }),
        }
    }
}

/// The configuration `args` name; see the module guarantees.
async fn load_config(args: &ClusterArgs) -> Result<Config, PluginError> {
    let fail = |error: &dyn std::fmt::Display| PluginError::Config(error.to_string());
    let options = KubeConfigOptions {
        context: args.context.clone(),
        ..KubeConfigOptions::default()
    };
    match (&args.kubeconfig, &args.context) {
        (Some(path), _) => {
            let kubeconfig = Kubeconfig::read_from(path).map_err(|e| fail(&e))?;
            Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .map_err(|e| fail(&e))
        }
        (None, Some(_)) => Config::from_kubeconfig(&options).await.map_err(|e| fail(&e)),
        (None, None) => Config::infer().await.map_err(|e| fail(&e)),
    }
}
