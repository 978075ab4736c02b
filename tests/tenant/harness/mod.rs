//! The tenant harness: a shared cluster (both simulators in the test process, RBAC enforced, one
//! namespace per tenant), the real operator binary as the platform team runs it, tenants acting
//! through their own restricted identities, listeners the attacker controls, and the checks every
//! attack ends with.
//!
//! - [`world::World`]: the simulators, the namespaces, an HTTPS front for FerrVault, the
//!   stand-in for the operator's ServiceAccount token ([`SA_TOKEN`]).
//! - [`rbac`]: each tenant's Role (its own FerrVaultConnections, FerrVaultSecrets and Secrets,
//!   nothing else) and the operator's identity with the chart's rendered RBAC.
//! - [`tenant::Tenant`]: what a tenant may create in its namespace and what it sees back.
//! - [`others`]: what other parties own in a tenant's namespace, and the byte-for-byte check.
//! - [`operator::Launch`] / [`operator::Operator`]: the binary, its flags, probes and `VmHWM`.
//! - [`listener::Listener`]: an attacker's TCP listener recording every byte, optionally a
//!   hostile FerrVault.
//! - [`finish`]: the operator is healthy, bounded in memory, was never refused by its RBAC, and
//!   nothing leaked anywhere.
//! - [`bounds`]: what an attack may cost the operator, measured around it (peak RSS over a
//!   baseline, no restart, another tenant still syncing within 10 s).
#![allow(dead_code)] // each attack file uses a different part

pub mod bounds;
pub mod listener;
pub mod operator;
pub mod others;
pub mod rbac;
pub mod tenant;
pub mod tls_front;
pub mod world;

// The chart rendered by the real `helm`, as the chart tests render it.
use ferrvault_testkit::{chart::render, leaks};

use k8s_openapi::api::events::v1::Event;
use kube::{Api, api::ListParams};

pub use listener::{Answer, Listener};
pub use operator::{Launch, Operator, PEAK_RSS_LIMIT_MIB};
pub use world::{ATTACKER_TOKEN, PLATFORM_TOKEN, VICTIM_TOKEN, World};

/// The attacker's namespace.
pub const ATTACKER: &str = "tenant-evil";
/// Another tenant's namespace, which must keep syncing whatever the attacker does.
pub const VICTIM: &str = "tenant-good";
/// The content of the stand-in for the operator's own ServiceAccount token; also the
/// projected token FerrVault accepts for [`CLUSTER_ID`].
pub const SA_TOKEN: &str = "eyJhbGciOiJSUzI1NiJ9.SA-TOKEN-STAND-IN-d41f7a0c.sig";
/// The cluster's ID registered in FerrVault.
pub const CLUSTER_ID: &str = "0b6f7e2c-1d2e-4f00-8a9b-0123456789ab";
/// FerrVault's organisation (cloud mode) and the project of every vault.
pub const ORG: &str = "acme";
pub const PROJECT: &str = "default";
/// The victim's vault and its one value.
pub const VICTIM_VAULT: &str = "victim-db";
pub const VICTIM_DB_URL: &str = "postgres://victim:TENANTCHECK-victim-pass@db:5432/app";
/// The attacker's own vault.
pub const PLAYGROUND_VAULT: &str = "playground";
/// Minted cluster tokens start with this.
pub const CLUSTER_TOKEN_PREFIX: &str = "ffclust_";

/// What must never reach an attacker's listener, a log, a status, an Event or a metric.
pub fn sensitive() -> Vec<&'static str> {
    vec![
        SA_TOKEN,
        "SA-TOKEN-STAND-IN",
        CLUSTER_TOKEN_PREFIX,
        VICTIM_TOKEN,
        ATTACKER_TOKEN,
        PLATFORM_TOKEN,
        VICTIM_DB_URL,
        "TENANTCHECK-victim-pass",
    ]
}

/// What the attacker's listeners must never receive: everything [`sensitive`] but the
/// attacker's own token, which its own connections send to its own hosts.
pub fn not_the_attackers() -> Vec<&'static str> {
    sensitive()
        .into_iter()
        .filter(|needle| *needle != ATTACKER_TOKEN)
        .collect()
}

