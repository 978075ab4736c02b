//! Issue 14, as a platform team migrating from the Go operator does it: keep the Go chart's
//! values, keep the Go Deployment's command line, re-apply Go-era manifests, keep the alerts and
//! the dashboard. Everything is taken from files of the Go world (`tests/chart/go_chart/`, from
//! docs/reference-go-operator.md §6) or rendered by helm, never from a list written here.

use std::{process::Command, time::Duration};

use ferrvault_sim::{ferrvault::FerrVaultSim, kube::KubeSim, testkit::poll_until};
use ferrvault_testkit::sample_world;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    migrating_md,
    operator_run::install_prerequisites,
    process_support::{Spawned, binary, free_port, get, wait_for_200},
    promql::{self, Series},
    strict_json::zap_log_lines,
    tools::{describe, run_tool},
    *,
};

/// The Go chart's values file, relative to the repository root.
pub const GO_VALUES: &str = "tests/chart/go_chart/values.yaml";
/// The Go chart's PrometheusRule rule groups.
const GO_RULES: &str = include_str!("go_chart/prometheusrule.yaml");
/// Go-era sample manifests.
const GO_SAMPLES: &str = include_str!("go_chart/samples.yaml");
/// The pod name the scrape is labelled with.
const POD: &str = "fv-ferrvault-operator-7d9c5b7f4-x2x8q";

/// The Go chart's `manager` args for its default values (reference §6.2), the ports bound to
/// free ones in the same `:PORT` form.
fn go_deployment_args(metrics_port: u16, probe_port: u16) -> Vec<String> {
    [
        format!("--metrics-bind-address=:{metrics_port}"),
        format!("--health-probe-bind-address=:{probe_port}"),
        "--default-refresh-interval=1h".into(),
        "--stall-threshold=15m".into(),
        "--reconcile-timeout=2m".into(),
        "--leader-elect".into(),
        "--leader-elect-id=ferrvault-operator.ferrvault.com".into(),
        "--zap-log-level=info".into(),
    ]
    .into()
}

#[test]
fn the_go_charts_values_should_install_our_chart_with_each_key_reaching_its_setting() {
    let rendering = Rendering::with_values_file(GO_VALUES, &[]);
    let launch = ContainerLaunch::from_deployment(
        &deployment(&rendering),
        &launch::PodIdentity {
            name: POD.into(),
            namespace: NAMESPACE.into(),
        },
    )
    .expect("launch");
    for (name, value) in [
        ("metrics-bind-address", Some(":8080")),
        ("health-probe-bind-address", Some(":8081")),
        ("leader-elect", None),
        ("leader-elect-id", Some("ferrvault-operator.ferrvault.com")),
        ("default-refresh-interval", Some("1h")),
        ("stall-threshold", Some("15m")),
        ("reconcile-timeout", Some("2m")),
        ("log-level", Some("info")),
    ] {
        assert_eq!(
            launch.flag(name),
            Some(value.map(str::to_owned)),
            "--{name}: {:?}",
            launch.argv
        );
    }
    assert_eq!(rendering.of_kind("CustomResourceDefinition").len(), 4);
    assert_eq!(rendering.of_kind("PrometheusRule").len(), 1);
    let container = manager(&deployment(&rendering));
    assert_eq!(
        container.image.as_deref(),
        Some(format!("ghcr.io/ferrlabs/ferrvault-operator:{}", chart_app_version()).as_str()),
        "the Go chart's image repository"
    );
    // The Go chart's zap verbosities and levels are accepted as logLevel too.
    for level in ["2", "panic", "debug"] {
        Rendering::with_values_file(GO_VALUES, &[&format!("logLevel={level}")]);
    }
}

