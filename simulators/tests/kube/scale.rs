//! 10,000 objects of one kind: `kube_runtime::watcher` lists them in pages and then
//! keeps watching, a metadata-only paged list returns every one of them, and one
//! deletecollection removes them all.

use crate::kube_sim_support::{sim, within_for};
use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api,
    api::{DeleteParams, ListParams, PostParams},
    runtime::watcher::{self, Event},
};
use serde_json::json;
use std::time::Duration;

const OBJECTS: usize = 10_000;
/// Only catches hangs: a debug build on a busy 2-core machine needs ~15s for all of it.
const LIMIT: Duration = Duration::from_secs(180);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_secrets_should_be_listed_in_pages_and_then_watched() {
    let sim = sim().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    within_for(
        LIMIT,
        "creating 10,000 Secrets",
        stream::iter(0..OBJECTS)
            .map(|i| {
                let api = secrets.clone();
                async move {
                    let s: Secret = serde_json::from_value(
                        json!({"metadata": {"name": format!("s-{i:05}")}, "data": {"k": "dg=="}}),
                    )
                    .expect("secret");
                    api.create(&PostParams::default(), &s).await
                }
            })
            .buffer_unordered(32)
            .try_for_each(|_| async { Ok(()) }),
    )
    .await
    .expect("all created");

    let pages = within_for(LIMIT, "a metadata-only paged list", async {
        let mut lp = ListParams::default().limit(1000);
        let (mut names, mut pages) = (Vec::new(), 0);
        loop {
            let page = secrets.list_metadata(&lp).await.expect("page");
            pages += 1;
            names.extend(page.items.into_iter().filter_map(|m| m.metadata.name));
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(c) => lp = lp.continue_token(&c),
                None => break (names, pages),
            }
        }
    })
    .await;
    assert_eq!((pages.0.len(), pages.1), (OBJECTS, 10));

    let mut events = watcher::watcher(secrets.clone(), watcher::Config::default()).boxed();
    let initial = within_for(LIMIT, "the watcher's initial paged list", async {
        let mut applied = 0;
        loop {
            match events
                .try_next()
                .await
                .expect("no watcher error")
                .expect("stream continues")
            {
                Event::InitApply(_) => applied += 1,
                Event::InitDone => break applied,
                Event::Init | Event::Apply(_) | Event::Delete(_) => {}
            }
        }
    })
    .await;
    assert_eq!(initial, OBJECTS);
    let s: Secret = serde_json::from_value(json!({"metadata": {"name": "late"}})).expect("secret");
    secrets.create(&PostParams::default(), &s).await.expect("create");
    let next = within_for(LIMIT, "the watcher sees the next change", events.try_next())
        .await
        .expect("no error")
        .expect("event");
    assert!(
        matches!(&next, Event::Apply(s) if s.metadata.name.as_deref() == Some("late")),
        "{next:?}"
    );

    within_for(
        LIMIT,
        "deleting all 10,001 in one deletecollection",
        secrets.delete_collection(&DeleteParams::default(), &ListParams::default()),
    )
    .await
    .expect("deletecollection");
    let left = secrets.list(&ListParams::default().limit(1)).await.expect("list");
    assert!(left.items.is_empty(), "every Secret is gone");
}
