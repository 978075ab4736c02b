//! Fixtures shared by the `kube_sim_*` test files: a running simulator, unique names,
//! bounded polling and a CRD-defined `Widget` kind.
#![allow(dead_code, missing_docs)] // each test file uses a different subset

use ferrvault_operator::sim::kube::KubeSim;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{Api, CustomResource, CustomResourceExt, api::PostParams};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::{future::Future, time::Duration};

/// Generous bound that only catches hangs.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// A test custom resource with a status subresource.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "sim.ferrvault.dev",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus",
    shortname = "wd"
)]
pub struct WidgetSpec {
    pub size: i32,
}

/// Status of a [`Widget`].
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct WidgetStatus {
    pub observed: i32,
}

pub async fn sim() -> KubeSim {
    KubeSim::start().await.expect("simulator starts on 127.0.0.1:0")
}

/// A name unique to this test run.
pub fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", &uuid::Uuid::new_v4().simple().to_string()[..8])
}

/// Registers the Widget CRD and returns once it is served.
pub async fn install_widget_crd(client: &kube::Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Widget::crd())
        .await
        .expect("CRD is accepted");
}

/// Polls `check` until it returns `Some`, failing with `what` after [`DEADLINE`].
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Runs `fut`, failing with `what` if it takes longer than [`DEADLINE`].
pub async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    within_for(DEADLINE, what, fut).await
}

/// Runs `fut`, failing with `what` if it takes longer than `limit`.
pub async fn within_for<T>(limit: Duration, what: &str, fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, fut)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish in {limit:?}: likely deadlocked"))
}
