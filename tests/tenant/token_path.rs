//! `spec.oidc.tokenPath` and `spec.oidc.clusterID` as attack vectors: a tenant pointing the
//! operator at its own ServiceAccount token (cluster takeover), at `/dev/zero` (OOM), at a FIFO
//! (a hung read) or at a 1 GiB file. Those fields are the operator's now: a tenant's value is
//! compared, never read. And the operator's own token path, misconfigured at those files, fails
//! closed within bounds.

use std::{os::unix::fs::symlink, path::Path, process::Command};

use serde_json::json;

use crate::harness::{
    Answer, CLUSTER_ID, Launch, Listener, ORG, PROJECT, VICTIM_VAULT, World, finish, victim_syncs,
    victim_syncs_with_the_cluster_identity,
};

/// A FIFO at `path` (no writer will ever open it).
fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// A sparse 1 GiB file at `path`.
fn one_gib_file(path: &Path) {
    std::fs::File::create(path)
        .and_then(|file| file.set_len(1 << 30))
        .expect("sparse 1 GiB file");
}

/// A cloud-mode connection spec to `url` whose Go-era `oidc` fields are `oidc`.
fn go_era(url: &str, oidc: serde_json::Value) -> serde_json::Value {
    json!({ "mode": "cloud", "url": url, "organization": ORG, "oidc": oidc })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_path_at_the_service_account_token_should_be_refused_with_nothing_read_or_sent() {
    let world = World::start().await;
    let listener = Listener::start(Answer::Ok).await;
    let operator = Launch::new()
        .insecure_http()
        .cluster_identity(&world.projected_token_path(), &[&world.fv.url()])
        .start(&world);
    let attacker = world.attacker();
    let sa_token = world.sa_token_path().display().to_string();
    attacker
        .connection(
            "steal",
            go_era(
                listener.url(),
                json!({ "clusterID": CLUSTER_ID, "tokenPath": sa_token }),
            ),
        )
        .await;
    attacker.sync("loot", "steal", VICTIM_VAULT, Some(PROJECT)).await;
    attacker
        .connection(
            "other-cluster",
            go_era(
                &world.fv.url(),
                json!({ "clusterID": "11111111-2222-3333-4444-555555555555" }),
            ),
        )
        .await;

    let refused = attacker.wait_connection("steal", "ClusterIdentityMismatch").await;
    assert!(
        refused.message.contains("spec.oidc.tokenPath") && !refused.message.contains(&sa_token),
        "names the field, not the path: {}",
        refused.message
    );
    attacker.wait_secret("loot", "ClusterIdentityMismatch").await;
    let refused = attacker
        .wait_connection("other-cluster", "ClusterIdentityMismatch")
        .await;
    assert!(
        refused.message.contains("spec.oidc.clusterID"),
        "{}",
        refused.message
    );

    // Positive control: the operator's own identity, at its trusted URL, does sync.
    victim_syncs_with_the_cluster_identity(&world, &world.fv.url()).await;
    listener.assert_untouched("the attacker's listener");
    finish(&world, &operator, &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn token_paths_at_dev_zero_a_fifo_and_a_1_gib_file_should_be_refused_without_being_read() {
    let world = World::start().await;
    let fifo = world.scratch().join("fifo");
    mkfifo(&fifo);
    let huge = world.scratch().join("huge");
    one_gib_file(&huge);
    let operator = Launch::new()
        .insecure_http()
        .cluster_identity(&world.projected_token_path(), &[&world.fv.url()])
        .start(&world);
    let attacker = world.attacker();
    let paths = [Path::new("/dev/zero"), &fifo, &huge];
    for (i, path) in paths.iter().enumerate() {
        attacker
            .connection(
                &format!("c{i}"),
                go_era(
                    &world.fv.url(),
                    json!({ "tokenPath": path.display().to_string() }),
                ),
            )
            .await;
        attacker
            .sync(&format!("s{i}"), &format!("c{i}"), VICTIM_VAULT, Some(PROJECT))
            .await;
    }
    for i in 0..paths.len() {
        attacker
            .wait_connection(&format!("c{i}"), "ClusterIdentityMismatch")
            .await;
        attacker
            .wait_secret(&format!("s{i}"), "ClusterIdentityMismatch")
            .await;
    }
    // Positive control, and another tenant unaffected: both paths of the victim sync.
    victim_syncs(&world, &world.fv.url()).await;
    victim_syncs_with_the_cluster_identity(&world, &world.fv.url()).await;
    finish(&world, &operator, &[]).await;
}

/// Points the symlink `link` at `target`, atomically (as the kubelet swaps projected tokens).
fn repoint(link: &Path, target: &Path) {
    let staged = link.with_extension("next");
    let _ = std::fs::remove_file(&staged);
    symlink(target, &staged).expect("symlink");
    std::fs::rename(&staged, link).expect("swap the link");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_operators_own_token_at_dev_zero_a_fifo_or_a_1_gib_file_should_fail_closed_then_recover() {
    let world = World::start().await;
    let fifo = world.scratch().join("fifo");
    mkfifo(&fifo);
    let huge = world.scratch().join("huge");
    one_gib_file(&huge);
    let link = world.scratch().join("token-link");
    repoint(&link, Path::new("/dev/zero"));
    let operator = Launch::new()
        .insecure_http()
        .cluster_identity(&link, &[&world.fv.url()])
        .start(&world);
    let victim = world.victim();
    let spec = json!({ "mode": "cloud", "url": world.fv.url(), "organization": ORG, "oidc": {} });
    victim.connection("fv-cluster", spec).await;
    victim
        .wait_connection_saying("fv-cluster", "TokenUnreadable", "a device")
        .await;
    // Each swap is read on the next pass (a spec edit drops the cached state and reconciles).
    for (i, (target, says)) in [(fifo.as_path(), "a FIFO"), (huge.as_path(), "1073741824 bytes")]
        .into_iter()
        .enumerate()
    {
        repoint(&link, target);
        victim
            .edit_connection(
                "fv-cluster",
                json!({ "oidc": { "audience": format!("edit-{i}") } }),
            )
            .await;
        victim
            .wait_connection_saying("fv-cluster", "TokenUnreadable", says)
            .await;
        let (status, body) = operator.healthz().await;
        assert_eq!(status, 200, "after {says}:\n{body}");
    }
    // Positive control: a real token at the same path, and the identity works again.
    repoint(&link, &world.projected_token_path());
    victim
        .edit_connection("fv-cluster", json!({ "oidc": { "audience": "fixed" } }))
        .await;
    victim.wait_connection("fv-cluster", "Reachable").await;
    victim
        .sync("db-cluster", "fv-cluster", VICTIM_VAULT, Some(PROJECT))
        .await;
    victim.wait_secret("db-cluster", "Synced").await;
    finish(&world, &operator, &[]).await;
}
