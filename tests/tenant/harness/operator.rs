//! The real `ferrvault-operator run` process the tenants face: its flags, its probes, its peak
//! memory (`VmHWM` of `/proc/<pid>/status`) and everything it printed.

use std::{path::Path, time::Duration};

use ferrvault_sim::testkit::{
    http::get,
    poll_until,
    process::{Addresses, Spawned},
};
use ferrvault_testkit::{proc_stats, process::run_command};

use super::{rbac::OPERATOR_NAMESPACE, world::World};

/// [`run_command`] (every server on a free loopback port, JSON logs) with leader election in the release
/// namespace as the chart runs it, FerrVault's address allowed, and what the test adds.
pub struct Launch {
    args: Vec<String>,
    env: Vec<(String, String)>,
}

impl Launch {
    /// No cluster identity, plain http refused: the chart's defaults, but for a refresh floor of
    /// 1s. The simulators and the HTTPS front stand for a FerrVault outside the cluster but listen
    /// on 127.0.0.1, which the egress policy refuses by default: that one address is allowed, as an
    /// administrator would allow FerrVault's (`ferrvault.allowedCIDRs`). The rest of loopback stays
    /// refused: the Kubernetes simulator (127.0.0.3) and the stand-ins for in-cluster services
    /// listen there.
    pub fn new() -> Launch {
        let mut args: Vec<String> = [
            "--log-level=info,ferrvault_operator=debug",
            "--shutdown-grace-period=5s",
            "--leader-elect",
            "--ferrvault-allowed-cidrs=127.0.0.1/32",
        ]
        .map(str::to_owned)
        .into();
        args.push(format!("--leader-elect-namespace={OPERATOR_NAMESPACE}"));
        // The attacks refresh every second (a hostile FerrVault changing values each second):
        // below the chart's 30s floor, lowered here explicitly; `min_refresh_interval` sets it.
        args.push("--min-refresh-interval=1s".into());
        Launch {
            args,
            // The chart sets it from the downward API; the content-hash key lives there.
            env: vec![("POD_NAMESPACE".into(), OPERATOR_NAMESPACE.into())],
        }
    }

    /// `--min-refresh-interval` (1s unless set; the last value of a flag wins).
    pub fn min_refresh_interval(mut self, value: &str) -> Launch {
        self.args.push(format!("--min-refresh-interval={value}"));
        self
    }

    /// `--namespace-write-qps` and `--namespace-write-burst`: each namespace's write budget.
    pub fn namespace_write_budget(mut self, qps: f64, burst: u32) -> Launch {
        self.args.extend([
            format!("--namespace-write-qps={qps}"),
            format!("--namespace-write-burst={burst}"),
        ]);
        self
    }

    /// `--allow-insecure-http`: the FerrVault simulator and the attacker's listeners speak http.
    pub fn insecure_http(mut self) -> Launch {
        self.args.push("--allow-insecure-http".into());
        self
    }

    /// `--hint-bind-address` on a free loopback port (`--hint-secret-name` keeps its default):
    /// the change-hint endpoint ([`Operator::hint_url`]).
    pub fn hints(mut self) -> Launch {
        self.args.push("--hint-bind-address=127.0.0.1:0".into());
        self
    }

    /// `--require-credential-opt-in`: a connection uses only Secrets opted in as credentials.
    pub fn require_credential_opt_in(mut self) -> Launch {
        self.args.push("--require-credential-opt-in".into());
        self
    }

    /// The operator's cluster identity: cluster [`super::CLUSTER_ID`], its projected token at
    /// `token_path`, sent only to `trusted` base URLs.
    pub fn cluster_identity(mut self, token_path: &Path, trusted: &[&str]) -> Launch {
        self.args.extend([
            format!("--oidc-cluster-id={}", super::CLUSTER_ID),
            format!("--oidc-token-path={}", token_path.display()),
            format!("--oidc-trusted-urls={}", trusted.join(",")),
        ]);
        self
    }

    /// One replica of several: its `POD_NAME` (the chart's downward API), its Lease identity.
    pub fn replica(mut self, pod_name: &str) -> Launch {
        self.env.push(("POD_NAME".into(), pod_name.into()));
        self
    }

    /// Lease timings short enough for a test, with the margin `run` requires: lease duration
    /// [`LEASE_DURATION`], renew deadline [`RENEW_DEADLINE`], retry period 1s.
    pub fn short_lease(mut self) -> Launch {
        self.args.extend([
            format!("--leader-elect-lease-duration={}s", LEASE_DURATION.as_secs()),
            format!("--leader-elect-renew-deadline={}s", RENEW_DEADLINE.as_secs()),
            "--leader-elect-retry-period=1s".into(),
        ]);
        self
    }

    /// Makes `ca_file` the operator's system roots (`SSL_CERT_FILE`), as an administrator
    /// installs a private CA in the image: a trusted URL needs no tenant CA bundle.
    pub fn system_roots(mut self, ca_file: &Path) -> Launch {
        self.env
            .push(("SSL_CERT_FILE".into(), ca_file.display().to_string()));
        self
    }

    /// Starts the binary against `world`'s Kubernetes as the chart's ServiceAccount
    /// ([`World::operator_identity`]).
    pub fn start(self, world: &World) -> Operator {
        let mut command = run_command(world.kubeconfig(&world.operator_identity), &[]);
        command.args(&self.args).envs(self.env);
        let mut spawned = Spawned::start(command);
        let at = spawned.addresses();
        Operator { spawned, at }
    }
}

/// A running operator process.
pub struct Operator {
    spawned: Spawned,
    pub at: Addresses,
}

