//! kubectl against custom resources the server now checks: `kubectl apply` shows the
//! server's 422 causes, refuses unknown fields (kubectl asks for `fieldValidation=Strict`)
//! or prints the server's warning with `--validate=warn`, and reads defaults back.

use crate::{
    kube_sim_support::{install_gadget_crd, sim},
    kubectl_support::Kubectl,
};

const INVALID: &str = "apiVersion: sim.ferrvault.dev/v1
kind: Gadget
metadata: {name: broken, namespace: default}
spec: {url: 'ftp://nowhere', mode: sideways}
";

const UNKNOWN_FIELD: &str = "apiVersion: sim.ferrvault.dev/v1
kind: Gadget
metadata: {name: typo, namespace: default}
spec: {url: 'https://x', replica: 3}
";

#[tokio::test]
async fn kubectl_apply_should_show_the_servers_validation_errors() {
    let sim = sim().await;
    install_gadget_crd(&sim.client()).await;
    let kubectl = Kubectl::new(&sim);
    let file = kubectl.file("invalid.yaml", INVALID);
    let stderr = kubectl
        .fails(&["apply", "-f", file.to_str().expect("utf-8")])
        .await;
    assert!(stderr.contains(r#"The Gadget "broken" is invalid"#), "{stderr}");
    assert!(
        stderr
            .contains(r#"spec.mode: Unsupported value: "sideways": supported values: "ferrvault", "cloud""#),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            r#"spec.url: Invalid value: "ftp://nowhere": spec.url in body should match '^https?://'"#
        ),
        "{stderr}"
    );
}

#[tokio::test]
async fn kubectl_apply_should_refuse_unknown_fields_unless_told_to_warn() {
    let sim = sim().await;
    install_gadget_crd(&sim.client()).await;
    let kubectl = Kubectl::new(&sim);
    let file = kubectl.file("typo.yaml", UNKNOWN_FIELD);
    let path = file.to_str().expect("utf-8");
    let stderr = kubectl.fails(&["apply", "-f", path]).await;
    assert!(
        stderr.contains(
            r#"Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: unknown field "spec.replica""#
        ),
        "{stderr}"
    );
    let out = kubectl.run(&["apply", "--validate=warn", "-f", path]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(r#"Warning: unknown field "spec.replica""#),
        "{stderr}"
    );
    let spec = kubectl
        .ok(&["get", "gadget", "typo", "-o", "jsonpath={.spec}"])
        .await;
    assert_eq!(
        spec, r#"{"mode":"ferrvault","url":"https://x"}"#,
        "pruned and defaulted"
    );
}
