//! Issue 39 point 5: shards between real processes. Three replicas with `--shards 6` split the
//! shards two each and every namespace's objects are written by the replica holding its shard
//! only; SIGKILL one and its shards are held again by the other two within lease duration +
//! retry period + slack, every object stays synced, nothing is written again and FerrVault
//! sees no request but the one a new object needs; SIGTERM another and the last one holds every
//! shard before any Lease could have expired.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::{Duration, Instant},
};

use controller_actors::{ShardId, Shards};
use ferrvault_operator::api::{ClusterFerrVaultConnection, FerrVaultConnection, FerrVaultSecret};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::{
    Api,
    api::{ApiResource, DynamicObject, PostParams},
};
use serde_json::json;

use crate::scenario_support::{
    audit::{between, is_object_write, lease_writes, time_of},
    cluster::{Cluster, VAULT, ferrvault_config, unlimited},
    finish,
    fixtures::{NS, PROD_TOKEN, connection_spec, secret_spec},
    operator::{LEADER_ELECT, LEASE_DURATION, OperatorProcess, RETRY_PERIOD, get_lenient},
    poll_until,
};

pub(crate) const SHARDS: u16 = 6;
/// `--leader-elect-id`'s default: the shard Leases are `<it>-shard-<i>`.
const ELECTION_ID: &str = "ferrvault-operator.ferrvault.com";
const NAMESPACES: usize = 30;
const PER_NAMESPACE: usize = 2;
/// Scheduling slack on a shared 2-core machine, on top of lease duration + two retry periods
/// (the survivors list the Leases, and try to acquire, once a retry period): the drift of their
/// rounds and one list and one write on a loaded machine.
const SLACK: Duration = Duration::from_secs(1);

