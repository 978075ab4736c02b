//! SSRF from the operator's network position: a tenant names as FerrVault what only the operator
//! can reach — an in-cluster TLS service (the cluster CA is public, `kube-root-ca.crt` is in every
//! namespace), the API server, the cloud's metadata service, the operator's own metrics server —
//! by IP literal or by a host name resolving there. The operator is allowed FerrVault's address
//! (127.0.0.1) only, as an administrator would allow FerrVault's; the Kubernetes simulator listens
//! on 127.0.0.3 and the in-cluster service stand-in on 127.0.0.2. Each attacker URL is
//! `Ready=False/EgressDenied`, naming the rule and the address, on the connection and its
//! FerrVaultSecret, and nothing is connected to.

use crate::harness::{
    Answer, Launch, Listener, World, aimed_at, attacker_connection, attacker_syncs,
    bounds::{Baseline, victim_keeps_syncing},
    finish,
    listener::REVEAL_PATH,
    tenant::Tenant,
    victim_syncs,
};

/// An attacker URL and what its refusal must say.
struct Target {
    name: &'static str,
    url: String,
    says: Vec<String>,
}

impl Target {
    fn new(name: &'static str, url: String, says: &[&str]) -> Target {
        Target {
            name,
            url,
            says: says.iter().map(|s| (*s).to_owned()).collect(),
        }
    }
}

/// Connection `target.name` to `target.url` and a FerrVaultSecret of the same name through it.
async fn aim(world: &World, attacker: &Tenant, target: &Target) {
    attacker_connection(world, target.name, &target.url).await;
    attacker
        .ferrvault_secret(target.name, aimed_at(target.name, target.name))
        .await;
}

/// The connection and the FerrVaultSecret `target.name` are EgressDenied, the connection's
/// message naming the rule and the address.
async fn refused(attacker: &Tenant, target: &Target) {
    let condition = attacker.wait_connection(target.name, "EgressDenied").await;
    for fragment in target
        .says
        .iter()
        .map(String::as_str)
        .chain(["no connection was made"])
    {
        assert!(
            condition.message.contains(fragment),
            "{}: {fragment:?} not in {:?}",
            target.name,
            condition.message
        );
    }
    attacker.wait_secret(target.name, "EgressDenied").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn urls_leading_where_only_the_operator_reaches_should_be_egress_denied_and_connect_nowhere() {
    let world = World::start().await;
    let service = Listener::start_on([127, 0, 0, 2], Answer::Ok).await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);

    let (service_at, kube, metrics) = (
        service.url().trim_start_matches("http://").to_owned(),
        world.kube.addr(),
        operator.at.metrics.port(),
    );
    let targets = [
        Target::new(
            "in-cluster-service",
            format!("https://{service_at}"),
            &[
                &format!("address {service_at}"),
                "egress policy: a loopback address",
            ],
        ),
        Target::new(
            "api-server",
            world.kube.url(),
            &[
                &format!("address {kube}"),
                "egress policy: the Kubernetes API server",
            ],
        ),
        Target::new(
            "metadata",
            "http://169.254.169.254".into(),
            &[
                "address 169.254.169.254:80",
                "egress policy: a cloud metadata address",
            ],
        ),
        Target::new(
            "metadata-mapped",
            "http://[::ffff:169.254.169.254]/latest".into(),
            &[
                "address 169.254.169.254:80",
                "egress policy: a cloud metadata address",
            ],
        ),
        Target::new(
            "own-metrics",
            format!("http://127.0.0.1:{metrics}"),
            &[
                &format!("address 127.0.0.1:{metrics}"),
                "egress policy: one of the operator's own servers",
            ],
        ),
        Target::new(
            "own-metrics-by-name",
            format!("http://localhost:{metrics}"),
            &[
                &format!("localhost resolves to 127.0.0.1:{metrics}"),
                "egress policy: one of the operator's own servers",
            ],
        ),
    ];
    let attacker = world.attacker();
    for target in &targets {
        aim(&world, &attacker, target).await;
    }
    victim_keeps_syncing(&world, "during-attack").await;
    for target in &targets {
        refused(&attacker, target).await;
    }

    service.assert_untouched("the in-cluster service");
    let reached_the_api_server: Vec<String> = world
        .kube
        .audit()
        .into_iter()
        .filter(|e| e.path == "/healthz" || e.path.ends_with(REVEAL_PATH))
        .map(|e| format!("{} {} by {}", e.verb, e.path, e.identity))
        .collect();
    assert!(
        reached_the_api_server.is_empty(),
        "FerrVault calls reached the API server: {reached_the_api_server:?}"
    );
    // Positive control: the attacker's own FerrVault, at the allowed address, syncs.
    attacker_connection(&world, "direct", &world.fv.url()).await;
    attacker_syncs(&world, "direct", "direct").await;
    baseline.assert_held(&mut operator).await;
    finish(&world, &operator, &[]).await;
}