fn chart_app_version() -> String {
    let chart: Value = serde_norway::from_str(
        &std::fs::read_to_string(tools::repo_root().join(render::CHART).join("Chart.yaml"))
            .expect("Chart.yaml"),
    )
    .expect("Chart.yaml parses");
    chart["appVersion"].as_str().expect("appVersion").to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_go_operator_deployment_should_start_sync_go_manifests_and_satisfy_both_charts_alerts_and_dashboard()
 {
    let rendering = Rendering::with_values_file(GO_VALUES, &["metrics.grafanaDashboard.enabled=true"]);
    let kube = KubeSim::start().await.expect("the Kubernetes simulator starts");
    install_prerequisites(&kube, &rendering).await;
    let mut manifests: Vec<Value> = serde_norway::Deserializer::from_str(GO_SAMPLES)
        .map(|document| Value::deserialize(document).expect("a sample"))
        .collect();
    let ferrvault = FerrVaultSim::start(sample_world::ferrvault_config(&manifests))
        .await
        .expect("the FerrVault simulator starts");
    sample_world::point_connections_at(&mut manifests, &ferrvault.url());
    sample_world::apply_samples(&kube.client(), &manifests)
        .await
        .expect("the CRDs admit the Go-era manifests");
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    kube.write_kubeconfig(&kubeconfig).expect("kubeconfig");

    let (metrics_port, probe_port) = (free_port(), free_port());
    let mut command = Command::new(binary());
    // The image's entrypoint is `ferrvault-operator run`; the Go Deployment's args follow. The
    // FerrVault simulator speaks plain http on loopback, which a real FerrVault does not: only
    // that needs the opt-ins, which a migrating user never passes.
    command
        .arg("run")
        .args(go_deployment_args(metrics_port, probe_port))
        .arg("--allow-insecure-http")
        .arg("--ferrvault-allowed-cidrs=127.0.0.1/32")
        .arg(format!("--kubeconfig={}", kubeconfig.display()));
    let mut operator = Spawned::start(command);
    wait_for_200(
        &format!("http://127.0.0.1:{probe_port}/readyz"),
        Duration::from_secs(30),
    )
    .await;
    let secrets = all_synced(&kube, &operator).await;
    assert_eq!(secrets, 2, "both Go-era FerrVaultSecrets synced");

    let (status, scrape) = get(&format!("http://127.0.0.1:{metrics_port}/metrics")).await;
    assert_eq!(status, 200);
    let service = rendering
        .of_kind("Service")
        .first()
        .and_then(|s| s["metadata"]["name"].as_str().map(str::to_owned))
        .expect("the metrics Service");
    let instance = format!("10.0.0.7:{metrics_port}");
    let series = promql::scraped(
        &scrape,
        &[
            ("job", &service),
            ("namespace", NAMESPACE),
            ("service", &service),
            ("pod", POD),
            ("container", "manager"),
            ("endpoint", "metrics"),
            ("instance", &instance),
        ],
    );
    controller_runtime_series_should_be_there(&series, &kube);
    migrating_md::metrics_should_be_scraped(&series);

    let ours = rule_groups(&Rendering::with_values_file(GO_VALUES, &[]));
    let ours_replicated = rule_groups(&Rendering::with_values_file(GO_VALUES, &["replicaCount=3"]));
    let go: Value = serde_norway::from_str(GO_RULES).expect("the Go rule file");
    let mut queries: Vec<String> = [&ours_replicated, &go]
        .iter()
        .flat_map(|groups| exprs(groups))
        .collect();
    queries.extend(dashboard_queries(&rendering));
    let mut problems = Vec::new();
    for query in &queries {
        for selector in promql::selectors(query) {
            problems.extend(promql::unmatched(&selector, &series));
        }
    }
    assert!(
        problems.is_empty(),
        "alert and dashboard queries the operator's scrape cannot answer:\n{}",
        problems.join("\n")
    );
    alerts_should_evaluate_and_stay_silent(&[ours, go], &series);

    operator.sigterm();
    let exit = operator.wait_exit(Duration::from_secs(30));
    assert_eq!(exit.code(), Some(0), "{}", operator.output());
    let lines = zap_log_lines(&operator.output()).unwrap_or_else(|why| panic!("{why}"));
    assert!(
        lines.iter().any(|line| {
            line.get("msg") == Some(&json!("synced secret"))
                && ["controller", "namespace", "name", "reconcileID"]
                    .iter()
                    .all(|key| line.contains_key(*key))
        }),
        "a sync is logged with controller-runtime's reconcile keys"
    );
}

/// Waits until every FerrVaultSecret is Ready=True; returns how many there are.
async fn all_synced(kube: &KubeSim, operator: &Spawned) -> usize {
    let api: kube::Api<ferrvault_operator::api::FerrVaultSecret> =
        kube::Api::namespaced(kube.client(), sample_world::NAMESPACE);
    poll_until(
        "all Go-era FerrVaultSecrets synced",
        Duration::from_secs(60),
        || async {
            let items = api.list(&Default::default()).await.expect("list").items;
            let ready = items.iter().all(|fvs| {
                fvs.status
                    .as_ref()
                    .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Ready"))
                    .is_some_and(|c| c.status == "True")
            });
            if ready && !items.is_empty() {
                Ok(items.len())
            } else {
                Err(format!(
                    "{:?}\n{}",
                    items.iter().map(|i| &i.status).collect::<Vec<_>>(),
                    operator.output()
                ))
            }
        },
    )
    .await
}

/// What a series must show.
#[derive(Debug, Clone, Copy)]
enum Expect {
    Present,
    Zero,
    Positive,
}

/// controller-runtime's and client-go's families, with their labels and zero-initialised series.
fn controller_runtime_series_should_be_there(series: &[Series], kube: &KubeSim) {
    let host = kube
        .url()
        .trim_start_matches("http://")
        .trim_start_matches("https://")
        .trim_end_matches('/')
        .to_owned();
    let reconciles = |controller: &str, result: &str| {
        format!(r#"controller_runtime_reconcile_total{{controller="{controller}",result="{result}"}}"#)
    };
    let expectations = [
        // A sync or probe with a timed refresh is `requeue_after`, as a Go reconciler returning
        // RequeueAfter; nothing in this healthy run ends without one.
        (reconciles("ferrvaultsecret", "requeue_after"), Expect::Positive),
        (
            reconciles("ferrvaultconnection", "requeue_after"),
            Expect::Positive,
        ),
        (reconciles("ferrvaultsecret", "success"), Expect::Zero),
        (reconciles("ferrvaultconnection", "success"), Expect::Zero),
        (
            r#"controller_runtime_reconcile_total{controller="ferrvaultconnection",result="requeue"}"#
                .to_owned(),
            Expect::Zero,
        ),
        (
            r#"controller_runtime_reconcile_panics_total{controller="ferrvaultsecret"}"#.to_owned(),
            Expect::Zero,
        ),
        (
            r#"controller_runtime_terminal_reconcile_errors_total{controller="ferrvaultconnection"}"#
                .to_owned(),
            Expect::Zero,
        ),
        (
            r#"workqueue_adds_total{controller="ferrvaultsecret",name="ferrvaultsecret"}"#.to_owned(),
            Expect::Positive,
        ),
        (
            r#"workqueue_depth{controller="ferrvaultconnection",name="ferrvaultconnection"}"#.to_owned(),
            Expect::Present,
        ),
        (
            format!(r#"rest_client_requests_total{{code="200",method="GET",host="{host}"}}"#),
            Expect::Positive,
        ),
        (
            format!(r#"rest_client_request_duration_seconds_count{{verb="PATCH",host="{host}"}}"#),
            Expect::Positive,
        ),
        ("process_cpu_seconds_total".to_owned(), Expect::Present),
        ("process_resident_memory_bytes".to_owned(), Expect::Positive),
        ("process_start_time_seconds".to_owned(), Expect::Positive),
        ("process_open_fds".to_owned(), Expect::Positive),
        ("process_max_fds".to_owned(), Expect::Positive),
        ("process_virtual_memory_bytes".to_owned(), Expect::Positive),
    ];
    for (query, expect) in &expectations {
        let selector = &promql::selectors(query)[0];
        let values: Vec<f64> = series
            .iter()
            .filter(|s| s.matches(&selector.matchers))
            .map(|s| s.value)
            .collect();
        let holds = match expect {
            Expect::Present => !values.is_empty(),
            Expect::Zero => values.contains(&0.0),
            Expect::Positive => values.iter().any(|v| *v > 0.0),
        };
        assert!(holds, "{query} should be {expect:?}: {values:?}");
    }
}

/// The rendered PrometheusRule's `spec` (its rule groups).
fn rule_groups(rendering: &Rendering) -> Value {
    let rules = rendering.of_kind("PrometheusRule");
    assert_eq!(rules.len(), 1, "one PrometheusRule");
    rules[0]["spec"].clone()
}

fn exprs(groups: &Value) -> Vec<String> {
    groups["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|group| group["rules"].as_array().cloned().unwrap_or_default())
        .filter_map(|rule| rule["expr"].as_str().map(str::to_owned))
        .collect()
}

/// Every panel query of the rendered dashboard, Grafana's variables replaced by what they expand
/// to with "All" selected.
fn dashboard_queries(rendering: &Rendering) -> Vec<String> {
    let json = rendering.of_kind("ConfigMap")[0]["data"]["ferrvault-operator.json"]
        .as_str()
        .expect("dashboard JSON");
    let dashboard: Value = serde_json::from_str(json).expect("dashboard parses");
    dashboard["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .flat_map(|panel| panel["targets"].as_array().cloned().unwrap_or_default())
        .filter_map(|target| target["expr"].as_str().map(str::to_owned))
        .map(|expr| expr.replace("$__rate_interval", "5m").replace("$job", ".+"))
        .collect()
}

/// Both charts' alerts, evaluated by `promtool test rules` over 30 minutes of the scraped series:
/// every expression evaluates (no parse or matching error) and none fires for a healthy, synced
/// operator.
fn alerts_should_evaluate_and_stay_silent(rule_files: &[Value], series: &[Series]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut files = Vec::new();
    let mut alerts = Vec::new();
    for (index, groups) in rule_files.iter().enumerate() {
        let name = format!("rules-{index}.yaml");
        std::fs::write(
            dir.path().join(&name),
            serde_norway::to_string(groups).expect("yaml"),
        )
        .expect("write rules");
        files.push(name);
        alerts.extend(
            groups["groups"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|group| group["rules"].as_array().cloned().unwrap_or_default())
                .filter_map(|rule| rule["alert"].as_str().map(str::to_owned)),
        );
    }
    let input: Vec<Value> = series
        .iter()
        .filter(|s| s.value.is_finite())
        .map(|s| json!({"series": s.promtool_selector(), "values": format!("{}x30", s.value)}))
        .collect();
    let checks: Vec<Value> = alerts
        .iter()
        .flat_map(|alert| {
            [5, 30].map(
                |minutes| json!({"eval_time": format!("{minutes}m"), "alertname": alert, "exp_alerts": []}),
            )
        })
        .collect();
    let cases = json!({
        "rule_files": files,
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": input, "alert_rule_test": checks}],
    });
    let path = dir.path().join("cases.yaml");
    std::fs::write(&path, serde_norway::to_string(&cases).expect("yaml")).expect("write cases");
    let output = run_tool(
        "promtool",
        &["test", "rules", path.to_str().expect("utf-8 path")],
        None,
    );
    assert!(
        output.status.success(),
        "both charts' alerts against the scrape ({} alerts):\n{}",
        alerts.len(),
        describe(&output)
    );
}