/// The end of every attack: the operator answers `/healthz` 200 and stayed under
/// [`PEAK_RSS_LIMIT_MIB`], never panicked, none of its requests was refused by the chart's RBAC,
/// the attacker's namespace holds none of the victim's data, and nothing sensitive (plus
/// `extra`) is in the operator's log, `/metrics`, `/debug/*`, either tenant's statuses or any
/// Event.
pub async fn finish(world: &World, operator: &Operator, extra: &[&str]) {
    let (status, body) = operator.healthz().await;
    assert_eq!(status, 200, "/healthz after the attack:\n{body}");
    let peak = operator.peak_rss_mib();
    assert!(
        peak < PEAK_RSS_LIMIT_MIB,
        "peak RSS {peak:.1} MiB, over {PEAK_RSS_LIMIT_MIB} MiB"
    );
    let refused: Vec<String> = world
        .kube
        .audit()
        .into_iter()
        .filter(|e| e.identity == world.operator_identity && matches!(e.code, 401 | 403))
        // The path: the simulator audits a refused request without its resource attributes.
        .map(|e| format!("{} {} {}", e.code, e.verb, e.path))
        .collect();
    assert!(
        refused.is_empty(),
        "the chart's RBAC refused the operator: {refused:#?}"
    );
    for value in world.attacker().all_secret_values().await {
        let text = String::from_utf8_lossy(&value);
        assert!(
            !text.contains("TENANTCHECK-victim"),
            "the victim's data reached the attacker's namespace"
        );
    }
    let mut evidence = leaks::Evidence::default();
    let log = operator.log();
    assert!(!log.contains("panicked"), "the operator panicked:\n{log}");
    evidence.add("operator log", log);
    for (source, text) in operator.scrapes().await {
        evidence.add(source, text);
    }
    for tenant in [world.attacker(), world.victim()] {
        evidence.add(format!("{} statuses", tenant.namespace), tenant.statuses().await);
    }
    let events = Api::<Event>::all(world.admin.clone())
        .list(&ListParams::default())
        .await
        .expect("list Events");
    evidence.add(
        "Events",
        serde_json::to_string(&events.items).expect("Events serialise"),
    );
    let mut needles = sensitive();
    needles.extend(extra);
    evidence.assert_no_leaks(&needles);
}

/// The attacker's connection `name` to `url` (a FerrVault, or its listener: a hostile one) with
/// its own token, from Secret `<name>-token`.
pub async fn attacker_connection(world: &World, name: &str, url: &str) {
    let attacker = world.attacker();
    let token = format!("{name}-token");
    attacker.put_secret(&token, &[("token", ATTACKER_TOKEN)]).await;
    attacker
        .connection(
            name,
            serde_json::json!({ "url": url, "tokenSecretRef": { "name": token, "key": "token" } }),
        )
        .await;
}

/// A FerrVaultSecret spec reading the attacker's vault through `connection` into Secret `target`.
pub fn aimed_at(connection: &str, target: &str) -> serde_json::Value {
    serde_json::json!({
        "connectionRef": { "name": connection },
        "vault": PLAYGROUND_VAULT,
        "target": { "name": target },
    })
}

/// The attacker's positive control: FerrVaultSecret `name` through `connection` into a Secret
/// nobody else has, which syncs; returns the target's data.
pub async fn attacker_syncs(
    world: &World,
    connection: &str,
    name: &str,
) -> std::collections::BTreeMap<String, Vec<u8>> {
    let attacker = world.attacker();
    attacker.ferrvault_secret(name, aimed_at(connection, name)).await;
    attacker.wait_secret(name, "Synced").await;
    attacker
        .target(name)
        .await
        .expect("the attacker's own target exists")
}

/// The victim's healthy path: its token Secret (opted in as a credential), a ferrvault-mode
/// connection to `url` (with the test CA as `caBundleSecretRef` when `url` is the HTTPS front)
/// and a FerrVaultSecret; waits until the target holds the victim's value.
pub async fn victim_syncs(world: &World, url: &str) {
    let victim = world.victim();
    // Opted in as a credential, as `--require-credential-opt-in` asks (ignored without it).
    victim.put_credential("token", &[("token", VICTIM_TOKEN)]).await;
    let mut spec = serde_json::json!({
        "url": url,
        "tokenSecretRef": { "name": "token", "key": "token" },
    });
    if url.starts_with("https://") {
        let ca = String::from_utf8(tls_front::TlsFront::CA_PEM.to_vec()).expect("PEM is text");
        victim.put_credential("ca", &[("ca.crt", &ca)]).await;
        spec["caBundleSecretRef"] = serde_json::json!({ "name": "ca", "key": "ca.crt" });
    }
    victim.connection("fv", spec).await;
    // It names its key, so the answer its reveal leaves for its wave (see the FerrVault client's
    // single-flight) covers no later FerrVaultSecret that wants every key of the vault: such a
    // one's reveal reaches FerrVault, which `lease_loss.rs` holds in flight.
    let db = serde_json::json!({
        "connectionRef": { "name": "fv" },
        "vault": VICTIM_VAULT,
        "selector": { "names": ["DB_URL"] },
    });
    victim.ferrvault_secret("db", db).await;
    victim.wait_secret("db", "Synced").await;
    let target = victim.target("db").await.expect("the victim's target exists");
    assert_eq!(
        target.get("DB_URL").map(Vec::as_slice),
        Some(VICTIM_DB_URL.as_bytes()),
        "the victim's target holds its value"
    );
}

/// The victim's cluster-identity path: a cloud-mode connection to `url` opting in with
/// `oidc: {}` and a FerrVaultSecret; waits until the target holds the victim's value.
pub async fn victim_syncs_with_the_cluster_identity(world: &World, url: &str) {
    let victim = world.victim();
    victim
        .connection(
            "fv-cluster",
            serde_json::json!({ "mode": "cloud", "url": url, "organization": ORG, "oidc": {} }),
        )
        .await;
    victim
        .sync("db-cluster", "fv-cluster", VICTIM_VAULT, Some(PROJECT))
        .await;
    victim.wait_secret("db-cluster", "Synced").await;
    let target = victim.target("db-cluster").await.expect("the target exists");
    assert_eq!(
        target.get("DB_URL").map(Vec::as_slice),
        Some(VICTIM_DB_URL.as_bytes()),
        "the victim's target holds its value"
    );
}
