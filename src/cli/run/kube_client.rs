//! The process's Kubernetes client: from `--kubeconfig` or kube's inference, counting its
//! requests (`rest_client_*` metrics).

use std::path::Path;

use kube::config::{KubeConfigOptions, Kubeconfig};

use super::RunError;
use crate::telemetry::{self, rest_client::RestClientMetrics};

/// `--kubeconfig` when given, else kube's inference (in-cluster, `$KUBECONFIG`, `~/.kube/config`).
///
/// # Errors
/// [`RunError::KubeConfig`] with kube's reason (no file content is included).
pub async fn kube_client(kubeconfig: Option<&Path>) -> Result<kube::Client, RunError> {
    kube_client_for(kube_config(kubeconfig).await?)
}

/// The Kubernetes configuration of [`kube_client`].
///
/// # Errors
/// [`RunError::KubeConfig`] with kube's reason (no file content is included).
pub(super) async fn kube_config(kubeconfig: Option<&Path>) -> Result<kube::Config, RunError> {
    let _ = rustls::crypto::ring::default_provider().install_default(); // see OperatorProcess::start
    let fail = |error: &dyn std::fmt::Display| RunError::KubeConfig(error.to_string());
    Ok(match kubeconfig {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path).map_err(|e| fail(&e))?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|e| fail(&e))?
        }
        None => kube::Config::infer().await.map_err(|e| fail(&e))?,
    })
}

/// A client of `config` counting its requests (`rest_client_*` metrics).
///
/// # Errors
/// [`RunError::KubeConfig`] when kube cannot build it.
pub(super) fn kube_client_for(config: kube::Config) -> Result<kube::Client, RunError> {
    let fail = |error: &dyn std::fmt::Display| RunError::KubeConfig(error.to_string());
    let requests = RestClientMetrics::process_wide().layer(telemetry::rest_client::host_label(&config));
    Ok(kube::client::ClientBuilder::try_from(config)
        .map_err(|e| fail(&e))?
        .with_layer(&requests)
        .build())
}
