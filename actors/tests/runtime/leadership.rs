//! The leadership actor against the Kubernetes API simulator: several candidates, each with its
//! own identity (`client_as`), compete for one Lease with short timings.

use std::{
    sync::Arc,
    time::{Duration, SystemTime},
};

use crate::common::{HookCall, RecordingHooks, eventually, init_tracing, recording_supervisor};
use controller_actors::{
    Allowance, Fence, LeaderElectionConfig, LeadershipMsg, LeadershipSource, LeaseLeadership, LeaseStatus,
    Role, Spawner, Timings,
};
use ferrvault_sim::kube::{AuditEntry, KubeSim};
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use ractor::ActorRef;
use tokio::sync::watch;

const NAMESPACE: &str = "kube-system";
/// The `fieldManager` every candidate's Lease writes carry.
const FIELD_MANAGER: &str = "leadership-test";

/// Lease 3s, renew deadline 2s, retry 500ms: the brief's fast timings.
const TIMINGS: Timings = Timings {
    lease_duration: Duration::from_secs(3),
    renew_deadline: Duration::from_secs(2),
    retry_period: Duration::from_millis(500),
};

/// Scheduling and HTTP slack on a loaded 2-core machine, added to every timing bound.
const SLACK: Duration = Duration::from_millis(700);

/// Generous bound for things that should happen within a few retry periods.
const SOON: Duration = Duration::from_secs(10);

/// One competing replica.
struct Candidate {
    identity: String,
    actor: ActorRef<LeadershipMsg>,
    status: watch::Receiver<LeaseStatus>,
    hooks: Arc<RecordingHooks>,
    fence: Fence,
    /// Keeps the supervisor (and so the link) alive for the test.
    _supervisor: ActorRef<()>,
}

impl Candidate {
    async fn spawn(
        sim: &KubeSim,
        identity: &str,
        lease_name: &str,
        enabled: bool,
        stop_takes: Duration,
    ) -> Self {
        let config = LeaderElectionConfig {
            enabled,
            lease_namespace: NAMESPACE.into(),
            lease_name: lease_name.into(),
            identity: identity.into(),
            field_manager: FIELD_MANAGER.into(),
            timings: TIMINGS,
        };
        let (tx, status) = watch::channel(LeaseStatus {
            role: Role::Standby,
            identity: identity.into(),
            holder: None,
            expires_at: None,
            lease_duration: TIMINGS.lease_duration,
            transitions: 0,
            shards: None,
        });
        let hooks = RecordingHooks::new(stop_takes);
        // Spawned the way the runtime does it: through the LeadershipSource, under a supervisor.
        let source = LeaseLeadership::new(config, sim.client_as(identity));
        let (supervisor, _) = recording_supervisor().await;
        let fence = Fence::new();
        let spawned = source
            .spawn_linked(
                &Spawner::standalone(supervisor.get_cell()),
                hooks.clone(),
                tx,
                fence.clone(),
            )
            .await
            .expect("spawn leadership");
        Self {
            identity: identity.into(),
            actor: spawned.cell().clone().into(),
            status,
            hooks,
            fence,
            _supervisor: supervisor,
        }
    }

    fn leads(&self) -> bool {
        self.status.borrow().role == Role::Leader
    }

    async fn release(&self) {
        self.actor
            .call(LeadershipMsg::Release, Some(SOON))
            .await
            .expect("release delivered")
            .expect("release answered in time");
    }
}

/// Three candidates for a fresh Lease.
async fn three_candidates(sim: &KubeSim) -> (String, Vec<Candidate>) {
    let lease = format!("lease-{}", uuid::Uuid::new_v4().simple());
    let mut all = Vec::new();
    for name in ["pod-a", "pod-b", "pod-c"] {
        all.push(Candidate::spawn(sim, name, &lease, true, Duration::ZERO).await);
    }
    (lease, all)
}

