//! End-to-end: the per-CR stamps (`ferrvault.com/content-hash.<uid>`) a FerrVaultSecret left on
//! a workload's pod template once it is deleted, or no longer lists the workload, never restart
//! the workload on their own (removing an annotation from a pod template is a rollout) and go
//! with the next restart the operator makes of that workload anyway.

use std::collections::BTreeMap;

use crate::operator_support::*;
use ferrvault_operator::api::{
    FerrVaultSecretSpec, RolloutTarget, WorkloadKind, names::workload_content_hash_annotation,
};
use k8s_openapi::api::apps::v1::Deployment;
use kube::{
    ResourceExt,
    api::{DeleteParams, Patch, PatchParams},
};
use serde_json::json;

/// FerrVaultSecret spec reading `prod` every second and restarting Deployment `web`.
fn restarting_web() -> FerrVaultSecretSpec {
    let mut spec = secret_spec("conn", "prod");
    spec.refresh_interval = "1s".into();
    spec.rollout_restart = vec![RolloutTarget {
        kind: WorkloadKind::Deployment,
        name: "web".into(),
    }];
    spec
}

/// `prod`'s content after `DB_URL` became `db_url`, as the operator hashes it.
fn prod_with(db_url: &str) -> BTreeMap<String, Vec<u8>> {
    BTreeMap::from([
        ("API_KEY".to_owned(), API_KEY.as_bytes().to_vec()),
        ("DB_URL".to_owned(), db_url.as_bytes().to_vec()),
    ])
}

/// Changes `prod`'s `DB_URL` to `db_url`; waits until `web` carries `stamps` at its new hash and
/// returns `web` then.
async fn web_restarted_for(h: &Harness, db_url: &str, stamps: &[&str]) -> Deployment {
    h.fv.put_secret("prod", "DB_URL", db_url);
    let hash = h.hash_of(&prod_with(db_url)).await;
    h.eventually("web restarted by every FerrVaultSecret listing it", || async {
        let web = h.deployments().get("web").await.ok()?;
        stamps
            .iter()
            .all(|stamp| template_annotation(&web, stamp).as_deref() == Some(hash.as_str()))
            .then_some(web)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stamps_no_longer_ours_should_go_with_the_next_restart_and_never_cause_one() {
    let mut settings = test_settings();
    // Every FerrVaultSecret restarts `web` for each change, so each leaves its stamp at once.
    settings.rollout_floor = std::time::Duration::ZERO;
    let h = Harness::start_with(settings).await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.create_deployment("web").await;
    let mut stamps = Vec::new();
    for name in ["kept", "unlisting", "deleted"] {
        let cr = h.create_secret(name, restarting_web()).await;
        stamps.push(workload_content_hash_annotation(
            &cr.uid().expect("a stored object has a UID"),
        ));
        h.wait_secret_reason(name, "Synced").await;
    }
    let [kept, unlisting, deleted] = [&stamps[0], &stamps[1], &stamps[2]].map(String::as_str);
    web_restarted_for(&h, "postgres://app@db2:5432/shop", &[kept, unlisting, deleted]).await;

    // One FerrVaultSecret stops listing `web`, another is deleted: `web` is not touched.
    let web = h.deployments().get("web").await.unwrap();
    let unlisted = h
        .fvs()
        .patch(
            "unlisting",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"rolloutRestart": []}})),
        )
        .await
        .unwrap();
    h.fvs().delete("deleted", &DeleteParams::default()).await.unwrap();
    h.eventually("the edit synced and the deletion done", || async {
        let status = h.fvs().get("unlisting").await.ok()?.status?;
        let synced = status.observed_generation == unlisted.metadata.generation;
        (synced && h.fvs().get_opt("deleted").await.ok()?.is_none()).then_some(())
    })
    .await;
    let start = h.reveals();
    h.eventually("three more passes", || async {
        (h.reveals() >= start + 3).then_some(())
    })
    .await;
    assert_eq!(
        h.deployments().get("web").await.unwrap(),
        web,
        "removing the stamps alone would restart web: it is left as it is"
    );

    // The next change restarts `web` for `kept`, and that same restart removes the other stamps.
    let restarted = web_restarted_for(&h, "postgres://app@db3:5432/shop", &[kept]).await;
    assert_eq!(template_annotation(&restarted, unlisting), None, "{restarted:?}");
    assert_eq!(template_annotation(&restarted, deleted), None, "{restarted:?}");
    assert_eq!(
        template_annotation(&restarted, "owner").as_deref(),
        Some("team-shop"),
        "annotations not ours are kept"
    );
    h.finish().await;
}