/// Lease duration of [`Launch::short_lease`].
pub const LEASE_DURATION: Duration = Duration::from_secs(4);
/// Renew deadline of [`Launch::short_lease`]: a leader's fence closes this long after its last
/// successful Lease write.
pub const RENEW_DEADLINE: Duration = Duration::from_secs(3);

/// The peak resident memory of an operator that has started and synced a tenant (debug build):
/// 43.1 to 43.9 MiB over the 29 attacks of the tenant suite that take a
/// [`Baseline`](super::bounds::Baseline), measured at `ff9dc52` (about 37 MiB when the limit below
/// was first set).
const SYNCED_PEAK_RSS_MIB: f64 = 44.0;

/// The peak resident memory a healthy operator stays under in these tests, whatever the attack: a
/// synced operator's peak plus the
/// [`ATTACK_RSS_ALLOWANCE_MIB`](super::bounds::ATTACK_RSS_ALLOWANCE_MIB) any attack may add (each
/// attack test checks that against its own baseline too).
pub const PEAK_RSS_LIMIT_MIB: f64 = SYNCED_PEAK_RSS_MIB + super::bounds::ATTACK_RSS_ALLOWANCE_MIB;

impl Operator {
    /// `GET /healthz`: `(status, body)`.
    pub async fn healthz(&self) -> (u16, String) {
        get(&format!("http://{}/healthz", self.at.probes)).await
    }

    /// Its role, from `/readyz?verbose`: `Some("leader")`, `Some("standby")`, `None` if unknown.
    pub async fn role(&self) -> Option<String> {
        let (_, body) = get(&format!("http://{}/readyz?verbose", self.at.probes)).await;
        body.lines()
            .find_map(|line| line.strip_prefix("[+]role ok: "))
            .map(str::to_owned)
    }

    /// How many controllers run a work queue (`/debug/queue`): none on a standby whose
    /// controllers stopped.
    pub async fn running_queues(&self) -> usize {
        let admin = self.at.admin.expect("the admin server is enabled");
        let (_, body) = get(&format!("http://{admin}/debug/queue")).await;
        let document: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        document["controllers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["active"] == true || !c["keys"].is_null())
            .count()
    }

    /// Freezes the process (SIGSTOP), as a long GC pause or a frozen VM would.
    pub fn pause(&self) {
        self.spawned.sigstop();
    }

    /// Lets a paused process run again (SIGCONT).
    pub fn resume(&self) {
        self.spawned.sigcont();
    }

    /// Whether the process the test started is still running (it never exited, so it was
    /// never restarted).
    pub fn is_running(&mut self) -> bool {
        self.spawned.running()
    }

    /// Peak resident memory so far (`VmHWM`), MiB.
    pub fn peak_rss_mib(&self) -> f64 {
        proc_stats::sample(self.spawned.pid())
            .expect("the operator is running")
            .peak_rss_mib()
    }

    /// `/metrics`, `/debug/actors` and `/debug/queue`, labelled, for the leak scan.
    pub async fn scrapes(&self) -> Vec<(String, String)> {
        let admin = self.at.admin.expect("the admin server is enabled");
        let mut scrapes = Vec::new();
        for url in [
            format!("http://{}/metrics", self.at.metrics),
            format!("http://{admin}/debug/actors"),
            format!("http://{admin}/debug/queue"),
        ] {
            let (_, body) = get(&url).await;
            scrapes.push((url, body));
        }
        scrapes
    }

    /// Waits until the work-queue key `key` (`controller:namespace/name`) has no timer: idle,
    /// or forgotten by the queue (per `/debug/queue`). Only an event will run it again.
    pub async fn wait_no_timer(&self, key: &str) {
        self.wait_key(key, "no timer", |state| matches!(state, None | Some("idle")))
            .await;
    }

    /// Waits until the work-queue key `key` has a retry or refresh scheduled.
    pub async fn wait_timer(&self, key: &str) {
        self.wait_key(key, "a timer", |state| state == Some("delayed"))
            .await;
    }

    async fn wait_key(&self, key: &str, what: &str, accept: impl Fn(Option<&str>) -> bool) {
        let admin = self.at.admin.expect("the admin server is enabled");
        let url = format!("http://{admin}/debug/queue");
        poll_until(&format!("{key} with {what}"), Duration::from_secs(20), || async {
            let (_, body) = get(&url).await;
            let document: serde_json::Value = serde_json::from_str(&body).map_err(|e| e.to_string())?;
            let state = document["controllers"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|c| c["keys"].as_array().cloned().unwrap_or_default())
                .find(|k| k["key"] == key)
                .map(|k| k["state"].as_str().unwrap_or_default().to_owned());
            if accept(state.as_deref()) {
                Ok(())
            } else {
                Err(format!("state {state:?}"))
            }
        })
        .await;
    }

    /// `http://<address>/hooks/ferrvault` of the hint endpoint, from the `http servers listening`
    /// log line (started with [`Launch::hints`]).
    pub fn hint_url(&self) -> String {
        let log = self.log();
        let line = log
            .lines()
            .find(|line| line.contains("http servers listening"))
            .expect("the servers' log line");
        let json: serde_json::Value = serde_json::from_str(line).expect("a JSON log line");
        let address = json["hints"].as_str().expect("a hints address");
        assert_ne!(address, "disabled", "the hint endpoint is enabled");
        format!("http://{address}/hooks/ferrvault")
    }

    /// Everything it printed so far.
    pub fn log(&self) -> String {
        self.spawned.output()
    }
}