/// The one candidate that leads, once exactly one does.
async fn single_leader(candidates: &[Candidate], within: Duration) -> usize {
    eventually(within, "exactly one candidate leading", || {
        let leaders: Vec<usize> = (0..candidates.len()).filter(|&i| candidates[i].leads()).collect();
        (leaders.len() == 1).then(|| leaders[0])
    })
    .await
}

/// Whether `entry` is a request about `lease` (creates are audited on the collection, without
/// a name; each test uses one Lease, so every Lease create is about it).
fn is_about(entry: &AuditEntry, lease: &str) -> bool {
    entry.resource == "leases" && (entry.name == lease || entry.verb == "create")
}

/// Successful writes (create/update) to `lease`, in order: (identity, time).
fn lease_writes(sim: &KubeSim, lease: &str) -> Vec<(String, SystemTime)> {
    sim.audit()
        .into_iter()
        .filter(|e: &AuditEntry| {
            is_about(e, lease)
                && (200..300).contains(&e.code)
                && matches!(e.verb.as_str(), "create" | "update")
        })
        .map(|e| (e.identity.clone(), parse_time(&e.time)))
        .collect()
}

/// Requests of any verb to `lease` by `identity`, with their times.
fn lease_requests_by(sim: &KubeSim, lease: &str, identity: &str) -> Vec<(String, SystemTime)> {
    sim.audit()
        .into_iter()
        .filter(|e| is_about(e, lease) && e.identity == identity)
        .map(|e| (e.verb.clone(), parse_time(&e.time)))
        .collect()
}

/// The simulator's audit shows no overlap of Lease writes from two identities: a new
/// identity writes only once the previous writer's last write is a lease duration old, or
/// was its release (`released_by` lists the identities whose last write is a release).
fn assert_no_overlap(sim: &KubeSim, lease: &str, released_by: &[&str]) {
    let writes = lease_writes(sim, lease);
    for pair in writes.windows(2) {
        let ((before, before_at), (after, after_at)) = (&pair[0], &pair[1]);
        if before == after {
            continue;
        }
        let was_release = released_by.contains(&before.as_str())
            && !writes.iter().any(|(who, at)| who == before && at > before_at);
        let gap = after_at.duration_since(*before_at).unwrap_or_default();
        assert!(
            was_release || gap >= TIMINGS.lease_duration,
            "{after} wrote the Lease {gap:?} after {before} did: two holders overlap ({writes:?})"
        );
    }
}

fn parse_time(rfc3339: &str) -> SystemTime {
    let ts: jiff::Timestamp = rfc3339.parse().expect("audit time is RFC 3339");
    SystemTime::from(ts)
}

fn holder(sim: &KubeSim, lease: &str) -> impl Future<Output = Option<String>> {
    let api: Api<Lease> = Api::namespaced(sim.client(), NAMESPACE);
    let lease = lease.to_owned();
    async move {
        let lease = api.get_opt(&lease).await.expect("read lease")?;
        lease.spec?.holder_identity.filter(|h| !h.is_empty())
    }
}

