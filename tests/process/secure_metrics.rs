//! `--metrics-secure`, end to end against the Kubernetes simulator: `/metrics` over HTTPS, each
//! scrape's bearer token reviewed (TokenReview) and its user authorized for `get` on `/metrics`
//! (SubjectAccessReview) from the RBAC objects the simulator stores, answers cached. Under abuse
//! (issue 34 point 5): an unknown path or method costs no review, a flood of made-up tokens from
//! one address gets 429s instead of reviews, and made-up tokens from many addresses cannot push
//! Prometheus's cached review out. The simulator's audit counts every review.

use std::{
    collections::BTreeMap,
    net::{IpAddr, Ipv4Addr, SocketAddr},
    time::{Duration, Instant},
};

use ferrvault_operator::secure_metrics::{REVIEW_BURST, REVIEWS_PER_SECOND, TOKEN_TTL};
use ferrvault_sim::kube::KubeSim;
use futures::{StreamExt, stream};
use k8s_openapi::api::{
    core::v1::{Namespace, ServiceAccount},
    rbac::v1::{ClusterRole, ClusterRoleBinding},
};
use kube::{Api, api::PostParams};
use serde_json::json;
use tempfile::TempDir;

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
    https_from(None)
}

/// [`https`] connecting from `source` (any 127.0.0.0/8 address is this machine's loopback), so
/// one test can be many clients to the per-address review limit.
fn https_from(source: Option<IpAddr>) -> reqwest::Client {
    // Installing twice is refused; the first install is the one every client uses.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .tls_danger_accept_invalid_certs(true)
        .local_address(source)
        .timeout(Duration::from_secs(15))
        .build()
        .expect("client")
}