#[tokio::test(flavor = "multi_thread")]
async fn three_replicas_should_split_six_shards_and_take_over_a_killed_ones_without_writing_twice() {
    let started = Instant::now();
    let cluster = Cluster::start(ferrvault_config(unlimited(), false)).await;
    let namespaces = team_namespaces(NAMESPACES);
    for namespace in &namespaces {
        tenant_namespace(&cluster, namespace).await;
    }
    // The objects come once the shards are balanced: a replica starting first holds every
    // shard until the others' member Leases appear, and would write other replicas' objects.
    let (mut operators, owners) = launch_sharded(&cluster, "shards", &[]).await;
    for (i, operator) in operators.iter().enumerate() {
        let held: Vec<u16> = owners.iter().filter(|(_, o)| **o == i).map(|(s, _)| *s).collect();
        assert_shows_its_shards(operator, &held).await;
    }
    platform_connection(&cluster).await;
    let mut names = Vec::new();
    for namespace in &namespaces {
        names.extend(tenant_objects(&cluster, namespace).await);
    }
    wait_ready::<FerrVaultSecret>(&cluster, &names, "Synced").await;
    // Every connection probed once: a first probe still due at the kill would be new work.
    let connections: Vec<String> = namespaces.iter().map(|ns| format!("{ns}/prod")).collect();
    wait_ready::<FerrVaultConnection>(&cluster, &connections, "Reachable").await;

    // Each namespace written by one replica: the one holding its shard.
    let of = Shards::new(u32::from(SHARDS)).expect("a valid count");
    let writers = writers_by_namespace(&cluster, &operators);
    for namespace in &namespaces {
        let owner = &operators[owners[&of.of_namespace(namespace).0]].name;
        assert_eq!(
            writers.get(namespace.as_str()),
            Some(&BTreeSet::from([owner.clone()])),
            "{namespace} (shard {}) should be written by its shard's holder only",
            of.of_namespace(namespace).0
        );
    }
    // The cluster connection is reconciled by the empty namespace's shard holder only: any
    // other replica's pass would end in a write its fence refuses.
    let platform = cluster_connections(&cluster);
    poll_until(
        "the cluster connection's status",
        Duration::from_secs(30),
        || async {
            let status = platform.get("platform").await.map_err(|e| e.to_string())?;
            let allowed = status.data.pointer("/status/allowedNamespaces").cloned();
            allowed.ok_or_else(|| "no status yet".to_owned())
        },
    )
    .await;
    let errors = sum_all(
        &mut operators,
        &[0, 1, 2],
        "controller_runtime_reconcile_errors_total",
    )
    .await;
    assert_eq!(errors, 0.0, "no replica should fail a reconcile");
    // Every FerrVaultSecret stored once between the replicas.
    let stored = (NAMESPACES * PER_NAMESPACE) as f64;
    wait_sum(&mut operators, &[0, 1, 2], "ferrvault_shard_objects", stored).await;

    // SIGKILL one: its Leases must expire before the others take its shards.
    let requests_before = cluster.fv.stats().total.requests;
    let reveals_before = cluster.vault_requests();
    let target_writes_before = target_writes(&cluster);
    let moved: Vec<u16> = owners.iter().filter(|(_, o)| **o == 0).map(|(s, _)| *s).collect();
    let killed_at = Timestamp::now();
    operators[0].kill9();
    assert_eq!(
        operators[0].wait_exit(Duration::from_secs(10)),
        None,
        "killed by a signal"
    );
    let owners_after = wait_for_split(&mut operators, &[1, 2], 3).await;
    // Each moved shard's Lease was written by a survivor a lease duration or more after the
    // killed replica's last write of it (a survivor times a lease from when it listed it, at
    // most a retry period after that write, and acquires at its first round past the expiry).
    let audit = cluster.kube.audit();
    let mut takeover = Duration::ZERO;
    for shard in &moved {
        let name = of.lease_name(ELECTION_ID, ShardId(*shard));
        let writes = |identity: &str| {
            lease_writes(&audit, identity)
                .filter(|e| e.name == name)
                .map(time_of)
                .collect::<Vec<_>>()
        };
        let last = *writes(&operators[0].name)
            .iter()
            .max()
            .expect("the killed replica held it");
        let taken = [1, 2]
            .iter()
            .flat_map(|i| writes(&operators[*i].name))
            .filter(|at| *at > last)
            .min()
            .expect("a survivor took it");
        let after_renewal = between(last, taken);
        assert!(
            after_renewal >= LEASE_DURATION,
            "shard {shard} was taken {after_renewal:?} after the killed replica's last renewal, before it could expire"
        );
        takeover = takeover.max(between(killed_at, taken));
    }
    let bound = LEASE_DURATION + 2 * RETRY_PERIOD + SLACK;
    assert!(
        takeover <= bound,
        "the killed replica's shards {moved:?} were held again {takeover:?} after the kill (bound {bound:?})"
    );
    assert!(
        moved.iter().all(|shard| owners_after[shard] != 0),
        "{moved:?} moved"
    );

    // A new object in a moved namespace syncs; nothing else was revealed or written again.
    let namespace = namespaces
        .iter()
        .find(|ns| moved.contains(&of.of_namespace(ns).0))
        .expect("30 namespaces cover every shard");
    let fvs: Api<FerrVaultSecret> = Api::namespaced(cluster.client.clone(), namespace);
    let after_kill = format!("{namespace}-after-kill");
    fvs.create(
        &PostParams::default(),
        &FerrVaultSecret::new(&after_kill, secret_spec("prod", VAULT)),
    )
    .await
    .expect("create FerrVaultSecret");
    names.push(format!("{namespace}/{after_kill}"));
    wait_ready::<FerrVaultSecret>(&cluster, &names, "Synced").await;
    let reveals = cluster.vault_requests() - reveals_before;
    let requests = cluster.fv.stats().total.requests - requests_before;
    assert_eq!(
        (reveals, requests),
        (1, 1),
        "after the takeover FerrVault should see only the new object's reveal"
    );
    assert_eq!(
        target_writes(&cluster),
        target_writes_before + 1,
        "after the takeover only the new object's Secret should be written"
    );
    // The moved shards' objects were listed by their new holders, not only the new one.
    wait_sum(
        &mut operators,
        &[1, 2],
        "ferrvault_shard_objects",
        (NAMESPACES * PER_NAMESPACE + 1) as f64,
    )
    .await;
    let held = sum_all(&mut operators, &[1, 2], "ferrvault_shard_owned").await;
    assert_eq!(held, f64::from(SHARDS), "the survivors hold every shard once");

    // SIGTERM another: it releases its shards on the way out; the last replica takes them at
    // its next rounds, without waiting for any Lease to expire.
    let stopped_at = Instant::now();
    operators[1].sigterm();
    assert_eq!(
        operators[1].wait_exit(Duration::from_secs(20)),
        Some(0),
        "a SIGTERM'd replica exits 0"
    );
    wait_for_split(&mut operators, &[2], usize::from(SHARDS)).await;
    let handover = stopped_at.elapsed();
    assert!(
        handover < LEASE_DURATION,
        "the released shards were taken {handover:?} after SIGTERM: they waited for expiry"
    );
    eprintln!(
        "scenario shards: takeover after SIGKILL {takeover:?} (shards {moved:?}), after SIGTERM {handover:?}"
    );

    finish("shards", started, &cluster, operators, &[]).await;
}

