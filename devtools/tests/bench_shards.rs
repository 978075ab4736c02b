//! `ferrvault-dev bench shards` (issue 39 point 6) reports what was done, at a tiny size (200
//! objects over 20 namespaces, 2 replicas x 4 shards): every object Ready, a peak RSS for each
//! replica, FerrVault requests that add up to the simulator's own count, and after the SIGKILL
//! every shard of the killed replica held again by the survivor, which then stores every
//! object; the moved objects are those of the killed replica's shards. Times and the targets'
//! verdicts are not checked: they depend on the machine and are what the benchmark reports.

use std::{path::PathBuf, time::Duration};

use controller_actors::Shards;
use ferrvault_dev::bench::{
    lease_timings::LeaseTimings,
    shards_run,
    shards_world::{self, Layout, Plan},
    work::BUDGETED_ENDPOINTS,
};
use ferrvault_testkit::bench_world::World;

const OBJECTS: usize = 200;
const NAMESPACES: usize = 20;
const LAYOUT: Layout = Layout {
    replicas: 2,
    shards: 4,
};

/// Budgeted requests the FerrVault simulator answered, read here rather than by the benchmark.
fn simulator_count(world: &World) -> u64 {
    let endpoints = world.fv.stats().total.endpoints;
    BUDGETED_ENDPOINTS.iter().filter_map(|e| endpoints.get(*e)).sum()
}

#[tokio::test(flavor = "multi_thread")]
async fn bench_shards_should_report_the_simulators_counts_and_every_killed_shard_held_again() {
    // Built beside `ferrvault-dev` (`cargo build -p ferrvault-operator`), as every bench test needs.
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_ferrvault-dev")).with_file_name("ferrvault-operator");
    let plan = Plan {
        objects: OBJECTS,
        namespaces: NAMESPACES,
        concurrency: 4,
        lease: LeaseTimings::DEFAULT,
        timeout: Duration::from_secs(120),
    };
    let world = World::start().await.expect("simulators start");
    shards_run::populate(&world, &plan)
        .await
        .expect("objects created");
    let sample = shards_run::measure(&world, LAYOUT, &plan, &binary)
        .await
        .expect("the replicas start");

    assert_eq!(sample.ready, OBJECTS, "every object Ready");
    assert!(sample.ready_seconds.is_some());
    assert_eq!(sample.peak_rss_mib.len(), LAYOUT.replicas);
    assert!(
        sample.peak_rss_mib.iter().all(|m| *m > 0.0),
        "{:?}",
        sample.peak_rss_mib
    );
    let takeover = sample.takeover.as_ref().expect("a takeover after all Ready");
    assert!(sample.ferrvault_requests > 0, "the objects were revealed");
    assert_eq!(
        sample.ferrvault_requests + takeover.ferrvault_requests,
        simulator_count(&world),
        "the reported FerrVault requests are the simulator's"
    );

    assert!(!takeover.shards.is_empty(), "the killed replica held shards");
    assert_eq!(takeover.held_again, takeover.shards.len(), "{takeover:?}");
    assert!(takeover.held_again_seconds.is_some(), "{takeover:?}");
    assert_eq!(takeover.stored_objects, OBJECTS as u64, "{takeover:?}");
    let of = Shards::new(u32::from(LAYOUT.shards)).expect("a valid count");
    let moved: u64 = shards_world::spread(OBJECTS, NAMESPACES)
        .iter()
        .filter(|(ns, _)| takeover.shards.contains(&of.of_namespace(ns).0))
        .map(|(_, count)| *count as u64)
        .sum();
    assert_eq!(takeover.moved_objects, moved, "{takeover:?}");
    assert_eq!(
        takeover.relisting_replicas, 1,
        "the one survivor listed again: {takeover:?}"
    );
    assert!(takeover.secret_lists >= 1, "{takeover:?}");
    // The survivor holds every shard now, so its store holds every object.
    assert_eq!(takeover.relisted_objects, OBJECTS as u64, "{takeover:?}");
}
