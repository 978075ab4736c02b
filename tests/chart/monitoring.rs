//! ServiceMonitor, PrometheusRule (checked and unit-tested with `promtool`) and the Grafana dashboard.

use crate::*;

/// Metric names the panel queries of a dashboard JSON select, read by a PromQL parser.
fn dashboard_metrics(json: &str) -> Vec<String> {
    let dashboard: Value = serde_json::from_str(json).expect("the dashboard is valid JSON");
    let mut names: Vec<String> = dashboard["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .flat_map(|panel| panel["targets"].as_array().cloned().unwrap_or_default())
        .filter_map(|target| target["expr"].as_str().map(str::to_owned))
        .flat_map(|expr| promql::selectors(&expr.replace("$__rate_interval", "5m").replace("$job", ".+")))
        .flat_map(|selector| selector.matchers.into_iter().filter(|m| m.name == "__name__"))
        .map(|matcher| matcher.value)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The PrometheusRule's rule groups (its `spec`) as a Prometheus rule file.
fn rule_file(sets: &[&str]) -> String {
    let rendering = Rendering::new(sets);
    let rule = rendering.of_kind("PrometheusRule");
    assert_eq!(rule.len(), 1, "one PrometheusRule expected");
    serde_norway::to_string(&rule[0]["spec"]).expect("rule groups serialise")
}

fn alerts(rule_file: &str) -> Vec<(String, String)> {
    let groups: Value = serde_norway::from_str(rule_file).expect("rule file");
    groups["groups"][0]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|rule| {
            (
                rule["alert"].as_str().unwrap_or_default().to_owned(),
                rule["expr"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn monitoring_on_should_render_a_service_monitor_rule_and_sidecar_dashboard() {
    let rendering = Rendering::new(MONITORING_ON);
    let monitor = &rendering.of_kind("ServiceMonitor")[0];
    assert_eq!(monitor["spec"]["endpoints"][0]["port"], "metrics");
    assert_eq!(monitor["spec"]["namespaceSelector"]["matchNames"][0], NAMESPACE);
    let service = &rendering.of_kind("Service")[0];
    assert_eq!(
        monitor["spec"]["selector"]["matchLabels"], service["spec"]["selector"],
        "the monitor selects the Service"
    );
    let names: Vec<String> = alerts(&rule_file(MONITORING_ON))
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(
        names,
        [
            "FerrVaultOperatorReconcileStuck",
            "FerrVaultOperatorReconcileTimeouts",
            "FerrVaultSecretStale",
            "FerrVaultRolloutRestartFailing",
            "FerrVaultCredentialThrottled",
            "FerrVaultTokenExpiresSoon",
            "FerrVaultChangesSlow",
        ],
        "one replica: no standby alert"
    );
    let dashboard = &rendering.of_kind("ConfigMap")[0];
    assert_eq!(
        dashboard["metadata"]["labels"]["grafana_dashboard"], "1",
        "the Grafana sidecar's label"
    );
    let json = dashboard["data"]["ferrvault-operator.json"]
        .as_str()
        .expect("dashboard JSON");
    let parsed: Value = serde_json::from_str(json).expect("the dashboard is valid JSON");
    assert!(
        parsed["panels"]
            .as_array()
            .is_some_and(|panels| panels.len() >= 8),
        "panels: {}",
        parsed["panels"]
    );
    let used = dashboard_metrics(json);
    for needed in [
        "ferrvault_secret_sync_duration_seconds_count",
        "ferrvault_secret_sync_errors_total",
        "ferrvault_client_rate_limited_total",
        "workqueue_depth",
        "ferrvault_client_limiter_rate",
        "ferrvault_client_limiter_waiters",
        "leader_election_master_status",
        "ferrvault_connection_token_expiry_timestamp_seconds",
        "ferrvault_change_to_sync_seconds_bucket",
    ] {
        assert!(
            used.iter().any(|metric| metric == needed),
            "the dashboard does not show {needed}: {used:?}"
        );
    }
}

#[test]
fn more_than_one_replica_should_add_the_no_standby_alert() {
    let alerts = alerts(&rule_file(&[MONITORING_ON, THREE_REPLICAS].concat()));
    let (_, expr) = alerts
        .iter()
        .find(|(name, _)| name == "FerrVaultOperatorNoStandby")
        .expect("no standby alert");
    assert!(expr.contains(&format!("namespace=\"{NAMESPACE}\"")), "{expr}");
    assert!(
        expr.contains("name=\"ferrvault-operator.ferrvault.com\""),
        "{expr}"
    );
}

#[test]
fn shards_should_drop_the_no_standby_alert_every_shard_holder_leads() {
    let alerts = alerts(&rule_file(
        &[MONITORING_ON, THREE_REPLICAS, &["shards=6"]].concat(),
    ));
    assert!(
        !alerts
            .iter()
            .any(|(name, _)| name == "FerrVaultOperatorNoStandby"),
        "{alerts:?}"
    );
}

#[test]
fn the_stuck_alert_should_use_the_configured_threshold_on_the_controller_label() {
    let alerts = alerts(&rule_file(
        &[MONITORING_ON, &["metrics.prometheusRule.stuckAfterSeconds=451"]].concat(),
    ));
    let (_, expr) = alerts
        .iter()
        .find(|(name, _)| name == "FerrVaultOperatorReconcileStuck")
        .expect("stuck alert");
    assert!(expr.trim_end().ends_with("> 451"), "{expr}");
    assert!(
        expr.contains("{controller=~\"ferrvaultsecret|ferrvaultconnection\"}"),
        "the Go chart's selector (controller-runtime labels workqueue metrics by controller): {expr}"
    );
}

#[test]
fn a_stuck_threshold_not_above_the_reconcile_timeout_should_fail_rendering() {
    for (sets, fragment) in [
        (
            vec!["metrics.prometheusRule.stuckAfterSeconds=120"],
            "must exceed reconcileTimeout",
        ),
        (vec!["reconcileTimeout=6m"], "must exceed reconcileTimeout"),
        (
            vec![
                "reconcileTimeout=1h",
                "metrics.prometheusRule.stuckAfterSeconds=3599",
            ],
            "must exceed reconcileTimeout",
        ),
    ] {
        let sets = [MONITORING_ON, sets.as_slice()].concat();
        let error = helm_template(&sets, "1.35.0").expect_err("rendering must fail");
        assert!(error.contains(fragment), "{sets:?}: {error}");
    }
    // Just above the timeout renders; the guard is only about the rule, so it is off without it.
    assert!(
        helm_template(
            &[
                MONITORING_ON,
                &[
                    "reconcileTimeout=5m",
                    "metrics.prometheusRule.stuckAfterSeconds=301"
                ]
            ]
            .concat(),
            "1.35.0"
        )
        .is_ok()
    );
    assert!(helm_template(&["reconcileTimeout=10m"], "1.35.0").is_ok());
}

#[test]
fn prometheus_rules_should_pass_promtool_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("rules.yaml");
    std::fs::write(&path, rule_file(&[MONITORING_ON, THREE_REPLICAS].concat())).expect("write rules");
    let output = tools::run_tool(
        "promtool",
        &["check", "rules", path.to_str().expect("utf-8 path")],
        None,
    );
    assert!(output.status.success(), "{}", tools::describe(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("8 rules found"),
        "{}",
        tools::describe(&output)
    );
}

/// `promtool test rules` cases for the rendered alerts (3 replicas, defaults otherwise): each alert
/// stays silent before its condition has held long enough and fires with the expected labels and text.
const ALERT_CASES: &str = r#"
rule_files: [rules.yaml]
evaluation_interval: 1m
tests:
  # Synced at t=0 with a 60s interval: stale after 2*60+300 = 420s, alert after 5m more (12m).
  # The same secret with refresh disabled (interval 0) is never stale.
  - interval: 1m
    input_series:
      - series: 'ferrvault_secret_last_sync_timestamp_seconds{exported_namespace="apps",name="db",namespace="ferrvault-system"}'
        values: '0x30'
      - series: 'ferrvault_secret_refresh_interval_seconds{exported_namespace="apps",name="db",namespace="ferrvault-system"}'
        values: '60x30'
      - series: 'ferrvault_secret_last_sync_timestamp_seconds{exported_namespace="apps",name="manual",namespace="ferrvault-system"}'
        values: '0x30'
      - series: 'ferrvault_secret_refresh_interval_seconds{exported_namespace="apps",name="manual",namespace="ferrvault-system"}'
        values: '0x30'
    alert_rule_test:
      - eval_time: 11m
        alertname: FerrVaultSecretStale
      - eval_time: 13m
        alertname: FerrVaultSecretStale
        exp_alerts:
          - exp_labels: {severity: warning, exported_namespace: apps, name: db, namespace: ferrvault-system}
            exp_annotations:
              summary: "FerrVaultSecret apps/db last synced 13m 0s ago"
              description: "The last full sync is older than twice the refresh interval plus 5 minutes. Check the FerrVaultSecret's Ready condition with kubectl describe."
  # A reconcile running since t=0 passes 300s at 6m, alert after 1m more; other queues are ignored.
  - interval: 1m
    input_series:
      - series: 'workqueue_longest_running_processor_seconds{controller="ferrvaultsecret",name="ferrvaultsecret",namespace="ferrvault-system"}'
        values: '0+60x20'
      - series: 'workqueue_longest_running_processor_seconds{controller="other",name="other",namespace="ferrvault-system"}'
        values: '0+60x20'
    alert_rule_test:
      - eval_time: 6m
        alertname: FerrVaultOperatorReconcileStuck
      - eval_time: 8m
        alertname: FerrVaultOperatorReconcileStuck
        exp_alerts:
          - exp_labels: {severity: critical, controller: ferrvaultsecret, namespace: ferrvault-system}
            exp_annotations:
              summary: "A ferrvaultsecret reconcile in ferrvault-system has not returned in 8m 0s"
              description: "A reconcile has run past --reconcile-timeout (2m) and the worker could not be replaced: a call is ignoring its deadline. Look at /debug/queue on the admin endpoint and the operator logs."
  # Three replicas configured; the only standby (b) vanishes after 9m: no standby from ~14m, alert 10m later.
  - interval: 1m
    input_series:
      - series: 'leader_election_master_status{name="ferrvault-operator.ferrvault.com",namespace="ferrvault-system",pod="a"}'
        values: '1x40'
      - series: 'leader_election_master_status{name="ferrvault-operator.ferrvault.com",namespace="ferrvault-system",pod="b"}'
        values: '0x9'
    alert_rule_test:
      - eval_time: 9m
        alertname: FerrVaultOperatorNoStandby
      - eval_time: 30m
        alertname: FerrVaultOperatorNoStandby
        exp_alerts:
          - exp_labels: {severity: warning, name: ferrvault-operator.ferrvault.com, namespace: ferrvault-system}
            exp_annotations:
              summary: "No standby ferrvault-operator replica for lease ferrvault-operator.ferrvault.com in ferrvault-system"
              description: "3 replicas are configured but none is waiting as a standby, so losing the leader stops secret syncing until a new pod starts."
  # fp-1 gets 429s throughout; fp-2 only during the first 5 minutes, which is not sustained.
  - interval: 1m
    input_series:
      - series: 'ferrvault_client_rate_limited_total{credential="fp-1",namespace="ferrvault-system"}'
        values: '0+3x40'
      - series: 'ferrvault_client_rate_limited_total{credential="fp-2",namespace="ferrvault-system"}'
        values: '0+3x5 15x35'
    alert_rule_test:
      - eval_time: 30m
        alertname: FerrVaultCredentialThrottled
        exp_alerts:
          - exp_labels: {severity: warning, credential: fp-1, namespace: ferrvault-system}
            exp_annotations:
              summary: "FerrVault keeps answering 429 to credential fp-1"
              description: "The operator paces each credential below the server budget, so sustained 429s mean another client shares the token or the server budget shrank. Lower ferrvault.rate or give that workload its own token."
  # A token expiring 7 days and 10 minutes after t=0 is under 7 days from 10m on; one expiring in
  # 30 days never is.
  - interval: 1m
    input_series:
      - series: 'ferrvault_connection_token_expiry_timestamp_seconds{exported_namespace="apps",name="fv",namespace="ferrvault-system"}'
        values: '605400x20'
      - series: 'ferrvault_connection_token_expiry_timestamp_seconds{exported_namespace="apps",name="later",namespace="ferrvault-system"}'
        values: '2592000x20'
    alert_rule_test:
      - eval_time: 9m
        alertname: FerrVaultTokenExpiresSoon
      - eval_time: 15m
        alertname: FerrVaultTokenExpiresSoon
        exp_alerts:
          - exp_labels: {severity: warning, exported_namespace: apps, name: fv, namespace: ferrvault-system}
            exp_annotations:
              summary: "The token of FerrVaultConnection apps/fv expires in 6d 23h 55m 0s"
              description: "Put a new service-account token into the Secret the connection names before this one expires, or every FerrVaultSecret using it stops syncing. The connection's TokenHealthy condition says the same."
  # Every change takes 2-5 minutes to arrive from t=0: p99 above 2 minutes, pending 15m, then firing.
  - interval: 1m
    input_series:
      - series: 'ferrvault_change_to_sync_seconds_bucket{le="60",namespace="ferrvault-system"}'
        values: '0x40'
      - series: 'ferrvault_change_to_sync_seconds_bucket{le="120",namespace="ferrvault-system"}'
        values: '0x40'
      - series: 'ferrvault_change_to_sync_seconds_bucket{le="300",namespace="ferrvault-system"}'
        values: '0+10x40'
      - series: 'ferrvault_change_to_sync_seconds_bucket{le="+Inf",namespace="ferrvault-system"}'
        values: '0+10x40'
    alert_rule_test:
      - eval_time: 10m
        alertname: FerrVaultChangesSlow
      - eval_time: 25m
        alertname: FerrVaultChangesSlow
        exp_alerts:
          - exp_labels: {severity: warning, namespace: ferrvault-system}
            exp_annotations:
              summary: "Changes in FerrVault take more than 2 minutes (p99) to reach their Secrets in ferrvault-system"
              description: "Connections with changeDetection Versions should deliver a change within their interval. Check the connections' ChangeDetection conditions, ferrvault_change_polls_total{result=\"error\"} and whether the token's budget is spent (FerrVaultCredentialThrottled)."
"#;

#[test]
fn alerts_should_fire_only_when_their_condition_holds_long_enough() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("rules.yaml"),
        rule_file(&[MONITORING_ON, THREE_REPLICAS].concat()),
    )
    .expect("write rules");
    std::fs::write(dir.path().join("cases.yaml"), ALERT_CASES).expect("write cases");
    let cases = dir.path().join("cases.yaml");
    let output = tools::run_tool(
        "promtool",
        &["test", "rules", cases.to_str().expect("utf-8 path")],
        None,
    );
    assert!(
        output.status.success(),
        "promtool test rules:\n{}",
        tools::describe(&output)
    );
}

#[test]
fn every_dashboard_query_should_be_valid_promql() {
    let rendering = Rendering::new(MONITORING_ON);
    let json = rendering.of_kind("ConfigMap")[0]["data"]["ferrvault-operator.json"]
        .as_str()
        .expect("dashboard JSON")
        .to_owned();
    let dashboard: Value = serde_json::from_str(&json).expect("dashboard JSON parses");
    // Each query becomes a recording rule, with Grafana's variables replaced by what they expand to.
    let mut rules = Vec::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().expect("targets") {
            let expr = target["expr"].as_str().expect("expr");
            let expr = expr.replace("$__rate_interval", "5m").replace("$job", ".+");
            let record = format!(
                "dashboard:panel_{}_{}",
                panel["id"],
                target["refId"].as_str().expect("refId")
            );
            rules.push(serde_json::json!({ "record": record, "expr": expr }));
        }
    }
    let file = serde_json::json!({ "groups": [{ "name": "dashboard", "rules": rules }] });
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("dashboard-queries.yaml");
    std::fs::write(&path, serde_norway::to_string(&file).expect("yaml")).expect("write queries");
    let output = tools::run_tool(
        "promtool",
        &["check", "rules", path.to_str().expect("utf-8 path")],
        None,
    );
    assert!(
        output.status.success(),
        "dashboard queries:\n{}",
        tools::describe(&output)
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).contains(&format!("{} rules found", rules.len())),
        "{}",
        tools::describe(&output)
    );
}