/// `operator` is ready (every watch of its held shards listed) and `/debug/actors` lists `held`.
async fn assert_shows_its_shards(operator: &OperatorProcess, held: &[u16]) {
    poll_until(
        &format!("{} ready", operator.name),
        Duration::from_secs(30),
        || async {
            match operator.probe("/readyz?verbose").await {
                (200, body) if body.contains("[+]role ok: leader") && body.contains("[+]watches ok") => {
                    Ok(())
                }
                (status, body) => Err(format!("{status}: {body}")),
            }
        },
    )
    .await;
    let admin = operator.at.admin.expect("the admin server is enabled");
    let (_, tree) = get_lenient(&format!("http://{admin}/debug/actors?format=text")).await;
    assert!(
        tree.contains(&format!("shards={held:?}")),
        "{}'s /debug/actors should list shards {held:?}:\n{tree}",
        operator.name
    );
}

/// ClusterFerrVaultConnection `platform`, letting in every namespace, its token in the
/// operator's namespace (its reconcile reads the stores only; its status counts namespaces).
pub(crate) async fn platform_connection(cluster: &Cluster) {
    cluster
        .create_secret("platform-token", &[("token", PROD_TOKEN)])
        .await;
    let connection: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "ClusterFerrVaultConnection",
        "metadata": { "name": "platform" },
        "spec": {
            "url": cluster.fv.url(),
            "tokenSecretRef": { "namespace": NS, "name": "platform-token", "key": "token" },
            "allowedNamespaces": { "names": ["*"] },
        },
    }))
    .expect("a ClusterFerrVaultConnection");
    cluster_connections(cluster)
        .create(&PostParams::default(), &connection)
        .await
        .expect("create ClusterFerrVaultConnection");
}

/// The ClusterFerrVaultConnections, untyped.
pub(crate) fn cluster_connections(cluster: &Cluster) -> Api<DynamicObject> {
    Api::all_with(
        cluster.client.clone(),
        &ApiResource::erase::<ClusterFerrVaultConnection>(&()),
    )
}

/// Namespace `namespace` with the token Secret the connection reads.
async fn tenant_namespace(cluster: &Cluster, namespace: &str) {
    create_namespace(cluster, namespace).await;
    let token: Secret = serde_json::from_value(json!({
        "metadata": {"name": "prod-token"},
        "stringData": {"token": PROD_TOKEN},
    }))
    .expect("a Secret");
    Api::<Secret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &token)
        .await
        .expect("create token Secret");
}

