//! Caches that do not grow with what a tenant writes (issue 34, point 3): the operator's watch
//! stores keep a projection of each object, and the token and CA bundle values connections read
//! are bounded and shared. The attacker writes what the API server admits and the stores once
//! kept whole: Secrets carrying 250 KiB of annotations, FerrVaultSecrets with maximal specs
//! (every list at its CRD bound, about 1 MiB each), connections reading a 1 MiB CA bundle (and a
//! 1 MiB token). Each attack is sized so that without its protection the operator's peak RSS
//! grows past the yardstick's allowance ([`bounds`](crate::harness::bounds)).

use serde_json::{Value, json};

use crate::harness::{
    ATTACKER, ATTACKER_TOKEN, Answer, Launch, Listener, PLAYGROUND_VAULT, World, aimed_at,
    attacker_connection,
    bounds::{Baseline, victim_keeps_syncing},
    finish,
    tls_front::TlsFront,
    victim_syncs,
};

/// Secrets the attacker fills with annotations: 200 × 250 KiB, 50 MiB of text the Secret store
/// kept whole before the projection.
const ANNOTATED_SECRETS: usize = 200;

/// FerrVaultSecrets with a maximal spec: 30 × about 1 MiB, each about 1.2 MiB of strings once
/// decoded: kept whole, they alone are more than the yardstick's allowance.
const MAXIMAL_SECRETS: usize = 30;

/// Connections reading one 1 MiB CA bundle, each at its own URL: 60 endpoints, each of which
/// kept its own copy of the bundle before the bound.
const BUNDLE_READERS: usize = 60;

/// Connections sharing one CA bundle within the bound, at one URL.
const BUNDLE_SHARERS: usize = 10;

/// The test CA, as PEM text.
fn ca_pem() -> String {
    String::from_utf8(TlsFront::CA_PEM.to_vec()).expect("PEM is text")
}

/// The test CA repeated to at most `bytes`: a bundle every certificate of which parses.
fn bundle_of(bytes: usize) -> String {
    let ca = ca_pem();
    ca.repeat(bytes / ca.len())
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_carrying_250_kib_of_annotations_should_not_grow_the_operators_memory() {
    let world = World::start().await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);

    let attacker = world.attacker();
    attacker_connection(&world, "fv", &world.fv.url()).await;
    // A connection whose token Secret comes last: once it is reachable, the Secret watch has
    // seen every Secret created before that one.
    attacker
        .connection(
            "last",
            json!({ "url": world.fv.url(), "tokenSecretRef": { "name": "last-token", "key": "token" } }),
        )
        .await;
    attacker.wait_connection("last", "TokenUnreadable").await;
    let notes = json!({ "metadata": { "annotations": { "example.com/notes": "n".repeat(250 * 1024) } } });
    for i in 0..ANNOTATED_SECRETS {
        attacker
            .put_secret_as(&format!("bulk-{i}"), notes.clone(), &[("k", "v")])
            .await;
    }
    attacker.ferrvault_secret("evil", aimed_at("fv", "bulk-0")).await;
    attacker
        .put_secret("last-token", &[("token", ATTACKER_TOKEN)])
        .await;

    victim_keeps_syncing(&world, "during-attack").await;
    attacker.wait_connection("last", "Reachable").await;
    attacker.wait_secret("evil", "TargetNotOwned").await;
    baseline.assert_held(&mut operator).await;
    finish(&world, &operator, &[]).await;
}

