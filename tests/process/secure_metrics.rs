//! `--metrics-secure`, end to end against the Kubernetes simulator: `/metrics` over HTTPS, each
//! scrape's bearer token reviewed (TokenReview) and its user authorized for `get` on `/metrics`
//! (SubjectAccessReview) from the RBAC objects the simulator stores, answers cached.

use std::time::Duration;

use ferrvault_sim::kube::KubeSim;
use k8s_openapi::api::{
    core::v1::{Namespace, ServiceAccount},
    rbac::v1::{ClusterRole, ClusterRoleBinding},
};
use kube::{Api, api::PostParams};
use serde_json::json;

use crate::{
    process_support::{Spawned, wait_for_200},
    run::{cluster, run_command},
};

const MONITORING: &str = "monitoring";

/// ServiceAccounts `monitoring/prometheus`, bound to a metrics-reader ClusterRole (the chart's
/// rule), and `monitoring/nosy`, bound to nothing; returns their tokens.
async fn scrapers(sim: &KubeSim) -> (String, String) {
    let client = sim.client();
    let create = PostParams::default();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &create,
            &serde_json::from_value(json!({"metadata": {"name": MONITORING}})).expect("namespace"),
        )
        .await
        .expect("namespace created");
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), MONITORING);
    for name in ["prometheus", "nosy"] {
        accounts
            .create(
                &create,
                &serde_json::from_value(json!({"metadata": {"name": name}})).expect("account"),
            )
            .await
            .expect("ServiceAccount created");
    }
    let roles: Api<ClusterRole> = Api::all(client.clone());
    let reader = json!({
        "metadata": {"name": "metrics-reader"},
        "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    });
    roles
        .create(&create, &serde_json::from_value(reader).expect("role"))
        .await
        .expect("ClusterRole created");
    let bindings: Api<ClusterRoleBinding> = Api::all(client);
    let binding = json!({
        "metadata": {"name": "prometheus-metrics-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "metrics-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "prometheus", "namespace": MONITORING}]
    });
    bindings
        .create(&create, &serde_json::from_value(binding).expect("binding"))
        .await
        .expect("ClusterRoleBinding created");
    (
        sim.register_identity("system:serviceaccount:monitoring:prometheus"),
        sim.register_identity("system:serviceaccount:monitoring:nosy"),
    )
}

/// An HTTPS client that accepts the self-signed certificate, as the chart's ServiceMonitor does
/// by default (`insecureSkipVerify`).
fn https() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .tls_danger_accept_invalid_certs(true)
        .timeout(Duration::from_secs(15))
        .build()
        .expect("client")
}

async fn scrape(url: &str, token: Option<&str>) -> (u16, String) {
    let mut request = https().get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request
        .send()
        .await
        .unwrap_or_else(|error| panic!("{url}: {error}"));
    (response.status().as_u16(), response.text().await.expect("body"))
}

