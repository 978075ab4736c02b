//! The opt-in change-hint endpoint in the chart (`hints.*`, docs/change-hints.md): its flags,
//! container and Service port, the Role rule reading its key Secret, and the NetworkPolicy
//! rule admitting its port; none of them without `hints.enabled`.

use serde_json::json;

use crate::*;

const HINTS_ON: &[&str] = &["hints.enabled=true"];

#[test]
fn hints_on_should_lint_and_validate_on_kubernetes_1_33_and_1_35() {
    assert_lints_and_validates(&[HINTS_ON, NETWORK_POLICY_ON].concat());
}

#[test]
fn the_hint_endpoint_should_get_its_flags_ports_key_rule_and_network_policy_rule_only_when_enabled() {
    let sets = [
        HINTS_ON,
        NETWORK_POLICY_ON,
        &[
            "hints.port=9443",
            "hints.secretName=ci-hint-key",
            "networkPolicy.ingress.hints.from[0].namespaceSelector.matchLabels.name=ci",
        ],
    ]
    .concat();
    let rendering = Rendering::new(&sets);
    let args = manager(&deployment(&rendering)).args.unwrap_or_default();
    assert!(args.contains(&"--hint-bind-address=:9443".to_owned()), "{args:?}");
    assert!(
        args.contains(&"--hint-secret-name=ci-hint-key".to_owned()),
        "{args:?}"
    );
    let ports = manager(&deployment(&rendering)).ports.unwrap_or_default();
    assert!(
        ports
            .iter()
            .any(|p| p.name.as_deref() == Some("hints") && p.container_port == 9443),
        "{ports:?}"
    );
    let service = rendering
        .of_kind("Service")
        .into_iter()
        .find(|s| {
            s["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.ends_with("-hints"))
        })
        .expect("a hints Service");
    assert_eq!(
        service["spec"]["ports"],
        json!([{"name": "hints", "port": 9443, "targetPort": "hints", "protocol": "TCP"}])
    );
    let key_rule = rendering
        .of_kind("Role")
        .into_iter()
        .flat_map(|role| role["rules"].as_array().cloned().unwrap_or_default())
        .find(|rule| rule["resourceNames"] == json!(["ci-hint-key"]))
        .expect("a rule reading the key Secret");
    assert_eq!(key_rule["verbs"], json!(["get"]));
    let policy = &rendering.of_kind("NetworkPolicy")[0];
    let hints_rule = policy["spec"]["ingress"]
        .as_array()
        .expect("ingress rules")
        .iter()
        .find(|rule| rule["ports"][0]["port"] == json!(9443))
        .expect("an ingress rule for the hint port");
    assert_eq!(
        hints_rule["from"],
        json!([{"namespaceSelector": {"matchLabels": {"name": "ci"}}}])
    );

    let off = Rendering::new(NETWORK_POLICY_ON);
    let args = manager(&deployment(&off)).args.unwrap_or_default();
    assert!(!args.iter().any(|a| a.starts_with("--hint-")), "{args:?}");
    assert!(
        !off.yaml.contains("hint"),
        "nothing of the endpoint without hints.enabled"
    );
}
