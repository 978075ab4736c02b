use super::*;

const S: fn(u64) -> Duration = Duration::from_secs;

fn config() -> HealthConfig {
    HealthConfig {
        stall_threshold: S(15),
        probe_period: S(1),
        stale_after: S(5),
    }
}

fn queue(t0: Instant) -> QueueStats {
    QueueStats {
        active: true,
        started_at: t0,
        ..QueueStats::inactive()
    }
}

fn live(role: Role, q: QueueStats, now: Instant) -> ProbeReport {
    let queues = [("test", q)];
    let watches = BTreeMap::new();
    let inputs = HealthInputs {
        role,
        queues: &queues,
        escalation: None,
        expected_watches: &[],
        watches: &watches,
    };
    evaluate(&inputs, &config(), now).liveness_at(now, S(5))
}

#[test]
fn standby_should_stay_live_whatever_its_last_queue_said() {
    let t0 = Instant::now();
    let q = QueueStats {
        depth: 50,
        oldest_ready_since: Some(t0),
        ..queue(t0)
    };
    assert!(live(Role::Standby, q, t0 + S(3600)).ok);
}

#[test]
fn idle_leader_should_stay_live() {
    let t0 = Instant::now();
    let report = live(Role::Leader, queue(t0), t0 + S(86_400));
    assert!(report.ok, "{}", report.body);
    assert!(report.body.contains("test: nothing due"), "{}", report.body);
}

#[test]
fn leader_with_only_slow_refresh_objects_should_stay_live() {
    let t0 = Instant::now();
    let q = QueueStats {
        delayed: 100,
        next_due: Some(t0 + S(7200)),
        last_completed_at: Some(t0),
        ..queue(t0)
    };
    assert!(live(Role::Leader, q, t0 + S(3600)).ok);
}

#[test]
fn leader_with_due_work_and_no_progress_should_fail_after_the_threshold() {
    let t0 = Instant::now();
    let q = QueueStats {
        depth: 3,
        oldest_ready_since: Some(t0 + S(100)),
        last_completed_at: Some(t0),
        ..queue(t0)
    };
    assert!(
        live(Role::Leader, q.clone(), t0 + S(114)).ok,
        "not yet past the threshold"
    );
    let report = live(Role::Leader, q, t0 + S(115));
    assert!(!report.ok);
    assert!(
        report
            .body
            .contains("FAIL progress: test: 3 ready, work due for 15s"),
        "{}",
        report.body
    );
}

#[test]
fn leader_with_a_saturated_but_progressing_pool_should_stay_live() {
    let t0 = Instant::now();
    let q = QueueStats {
        depth: 500,
        oldest_ready_since: Some(t0),
        last_completed_at: Some(t0 + S(999)),
        ..queue(t0)
    };
    assert!(live(Role::Leader, q, t0 + S(1000)).ok);
}

#[test]
fn work_that_just_became_due_after_a_long_quiet_time_should_not_count_as_a_stall() {
    let t0 = Instant::now();
    let q = QueueStats {
        depth: 1,
        oldest_ready_since: Some(t0 + S(3600)),
        last_completed_at: Some(t0),
        ..queue(t0)
    };
    assert!(live(Role::Leader, q, t0 + S(3601)).ok);
}

#[test]
fn an_overdue_key_the_queue_never_promoted_should_fail_after_the_threshold() {
    let t0 = Instant::now();
    let q = QueueStats {
        delayed: 1,
        next_due: Some(t0 + S(10)),
        ..queue(t0)
    };
    assert!(live(Role::Leader, q.clone(), t0 + S(24)).ok);
    assert!(!live(Role::Leader, q, t0 + S(25)).ok);
}

#[test]
fn an_unreplaceable_stuck_worker_should_fail_liveness_with_its_reason() {
    let t0 = Instant::now();
    let q = QueueStats {
        unreplaceable: vec!["test/worker-0 stuck on x".into()],
        ..queue(t0)
    };
    let report = live(Role::Leader, q, t0);
    assert!(!report.ok);
    assert!(
        report.body.contains("FAIL workers: test/worker-0 stuck on x"),
        "{}",
        report.body
    );
}

#[test]
fn escalation_should_fail_liveness_and_readiness() {
    let t0 = Instant::now();
    let queues = [("test", queue(t0))];
    let watches = BTreeMap::new();
    let inputs = HealthInputs {
        role: Role::Standby,
        queues: &queues,
        escalation: Some("6 restarts in 60s"),
        expected_watches: &[],
        watches: &watches,
    };
    let verdict = evaluate(&inputs, &config(), t0);
    let live = verdict.liveness_at(t0, S(5));
    assert!(!live.ok);
    assert!(
        live.body.contains("supervisor escalated: 6 restarts in 60s"),
        "{}",
        live.body
    );
    assert!(!verdict.readiness().ok);
}

#[test]
fn a_stale_verdict_should_fail_liveness() {
    let t0 = Instant::now();
    let report = live(Role::Standby, queue(t0), t0).clone();
    assert!(report.ok);
    let verdict = Verdict {
        evaluated_at: t0,
        role: Role::Standby,
        liveness: vec![],
        readiness: vec![],
    };
    let stale = verdict.liveness_at(t0 + S(6), S(5));
    assert!(!stale.ok);
    assert!(stale.body.contains("wedged"), "{}", stale.body);
}

#[test]
fn a_leader_should_be_ready_only_once_every_watch_synced() {
    let t0 = Instant::now();
    let expected = vec!["A".to_owned(), "B".to_owned()];
    let state = |name: &str, synced| WatchState {
        synced,
        connected: synced,
        ..WatchState::starting(name)
    };
    let mut watches = BTreeMap::from([("A".to_owned(), state("A", true))]);
    let ready = |watches: &BTreeMap<String, WatchState>, role| {
        let inputs = HealthInputs {
            role,
            queues: &[],
            escalation: None,
            expected_watches: &expected,
            watches,
        };
        evaluate(&inputs, &config(), t0).readiness()
    };
    let r = ready(&watches, Role::Leader);
    assert!(!r.ok);
    assert!(
        r.body.contains("not synced: B") && r.body.contains("ok role: leader"),
        "{}",
        r.body
    );
    assert!(ready(&watches, Role::Standby).ok);
    watches.insert("B".into(), state("B", false));
    assert!(
        !ready(&watches, Role::Leader).ok,
        "a reported watch that never listed is not synced"
    );
    watches.insert("B".into(), state("B", true));
    assert!(ready(&watches, Role::Leader).ok);
}

#[test]
fn a_leader_should_stay_ready_when_a_synced_watch_reports_an_error() {
    let expected = vec!["A".to_owned()];
    let errored = WatchState {
        synced: true,
        connected: false,
        errors: 1,
        last_error: Some("watch start failed: 500 InternalError".into()),
        ..WatchState::starting("A")
    };
    let watches = BTreeMap::from([("A".to_owned(), errored)]);
    let inputs = HealthInputs {
        role: Role::Leader,
        queues: &[],
        escalation: None,
        expected_watches: &expected,
        watches: &watches,
    };
    let ready = evaluate(&inputs, &config(), Instant::now()).readiness();
    assert!(ready.ok, "{}", ready.body);
    assert!(
        ready.body.contains("ok watches: 1 watches synced"),
        "{}",
        ready.body
    );
}