#[tokio::test]
async fn three_candidates_should_elect_exactly_one_leader_at_any_time() {
    init_tracing();
    let sim = KubeSim::start().await.expect("simulator starts");
    let (lease, candidates) = three_candidates(&sim).await;
    let leader = single_leader(&candidates, SOON).await;

    // Watch the invariant for two lease durations: never two leaders, by status or by hooks.
    let until = tokio::time::Instant::now() + 2 * TIMINGS.lease_duration;
    while tokio::time::Instant::now() < until {
        let by_status = candidates.iter().filter(|c| c.leads()).count();
        let by_hooks = candidates.iter().filter(|c| c.hooks.is_leading()).count();
        assert_eq!((by_status, by_hooks), (1, 1), "exactly one leader at any time");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(
        holder(&sim, &lease).await.as_deref(),
        Some(candidates[leader].identity.as_str())
    );
    let writers: Vec<String> = lease_writes(&sim, &lease)
        .into_iter()
        .map(|(who, _)| who)
        .collect();
    assert!(
        writers.len() >= 4,
        "the leader renews every retry period: {writers:?}"
    );
    assert!(
        writers.iter().all(|w| *w == candidates[leader].identity),
        "only the leader writes: {writers:?}"
    );
    assert_no_overlap(&sim, &lease, &[]);
}

#[tokio::test]
async fn killing_the_leader_should_hand_over_within_lease_duration_plus_retry_period() {
    init_tracing();
    let sim = KubeSim::start().await.expect("simulator starts");
    let (lease, mut candidates) = three_candidates(&sim).await;
    let first = single_leader(&candidates, SOON).await;
    let killed = candidates.remove(first);
    killed
        .actor
        .kill_and_wait(Some(SOON))
        .await
        .expect("leader killed");
    let killed_at = tokio::time::Instant::now();

    let next = single_leader(
        &candidates,
        TIMINGS.lease_duration + TIMINGS.retry_period + SLACK + SLACK,
    )
    .await;
    let took = killed_at.elapsed();
    assert!(
        took <= TIMINGS.lease_duration + TIMINGS.retry_period + SLACK,
        "takeover took {took:?}, more than lease duration + retry period"
    );
    assert_no_overlap(&sim, &lease, &[]);
    assert_eq!(
        holder(&sim, &lease).await.as_deref(),
        Some(candidates[next].identity.as_str())
    );
}

#[tokio::test]
async fn graceful_release_should_hand_over_within_one_retry_period() {
    init_tracing();
    let sim = KubeSim::start().await.expect("simulator starts");
    let (lease, mut candidates) = three_candidates(&sim).await;
    let first = single_leader(&candidates, SOON).await;
    let leaving = candidates.remove(first);

    leaving.release().await;
    let released_at = tokio::time::Instant::now();
    assert!(!leaving.leads(), "a released candidate reports standby");
    assert!(
        matches!(leaving.hooks.calls().last(), Some(HookCall::Stopped(..))),
        "controllers stopped before the reply"
    );

    let next = single_leader(&candidates, TIMINGS.retry_period + SLACK + SLACK).await;
    let took = released_at.elapsed();
    assert!(
        took <= TIMINGS.retry_period + SLACK,
        "takeover took {took:?}, more than one retry period"
    );
    assert_eq!(
        holder(&sim, &lease).await.as_deref(),
        Some(candidates[next].identity.as_str())
    );

    // Released for good: it never competes again.
    tokio::time::sleep(2 * TIMINGS.retry_period).await;
    assert!(!leaving.leads());
    let stopped_at = match leaving.hooks.calls().last() {
        Some(HookCall::Stopped(_, ended)) => *ended,
        other => panic!("last hook call should be stopped_leading, was {other:?}"),
    };
    let writes_after_stop: Vec<_> = lease_writes(&sim, &lease)
        .into_iter()
        .filter(|(who, at)| *who == leaving.identity && *at > stopped_at)
        .collect();
    assert_eq!(
        writes_after_stop.len(),
        1,
        "exactly one write after stopping: the release"
    );
    assert_no_overlap(&sim, &lease, &[leaving.identity.as_str()]);

    // Create, renewals and the release all named our field manager (the simulator records
    // managedFields like an API server; kube-rs alone would be recorded as `unknown`).
    let api: Api<Lease> = Api::namespaced(sim.client(), NAMESPACE);
    let managers: Vec<Option<String>> = api
        .get(&lease)
        .await
        .expect("read lease")
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .map(|entry| entry.manager)
        .collect();
    assert_eq!(managers, [Some(FIELD_MANAGER.to_owned())]);
}

/// A single candidate leading for a few renewals, whose `stopped_leading` takes `stop_takes`.
async fn established_leader(sim: &KubeSim, stop_takes: Duration) -> (String, Candidate) {
    let lease = format!("lease-{}", uuid::Uuid::new_v4().simple());
    let leader = Candidate::spawn(sim, "pod-a", &lease, true, stop_takes).await;
    eventually(SOON, "the only candidate leading", || {
        leader.leads().then_some(())
    })
    .await;
    eventually(SOON, "a few renewals", || {
        (lease_writes(sim, &lease).len() >= 3).then_some(())
    })
    .await;
    (lease, leader)
}

/// The first `stopped_leading` call: (began, ended).
async fn first_stop(leader: &Candidate) -> (SystemTime, SystemTime) {
    eventually(SOON, "stopped_leading returning", || {
        leader.hooks.calls().into_iter().find_map(|c| match c {
            HookCall::Stopped(began, ended) => Some((began, ended)),
            HookCall::Started(_) => None,
        })
    })
    .await
}

#[tokio::test]
async fn leader_should_step_down_before_its_lease_expires_when_the_api_hangs() {
    init_tracing();
    let sim = KubeSim::start().await.expect("simulator starts");
    let (lease, leader) = established_leader(&sim, Duration::ZERO).await;

    sim.faults().hang(None, Some("leases"));
    eventually(SOON, "the leader stepping down", || {
        (!leader.leads()).then_some(())
    })
    .await;
    let stepped_down = SystemTime::now();
    // Nothing succeeds once hung: the last successful write is the last renew.
    let last_renew = lease_writes(&sim, &lease).last().expect("renewed").1;
    let expiry = last_renew + TIMINGS.lease_duration;
    assert!(
        stepped_down < expiry,
        "stepped down {:?} after the lease ran out",
        stepped_down.duration_since(expiry)
    );
    let (began, _) = first_stop(&leader).await;
    assert!(
        began < expiry,
        "controllers were told to stop before the lease ran out"
    );

    sim.faults().unhang();
    eventually(SOON, "the candidate leading again once the API answers", || {
        leader.leads().then_some(())
    })
    .await;
}

#[tokio::test]
async fn the_fence_should_follow_the_renewals_and_lapse_at_the_renew_deadline_before_the_lease_expires() {
    init_tracing();
    let sim = KubeSim::start().await.expect("simulator starts");
    let (lease, leader) = established_leader(&sim, Duration::ZERO).await;
    let allowance = leader.fence.allowance(tokio::time::Instant::now());
    assert!(
        matches!(allowance, Allowance::Until(_)),
        "a renewing leader may write: {allowance:?}"
    );

    sim.faults().hang(None, Some("leases"));
    eventually(SOON, "the fence refusing writes", || {
        (leader.fence.allowance(tokio::time::Instant::now()) == Allowance::Refused).then_some(())
    })
    .await;
    let lapsed = SystemTime::now();
    // Nothing succeeds once hung: the last successful write is the last renewal.
    let last_renew = lease_writes(&sim, &lease).last().expect("renewed").1;
    assert!(
        lapsed < last_renew + TIMINGS.lease_duration,
        "writes were still allowed {:?} after the lease ran out",
        lapsed.duration_since(last_renew + TIMINGS.lease_duration)
    );
    assert!(
        lapsed + SLACK >= last_renew + TIMINGS.renew_deadline,
        "the fence closed {:?} after the last renewal, well before the renew deadline",
        lapsed.duration_since(last_renew).unwrap_or_default()
    );
    sim.faults().unhang();
}

#[tokio::test]
async fn leader_should_compete_again_only_after_stopped_leading_returned() {
    init_tracing();
    let sim = KubeSim::start().await.expect("simulator starts");
    let stop_takes = Duration::from_secs(1);
    let (lease, leader) = established_leader(&sim, stop_takes).await;

    sim.faults().fail(None, Some("leases"), 1.0, 500);
    eventually(SOON, "the leader stepping down", || {
        (!leader.leads()).then_some(())
    })
    .await;
    // The API recovers while the controllers are still stopping.
    sim.faults().clear();
    let (began, ended) = first_stop(&leader).await;
    eventually(SOON, "the candidate leading again", || {
        leader.leads().then_some(())
    })
    .await;

    // A request aborted at step-down may reach the server just after; any attempt made while
    // stopping would come a retry period later.
    let settle = began + Duration::from_millis(200);
    let during_stop: Vec<_> = lease_requests_by(&sim, &lease, "pod-a")
        .into_iter()
        .filter(|(_, at)| *at > settle && *at < ended)
        .collect();
    assert!(
        during_stop.is_empty(),
        "competed while controllers were stopping: {during_stop:?}"
    );
    let after_stop = lease_requests_by(&sim, &lease, "pod-a")
        .into_iter()
        .filter(|(_, at)| *at >= ended)
        .count();
    assert!(after_stop > 0, "competed again after stopped_leading returned");
    assert_eq!(
        leader.hooks.calls().len(),
        3,
        "started, stopped, started again: {:?}",
        leader.hooks.calls()
    );
}

#[tokio::test]
async fn disabled_leader_election_should_lead_at_once_without_a_lease() {
    init_tracing();
    let sim = KubeSim::start().await.expect("simulator starts");
    let lease = format!("lease-{}", uuid::Uuid::new_v4().simple());
    let only = Candidate::spawn(&sim, "pod-a", &lease, false, Duration::ZERO).await;
    eventually(SOON, "leading once started", || only.leads().then_some(())).await;
    assert!(only.hooks.is_leading());
    only.release().await;
    assert!(!only.leads());
    assert!(matches!(
        only.hooks.calls().as_slice(),
        [HookCall::Started(_), HookCall::Stopped(..)]
    ));
    assert!(
        lease_requests_by(&sim, &lease, "pod-a").is_empty(),
        "no Lease traffic without election"
    );
}

#[tokio::test]
async fn graceful_stop_should_stop_controllers_then_release_so_a_standby_takes_over_at_once() {
    init_tracing();
    let sim = KubeSim::start().await.expect("simulator starts");
    let lease = format!("lease-{}", uuid::Uuid::new_v4().simple());
    let leader = Candidate::spawn(&sim, "pod-a", &lease, true, Duration::from_millis(300)).await;
    eventually(SOON, "the first candidate leading", || {
        leader.leads().then_some(())
    })
    .await;
    let standby = Candidate::spawn(&sim, "pod-b", &lease, true, Duration::ZERO).await;
    eventually(SOON, "the standby seeing the holder", || {
        (standby.status.borrow().holder.as_deref() == Some("pod-a")).then_some(())
    })
    .await;

    // What the supervisor does on shutdown or escalation.
    leader
        .actor
        .stop_and_wait(Some("runtime stopping".into()), Some(SOON))
        .await
        .expect("stopped");
    let stopped_at = tokio::time::Instant::now();
    assert!(
        matches!(
            leader.hooks.calls().as_slice(),
            [HookCall::Started(_), HookCall::Stopped(..)]
        ),
        "controllers stopped before the actor finished stopping: {:?}",
        leader.hooks.calls()
    );
    eventually(
        TIMINGS.retry_period + SLACK + SLACK,
        "the standby leading",
        || standby.leads().then_some(()),
    )
    .await;
    let took = stopped_at.elapsed();
    assert!(
        took <= TIMINGS.retry_period + SLACK,
        "takeover took {took:?}, more than one retry period"
    );
    assert_no_overlap(&sim, &lease, &["pod-a"]);
}

#[tokio::test]
async fn release_should_answer_within_the_api_deadlines_when_the_api_hangs() {
    init_tracing();
    let sim = KubeSim::start().await.expect("simulator starts");
    let (_lease, leader) = established_leader(&sim, Duration::ZERO).await;
    sim.faults().hang(None, Some("leases"));
    let asked = tokio::time::Instant::now();
    leader.release().await;
    // At most one in-flight call plus the release exchange, each under the API timeout.
    let bound = 2 * TIMINGS.api_timeout() + SLACK;
    assert!(
        asked.elapsed() <= bound,
        "release took {:?}, more than {bound:?}",
        asked.elapsed()
    );
    assert!(!leader.leads());
    assert!(
        matches!(leader.hooks.calls().last(), Some(HookCall::Stopped(..))),
        "controllers stopped"
    );
    sim.faults().unhang();
}