/// A FerrVaultSecret spec through connection `fv` into Secret `taken` whose lists are at their
/// CRD bounds (1,000 selected names of 253 characters, three `base64Decode` steps naming as
/// many keys): about 1 MiB, under the API server's object limit.
fn maximal_spec() -> Value {
    let names: Vec<String> = (0..1000).map(|i| format!("{i:0>253}")).collect();
    let decode = json!({ "type": "base64Decode", "keys": names });
    json!({
        "connectionRef": { "name": "fv" },
        "vault": PLAYGROUND_VAULT,
        "target": { "name": "taken" },
        "selector": { "names": names },
        "transforms": [decode, decode, decode],
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn ferrvault_secrets_with_maximal_specs_should_not_grow_the_operators_memory() {
    let world = World::start().await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);

    let attacker = world.attacker();
    attacker_connection(&world, "fv", &world.fv.url()).await;
    attacker.put_secret("taken", &[("k", "v")]).await;
    let spec = maximal_spec();
    let names: Vec<String> = (0..MAXIMAL_SECRETS)
        .map(|i| format!("big-{i}"))
        .chain(["evil".to_owned()])
        .collect();
    for name in &names {
        attacker.ferrvault_secret(name, spec.clone()).await;
    }

    victim_keeps_syncing(&world, "during-attack").await;
    // Refused before any reveal, with no timer: each pass ran once.
    for name in &names {
        attacker.wait_secret(name, "TargetNotOwned").await;
    }
    baseline.assert_held(&mut operator).await;
    finish(&world, &operator, &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_reading_a_1_mib_ca_bundle_should_be_refused_and_a_bundle_within_the_bound_shared() {
    let world = World::start().await;
    let listener = Listener::start(Answer::Ok).await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);

    let attacker = world.attacker();
    attacker.put_secret("token", &[("token", ATTACKER_TOKEN)]).await;
    attacker
        .put_secret("bundle", &[("ca.crt", &bundle_of(1000 * 1024))])
        .await;
    let reading = |url: String, bundle: &str| {
        json!({
            "url": url,
            "tokenSecretRef": { "name": "token", "key": "token" },
            "caBundleSecretRef": { "name": bundle, "key": "ca.crt" },
        })
    };
    for i in 0..BUNDLE_READERS {
        let url = format!("{}/reader-{i}", listener.url());
        attacker
            .connection(&format!("reader-{i}"), reading(url, "bundle"))
            .await;
    }
    attacker
        .ferrvault_secret("evil", aimed_at("reader-0", "evil"))
        .await;
    // A 1 MiB token too: refused at its own bound.
    attacker
        .put_secret("huge-token", &[("token", &"t".repeat(1024 * 1024))])
        .await;
    attacker
        .connection(
            "huge-token",
            json!({ "url": listener.url(), "tokenSecretRef": { "name": "huge-token", "key": "token" } }),
        )
        .await;

    victim_keeps_syncing(&world, "during-attack").await;
    let refused = attacker.wait_connection("reader-0", "CaBundleUnreadable").await;
    assert!(
        refused.message.contains("over the bound of 64 KiB"),
        "names the bound: {}",
        refused.message
    );
    for i in 1..BUNDLE_READERS {
        attacker
            .wait_connection(&format!("reader-{i}"), "CaBundleUnreadable")
            .await;
    }
    attacker.wait_secret("evil", "CaBundleUnreadable").await;
    let refused = attacker.wait_connection("huge-token", "TokenUnreadable").await;
    assert!(
        refused.message.contains("over the bound of 4 KiB"),
        "names the bound: {}",
        refused.message
    );
    let gets = world
        .kube
        .audit()
        .into_iter()
        .filter(|e| {
            e.identity == world.operator_identity
                && e.verb == "get"
                && e.namespace == ATTACKER
                && e.name == "bundle"
        })
        .count();
    assert!(
        (1..=8).contains(&gets),
        "one read per version, not one per connection and pass ({gets} GETs)"
    );

    // Positive control: a bundle within the bound, shared by connections to one HTTPS URL.
    attacker
        .put_secret("small-bundle", &[("ca.crt", &bundle_of(64 * 1024))])
        .await;
    for i in 0..BUNDLE_SHARERS {
        attacker
            .connection(
                &format!("sharer-{i}"),
                reading(world.fv_https.url().to_owned(), "small-bundle"),
            )
            .await;
    }
    for i in 0..BUNDLE_SHARERS {
        attacker
            .wait_connection(&format!("sharer-{i}"), "Reachable")
            .await;
    }
    attacker
        .ferrvault_secret(
            "through-tls",
            json!({ "connectionRef": { "name": "sharer-0" }, "vault": PLAYGROUND_VAULT }),
        )
        .await;
    attacker.wait_secret("through-tls", "Synced").await;
    baseline.assert_held(&mut operator).await;
    listener.assert_untouched("the readers' URL");
    finish(&world, &operator, &[]).await;
}