/// Namespace `namespace`.
pub(crate) async fn create_namespace(cluster: &Cluster, namespace: &str) {
    let ns: Namespace =
        serde_json::from_value(json!({"metadata": {"name": namespace}})).expect("a Namespace");
    Api::<Namespace>::all(cluster.client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .expect("create Namespace");
}

/// Connection `prod` and [`PER_NAMESPACE`] FerrVaultSecrets `<namespace>-app-<i>` in
/// `namespace`; their keys (`<namespace>/<name>`).
async fn tenant_objects(cluster: &Cluster, namespace: &str) -> Vec<String> {
    Api::<FerrVaultConnection>::namespaced(cluster.client.clone(), namespace)
        .create(
            &PostParams::default(),
            &FerrVaultConnection::new("prod", connection_spec(&cluster.fv.url(), "prod-token")),
        )
        .await
        .expect("create FerrVaultConnection");
    let fvs: Api<FerrVaultSecret> = Api::namespaced(cluster.client.clone(), namespace);
    let mut names = Vec::new();
    for i in 0..PER_NAMESPACE {
        let name = format!("{namespace}-app-{i}");
        fvs.create(
            &PostParams::default(),
            &FerrVaultSecret::new(&name, secret_spec("prod", VAULT)),
        )
        .await
        .expect("create FerrVaultSecret");
        names.push(format!("{namespace}/{name}"));
    }
    names
}

/// Waits until every object of kind `K` keyed `<namespace>/<name>` in `keys` is Ready=True
/// with `reason`.
pub(crate) async fn wait_ready<K: kube::Resource<DynamicType = ()>>(
    cluster: &Cluster,
    keys: &[String],
    reason: &str,
) {
    let api: Api<DynamicObject> = Api::all_with(cluster.client.clone(), &ApiResource::erase::<K>(&()));
    poll_until(
        &format!("{} {} Ready/{reason}", keys.len(), K::kind(&())),
        Duration::from_secs(60),
        || async {
            let list = api.list(&Default::default()).await.map_err(|e| e.to_string())?;
            let ready: BTreeSet<String> = list
                .items
                .iter()
                .filter(|cr| {
                    let conditions = cr.data.pointer("/status/conditions").and_then(|c| c.as_array());
                    conditions.is_some_and(|conditions| {
                        (conditions.iter())
                            .any(|c| c["type"] == "Ready" && c["status"] == "True" && c["reason"] == reason)
                    })
                })
                .map(|cr| {
                    let meta = &cr.metadata;
                    format!(
                        "{}/{}",
                        meta.namespace.as_deref().unwrap_or_default(),
                        meta.name.as_deref().unwrap_or_default()
                    )
                })
                .collect();
            let pending = keys.iter().filter(|k| !ready.contains(*k)).count();
            if pending == 0 {
                Ok(())
            } else {
                Err(format!("{pending} pending"))
            }
        },
    )
    .await;
}

/// `count` namespace names, `team-00` onwards.
pub(crate) fn team_namespaces(count: usize) -> Vec<String> {
    (0..count).map(|i| format!("team-{i:02}")).collect()
}

/// Three replicas of run `run` with `--shards=`[`SHARDS`] and `extra` flags, returned once they
/// hold two shards each, with each shard's holder (index into the replicas).
pub(crate) async fn launch_sharded(
    cluster: &Cluster,
    run: &str,
    extra: &[&str],
) -> (Vec<OperatorProcess>, BTreeMap<u16, usize>) {
    let shards = format!("--shards={SHARDS}");
    let flags: Vec<&str> = LEADER_ELECT
        .iter()
        .copied()
        .chain([shards.as_str()])
        .chain(extra.iter().copied())
        .collect();
    let mut operators: Vec<OperatorProcess> = (0..3)
        .map(|i| OperatorProcess::launch(cluster, run, &format!("operator-{i}"), &flags))
        .collect();
    let owners = wait_for_split(&mut operators, &[0, 1, 2], 2).await;
    (operators, owners)
}

/// Polls until the replicas `live` each hold `each` shards, every shard held once (read from
/// their `/metrics`); the holder (index into `operators`) of each shard.
pub(crate) async fn wait_for_split(
    operators: &mut [OperatorProcess],
    live: &[usize],
    each: usize,
) -> BTreeMap<u16, usize> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut owners = BTreeMap::new();
        let mut counts = Vec::new();
        for &i in live {
            let owned = owned_shards(&operators[i].scrape().await);
            counts.push(owned.len());
            owners.extend(owned.into_iter().map(|shard| (shard, i)));
        }
        if counts.iter().all(|c| *c == each) && owners.len() == usize::from(SHARDS) {
            return owners;
        }
        assert!(
            Instant::now() < deadline,
            "the shards never split {each} per replica: held {counts:?}, owners {owners:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The shards a `/metrics` text says are held (`ferrvault_shard_owned{shard="i"} 1`).
fn owned_shards(metrics: &str) -> Vec<u16> {
    metrics
        .lines()
        .filter_map(|line| line.strip_prefix("ferrvault_shard_owned{shard=\""))
        .filter_map(|rest| rest.split_once("\"} "))
        .filter(|(_, value)| value.trim() == "1")
        .filter_map(|(shard, _)| shard.parse().ok())
        .collect()
}

/// Polls (`/metrics` is rendered at most once a second) until the series of `family` sum to
/// `expected` over the replicas `live`.
pub(crate) async fn wait_sum(operators: &mut [OperatorProcess], live: &[usize], family: &str, expected: f64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let sum = sum_all(operators, live, family).await;
        if sum == expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{family} sums to {sum} over replicas {live:?}, not {expected}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The sum of every series of `family` over the replicas `live`.
pub(crate) async fn sum_all(operators: &mut [OperatorProcess], live: &[usize], family: &str) -> f64 {
    let mut sum = 0.0;
    for &i in live {
        let text = operators[i].scrape().await;
        sum += text
            .lines()
            .filter(|line| line.starts_with(&format!("{family}{{")))
            .filter_map(|line| line.rsplit_once(' ')?.1.parse::<f64>().ok())
            .sum::<f64>();
    }
    sum
}

/// For each namespace, the replicas that wrote anything but a Lease in it.
pub(crate) fn writers_by_namespace(
    cluster: &Cluster,
    operators: &[OperatorProcess],
) -> BTreeMap<String, BTreeSet<String>> {
    let replicas: BTreeSet<&str> = operators.iter().map(|o| o.name.as_str()).collect();
    let mut writers: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in cluster.kube.audit() {
        if is_object_write(&entry) && entry.code < 300 && replicas.contains(entry.identity.as_str()) {
            writers
                .entry(entry.namespace.clone())
                .or_default()
                .insert(entry.identity.clone());
        }
    }
    writers
}

/// Successful writes of Secrets in the tenants' namespaces by the replicas: the target Secrets
/// (a create's audit entry has no name: it is in the body).
pub(crate) fn target_writes(cluster: &Cluster) -> usize {
    let audit = cluster.kube.audit();
    audit
        .iter()
        .filter(|e| is_object_write(e) && e.code < 300 && e.resource == "secrets")
        .filter(|e| e.namespace.starts_with("team-") && e.identity.starts_with("operator-"))
        .count()
}
