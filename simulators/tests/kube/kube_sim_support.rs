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

/// A CRD whose schema uses what the simulator's admission checks: required fields, an enum
/// with a default, a pattern, bounds, a nullable field, preserved unknown fields, a list
/// map, a date-time, a CEL rule and a transition rule.
pub fn gadget_crd() -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": { "name": "gadgets.sim.ferrvault.dev" },
        "spec": {
            "group": "sim.ferrvault.dev",
            "scope": "Namespaced",
            "names": { "plural": "gadgets", "singular": "gadget", "kind": "Gadget" },
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": { "status": {} },
                "schema": { "openAPIV3Schema": {
                    "type": "object",
                    "required": ["spec"],
                    "properties": {
                        "spec": {
                            "type": "object",
                            "required": ["url"],
                            "properties": {
                                "url": { "type": "string", "pattern": "^https?://" },
                                "mode": { "type": "string", "enum": ["ferrvault", "cloud"], "default": "ferrvault" },
                                "organization": { "type": "string", "nullable": true },
                                "replicas": { "type": "integer", "minimum": 0, "maximum": 10 },
                                "name": { "type": "string", "x-kubernetes-validations": [
                                    { "rule": "self == oldSelf", "message": "name is immutable" }
                                ] },
                                "extra": { "type": "object", "x-kubernetes-preserve-unknown-fields": true }
                            },
                            "x-kubernetes-validations": [{
                                "rule": "self.mode != 'cloud' || (has(self.organization) && self.organization != '')",
                                "message": "organization is required when mode is cloud"
                            }]
                        },
                        "status": {
                            "type": "object",
                            "properties": {
                                "observed": { "type": "integer", "default": 0 },
                                "conditions": {
                                    "type": "array",
                                    "x-kubernetes-list-type": "map",
                                    "x-kubernetes-list-map-keys": ["type"],
                                    "items": {
                                        "type": "object",
                                        "required": ["type", "status"],
                                        "properties": {
                                            "type": { "type": "string" },
                                            "status": { "type": "string", "enum": ["True", "False", "Unknown"] },
                                            "lastTransitionTime": { "type": "string", "format": "date-time" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                } }
            }]
        }
    })
}

/// Registers the Gadget CRD ([`gadget_crd`]) and returns an API for Gadgets in `default`.
pub async fn install_gadget_crd(client: &kube::Client) -> Api<kube::api::DynamicObject> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(gadget_crd()).expect("a CRD");
    crds.create(&PostParams::default(), &crd)
        .await
        .expect("CRD is accepted");
    gadgets(client)
}

/// Gadgets in `default`, untyped.
pub fn gadgets(client: &kube::Client) -> Api<kube::api::DynamicObject> {
    let gvk = kube::api::GroupVersionKind::gvk("sim.ferrvault.dev", "v1", "Gadget");
    Api::namespaced_with(client.clone(), "default", &kube::api::ApiResource::from_gvk(&gvk))
}

/// A Gadget named `name` with `spec`, as a client would send it.
pub fn gadget(name: &str, spec: serde_json::Value) -> kube::api::DynamicObject {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "sim.ferrvault.dev/v1", "kind": "Gadget",
        "metadata": { "name": name }, "spec": spec,
    }))
    .expect("a Gadget")
}

/// The `Status` of a refused request.
pub fn refusal<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> kube::core::Status {
    match result {
        Err(kube::Error::Api(status)) => *status,
        other => panic!("expected a Status error, got {other:?}"),
    }
}