/// The `n`th loopback address of a block of test clients (127.1.x.y), none of them 127.0.0.1.
fn loopback(n: u32) -> IpAddr {
    Ipv4Addr::from(0x7f01_0000 + n).into()
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
    // Only /metrics is served: another path is refused before any review.
    let (status, _) = scrape(&format!("https://{}/debug", at.metrics), Some(&allowed)).await;
    assert_eq!(status, 404, "the server serves /metrics only");

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

/// A cluster with the scrapers, and the operator serving secure metrics, ready.
struct Secured {
    sim: KubeSim,
    _dir: TempDir,
    _operator: Spawned,
    /// Prometheus's token (allowed `get` on `/metrics`).
    prometheus: String,
    /// Where `/metrics` is served.
    metrics: SocketAddr,
}

impl Secured {
    async fn start() -> Secured {
        let (sim, dir, kubeconfig) = cluster().await;
        let (prometheus, _) = scrapers(&sim).await;
        let mut operator = Spawned::start(run_command(&kubeconfig, &["--metrics-secure"]));
        let at = operator.addresses();
        wait_for_200(&format!("http://{}/readyz", at.probes), Duration::from_secs(30)).await;
        Secured {
            sim,
            _dir: dir,
            _operator: operator,
            prometheus,
            metrics: at.metrics,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.metrics)
    }

    fn token_reviews(&self) -> usize {
        reviews(&self.sim, "tokenreviews")
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_path_or_a_wrong_method_should_be_refused_without_any_review() {
    let secured = Secured::start().await;
    let client = https();
    for token in [secured.prometheus.as_str(), "made-up-token"] {
        for (method, path, expected) in [
            (reqwest::Method::GET, "/debug", 404),
            (reqwest::Method::GET, "/metrics/", 404),
            (reqwest::Method::GET, "/", 404),
            (reqwest::Method::POST, "/metrics", 405),
            (reqwest::Method::DELETE, "/anything", 405),
        ] {
            let response = client
                .request(method.clone(), secured.url(path))
                .bearer_auth(token)
                .send()
                .await
                .expect("answered");
            assert_eq!(response.status().as_u16(), expected, "{method} {path}");
        }
    }
    assert_eq!(
        (
            secured.token_reviews(),
            reviews(&secured.sim, "subjectaccessreviews")
        ),
        (0, 0),
        "no review for a request that could never be served"
    );
    // The same token on /metrics is reviewed: the count above is not blind.
    assert_eq!(
        scrape(&secured.url("/metrics"), Some(&secured.prometheus))
            .await
            .0,
        200
    );
    assert_eq!(secured.token_reviews(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_made_up_tokens_from_one_address_should_get_429s_instead_of_reviews() {
    const FLOOD: usize = 1_000;
    let secured = Secured::start().await;
    let (url, prometheus) = (secured.url("/metrics"), secured.prometheus.as_str());
    assert_eq!(scrape(&url, Some(prometheus)).await.0, 200);
    let before = secured.token_reviews();

    let attacker = https_from(Some(loopback(1)));
    let started = Instant::now();
    let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
    let mut retry_after = None;
    for i in 0..FLOOD {
        let response = attacker
            .get(&url)
            .bearer_auth(format!("made-up-token-{i}"))
            .send()
            .await
            .expect("answered");
        if response.status() == 429 {
            retry_after = response.headers().get("retry-after").cloned();
        }
        *statuses.entry(response.status().as_u16()).or_default() += 1;
    }
    let took = started.elapsed();
    let reviewed = secured.token_reviews() - before;
    // The burst, what the bucket earned meanwhile, and one for rounding.
    let budget = (REVIEW_BURST + took.as_secs_f64() * REVIEWS_PER_SECOND) as usize + 1;
    assert!(
        reviewed <= budget,
        "{reviewed} TokenReviews for {FLOOD} made-up tokens in {took:?} from one address (budget {budget}); answers {statuses:?}"
    );
    assert_eq!(
        statuses.get(&401),
        Some(&reviewed),
        "each reviewed one is 401: {statuses:?}"
    );
    assert_eq!(statuses.get(&429), Some(&(FLOOD - reviewed)), "{statuses:?}");
    assert!(
        retry_after.is_some_and(|after| after
            .to_str()
            .is_ok_and(|s| s.parse::<u64>().is_ok_and(|s| s >= 1))),
        "a 429 says when to come back"
    );

    // Prometheus, from its own address, is neither limited nor reviewed again.
    assert_eq!(scrape(&url, Some(prometheus)).await.0, 200);
    assert_eq!(
        secured.token_reviews() - before,
        reviewed,
        "Prometheus's review stays cached"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn made_up_tokens_from_many_addresses_should_not_push_out_prometheus_s_cached_review() {
    /// Addresses, each sending as many made-up tokens as its bucket allows at once: more
    /// made-up answers in all than a review cache holds.
    const ADDRESSES: u32 = 110;
    const PER_ADDRESS: usize = REVIEW_BURST as usize;
    let secured = Secured::start().await;
    let (url, prometheus) = (secured.url("/metrics"), secured.prometheus.as_str());
    let started = Instant::now();
    assert_eq!(scrape(&url, Some(prometheus)).await.0, 200);
    let before = secured.token_reviews();

    let answers: Vec<u16> = stream::iter(0..ADDRESSES)
        .map(|address| {
            let url = url.clone();
            async move {
                let client = https_from(Some(loopback(address)));
                let mut answers = Vec::new();
                for i in 0..PER_ADDRESS {
                    let response = client
                        .get(&url)
                        .bearer_auth(format!("made-up-token-{address}-{i}"))
                        .send()
                        .await
                        .expect("answered");
                    answers.push(response.status().as_u16());
                }
                answers
            }
        })
        .buffer_unordered(8)
        .flat_map(stream::iter)
        .collect()
        .await;
    let made_up = ADDRESSES as usize * PER_ADDRESS;
    assert!(
        answers.iter().all(|&status| status == 401),
        "every made-up token reviewed and refused"
    );
    assert_eq!(secured.token_reviews() - before, made_up);
    assert!(
        made_up > ferrvault_operator::secure_metrics::CACHE_ENTRIES,
        "enough to fill a cache shared by both answers"
    );

    assert_eq!(scrape(&url, Some(prometheus)).await.0, 200);
    let took = started.elapsed();
    assert!(
        took < TOKEN_TTL,
        "the flood took {took:?}: Prometheus's cached review expired on its own, the test proves nothing"
    );
    assert_eq!(
        secured.token_reviews() - before,
        made_up,
        "Prometheus's token was reviewed again: its cached review was pushed out"
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
