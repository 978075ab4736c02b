//! Fixtures shared by the `kube_sim_*` test files: a running simulator, unique names,
//! bounded polling and a CRD-defined `Widget` kind.
#![allow(dead_code, missing_docs)] // each test file uses a different subset

use ferrvault_sim::kube::KubeSim;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{Api, CustomResource, CustomResourceExt, api::PostParams};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use ferrvault_sim::testkit::{eventually, unique, within, within_for};

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

/// Registers the Widget CRD and returns once it is served.
pub async fn install_widget_crd(client: &kube::Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Widget::crd())
        .await
        .expect("CRD is accepted");
}
