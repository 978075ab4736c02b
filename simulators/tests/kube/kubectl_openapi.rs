//! OpenAPI documents generated from the registered CRDs: `kubectl explain` reads the v3
//! document (and sees a CRD change), `kubectl apply` of a `kind: List` validates its items
//! against the v2 document.

use crate::{kube_sim_support::sim, kubectl_support::Kubectl};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use serde_json::Value;

/// A CRD whose schema has descriptions; `extra` adds a property to the spec.
fn sprocket_crd(extra: &str) -> String {
    format!(
        r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: sprockets.sim.ferrvault.dev}}
spec:
  group: sim.ferrvault.dev
  scope: Namespaced
  names: {{plural: sprockets, singular: sprocket, kind: Sprocket}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: A sprocket for the simulator's tests.
        properties:
          spec:
            type: object
            description: Desired state of a sprocket.
            required: [teeth]
            properties:
              teeth: {{type: integer, description: How many teeth the sprocket has.}}
              finish: {{type: string, description: Surface finish., enum: [matte, gloss]}}
              labels: {{type: object, additionalProperties: {{type: string}}}}
              {extra}
"#
    )
}

#[tokio::test]
async fn kubectl_explain_should_describe_a_crd_and_follow_its_changes() {
    let sim = sim().await;
    let k = Kubectl::new(&sim);
    let crd = k.file("crd.yaml", &sprocket_crd(""));
    k.ok(&["apply", "-f", crd.to_str().expect("utf-8")]).await;
    let spec = k.ok(&["explain", "sprocket.spec"]).await;
    for expected in [
        "KIND:       Sprocket",
        "VERSION:    v1",
        "FIELD: spec <Object>",
        "Desired state of a sprocket.",
        "teeth\t<integer> -required-",
        "How many teeth the sprocket has.",
        "finish\t<string>",
    ] {
        assert!(spec.contains(expected), "{expected:?} missing from:\n{spec}");
    }
    let name = k.ok(&["explain", "sprocket.metadata.name"]).await;
    assert!(name.contains("FIELD: name <string>"), "{name}");

    let changed = k.file(
        "crd2.yaml",
        &sprocket_crd("pitch: {type: number, description: Distance between teeth in mm.}"),
    );
    k.ok(&["apply", "-f", changed.to_str().expect("utf-8")]).await;
    let after = k.ok(&["explain", "sprocket.spec.pitch"]).await;
    assert!(after.contains("Distance between teeth in mm."), "{after}");
}

const LIST: &str = r#"
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: from-list}
  data: {mode: fast}
- apiVersion: sim.ferrvault.dev/v1
  kind: Sprocket
  metadata: {name: s1}
  spec: {teeth: 12, finish: matte}
"#;

#[tokio::test]
async fn kubectl_apply_of_a_list_should_validate_its_items_against_the_crd_schemas() {
    let sim = sim().await;
    let k = Kubectl::new(&sim);
    let crd = k.file("crd.yaml", &sprocket_crd(""));
    k.ok(&["apply", "-f", crd.to_str().expect("utf-8")]).await;

    let bad = k.file("bad.yaml", &LIST.replace("teeth: 12, ", "teeth: 12, wobble: 3, "));
    let err = k.fails(&["apply", "-f", bad.to_str().expect("utf-8")]).await;
    assert!(
        err.contains(r#"unknown field "wobble""#) && err.contains("dev.ferrvault.sim.v1.Sprocket"),
        "{err}"
    );
    let missing = k.file("missing.yaml", &LIST.replace("teeth: 12, ", ""));
    let err = k.fails(&["apply", "-f", missing.to_str().expect("utf-8")]).await;
    assert!(err.contains(r#"missing required field "teeth""#), "{err}");

    let good = k.file("list.yaml", LIST);
    let out = k.ok(&["apply", "-f", good.to_str().expect("utf-8")]).await;
    assert!(
        out.contains("configmap/from-list created") && out.contains("sprocket.sim.ferrvault.dev/s1 created"),
        "{out}"
    );
    let cm = Api::<ConfigMap>::namespaced(sim.client(), "default")
        .get("from-list")
        .await
        .expect("configmap");
    assert_eq!(cm.data.expect("data")["mode"], "fast");
}

#[tokio::test]
async fn openapi_v2_should_publish_each_crd_version_with_its_group_version_kind() {
    let sim = sim().await;
    let k = Kubectl::new(&sim);
    let crd = k.file("crd.yaml", &sprocket_crd(""));
    k.ok(&["apply", "-f", crd.to_str().expect("utf-8")]).await;
    let doc: Value = serde_json::from_str(&k.ok(&["get", "--raw", "/openapi/v2"]).await).expect("json");
    let def = &doc["definitions"]["dev.ferrvault.sim.v1.Sprocket"];
    assert_eq!(
        def["x-kubernetes-group-version-kind"][0],
        serde_json::json!({"group": "sim.ferrvault.dev", "kind": "Sprocket", "version": "v1"})
    );
    assert_eq!(
        def["properties"]["spec"]["required"],
        serde_json::json!(["teeth"])
    );
    assert_eq!(
        def["properties"]["metadata"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    let v3: Value = serde_json::from_str(
        &k.ok(&["get", "--raw", "/openapi/v3/apis/sim.ferrvault.dev/v1"])
            .await,
    )
    .expect("json");
    assert_eq!(
        v3["components"]["schemas"]["dev.ferrvault.sim.v1.Sprocket"]["properties"]["spec"]["properties"]["finish"]
            ["enum"],
        serde_json::json!(["matte", "gloss"]),
        "v3 keeps the whole schema"
    );
}