fn reviews(sim: &KubeSim, resource: &str) -> usize {
    sim.audit()
        .iter()
        .filter(|e| e.resource == resource && e.verb == "create")
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn secure_metrics_should_answer_401_without_a_valid_token_403_without_the_rule_and_200_with_it() {
    let (sim, _dir, kubeconfig) = cluster().await;
    let (allowed, denied) = scrapers(&sim).await;
    let mut operator = Spawned::start(run_command(&kubeconfig, &["--metrics-secure"]));
    let at = operator.addresses();
    wait_for_200(&format!("http://{}/readyz", at.probes), Duration::from_secs(30)).await;
    let url = format!("https://{}/metrics", at.metrics);

    let (status, body) = scrape(&url, None).await;
    assert_eq!((status, body.as_str()), (401, "Unauthorized\n"), "no token");
    let (status, _) = scrape(&url, Some("made-up-token")).await;
    assert_eq!(status, 401, "a token the API server does not know");
    let (status, body) = scrape(&url, Some(&denied)).await;
    assert_eq!(
        (status, body.as_str()),
        (
            403,
            "Authorization denied for user system:serviceaccount:monitoring:nosy\n"
        ),
        "a ServiceAccount without the rule"
    );
    let (status, body) = scrape(&url, Some(&allowed)).await;
    assert_eq!(status, 200, "a ServiceAccount with the rule: {body}");
    assert!(body.contains("workqueue_depth"), "{body}");
    // Only the path the rule names.
    let (status, _) = scrape(&format!("https://{}/debug", at.metrics), Some(&allowed)).await;
    assert_eq!(status, 403, "the rule grants /metrics only");

    // Answers are cached: the same token again costs no review.
    let (token_reviews, access_reviews) = (
        reviews(&sim, "tokenreviews"),
        reviews(&sim, "subjectaccessreviews"),
    );
    assert!(
        token_reviews >= 3 && access_reviews >= 2,
        "{token_reviews} {access_reviews}"
    );
    for _ in 0..3 {
        assert_eq!(scrape(&url, Some(&allowed)).await.0, 200);
        assert_eq!(scrape(&url, Some(&denied)).await.0, 403);
    }
    assert_eq!(
        reviews(&sim, "tokenreviews"),
        token_reviews,
        "token reviews cached"
    );
    assert_eq!(
        reviews(&sim, "subjectaccessreviews"),
        access_reviews,
        "decisions cached"
    );

    // Plain HTTP gets nothing from the TLS port.
    let plain = reqwest::Client::new()
        .get(format!("http://{}/metrics", at.metrics))
        .send()
        .await;
    assert!(
        plain.map(|r| r.status().as_u16()).unwrap_or(0) != 200,
        "no plain-HTTP scrape"
    );
    assert!(
        !operator.output().contains(&allowed) && !operator.output().contains(&denied),
        "a token in the logs"
    );
    operator.sigterm();
    assert_eq!(
        operator.wait_exit(Duration::from_secs(15)).code(),
        Some(0),
        "{}",
        operator.output()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn secure_metrics_should_serve_the_mounted_certificate_to_a_client_that_verifies_it() {
    let (sim, dir, kubeconfig) = cluster().await;
    let (allowed, _) = scrapers(&sim).await;
    let ca = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).expect("certificate");
    std::fs::write(dir.path().join("tls.crt"), ca.cert.pem()).expect("write");
    std::fs::write(dir.path().join("tls.key"), ca.signing_key.serialize_pem()).expect("write");
    let cert_path = format!("--metrics-cert-path={}", dir.path().display());
    let mut operator = Spawned::start(run_command(&kubeconfig, &["--metrics-secure=true", &cert_path]));
    let at = operator.addresses();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let verifying = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(ca.cert.pem().as_bytes()).expect("pem")])
        .build()
        .expect("client");
    let response = verifying
        .get(format!("https://localhost:{}/metrics", at.metrics.port()))
        .bearer_auth(&allowed)
        .send()
        .await
        .expect("the mounted certificate verifies");
    assert_eq!(response.status(), 200);
    operator.sigterm();
    assert_eq!(
        operator.wait_exit(Duration::from_secs(15)).code(),
        Some(0),
        "{}",
        operator.output()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unusable_certificate_should_fail_startup_with_exit_code_1_naming_the_file() {
    let (_sim, dir, kubeconfig) = cluster().await;
    std::fs::write(dir.path().join("tls.crt"), "not a certificate").expect("write");
    std::fs::write(dir.path().join("tls.key"), "not a key").expect("write");
    let cert_path = format!("--metrics-cert-path={}", dir.path().display());
    let mut operator = Spawned::start(run_command(&kubeconfig, &["--metrics-secure", &cert_path]));
    let status = operator.wait_exit(Duration::from_secs(15));
    let output = operator.output();
    assert_eq!(status.code(), Some(1), "{output}");
    assert!(output.contains("tls.crt"), "the error names the file:\n{output}");
}
