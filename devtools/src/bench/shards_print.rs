//! The console table of `bench shards`: one row per layout, then each run's takeover.

use super::shards_report::ShardReport;

/// Prints `report`.
pub fn print(report: &ShardReport) {
    println!(
        "\nshards, {} objects: {:<24}  {:>22}  {:>26}  {:>22}  peak RSS per replica, MiB (first run)",
        report.objects, "layout", "all Ready, s", "largest replica RSS, MiB", "FerrVault requests"
    );
    for r in &report.rows {
        let first = r.samples.first().map_or_else(String::new, |s| {
            let each: Vec<String> = s.peak_rss_mib.iter().map(|m| format!("{m:.1}")).collect();
            each.join(" ")
        });
        println!(
            "shards, {} objects: {:<24}  {:>22}  {:>26}  {:>22}  {first}",
            report.objects,
            r.layout.label(),
            r.ready_seconds.show(1),
            r.max_replica_rss_mib.show(1),
            r.ferrvault_requests.show(0)
        );
    }
    for (run, sample) in report.takeovers().iter().enumerate() {
        let Some(t) = sample.and_then(|s| s.takeover.as_ref()) else {
            println!("takeover run {}: not measured (not all Ready)", run + 1);
            continue;
        };
        println!(
            "takeover run {}: shards {:?} held again {}/{} in {} (bound {}s); moved objects {}; re-listed by {} survivors, stored again {}; FerrVaultSecret lists {}; stored {}/{}; FerrVault requests {}; object writes {} ({:?})",
            run + 1,
            t.shards,
            t.held_again,
            t.shards.len(),
            t.held_again_seconds
                .map_or_else(|| "timed out".to_owned(), |s| format!("{s:.2}s")),
            report.takeover_bound_seconds,
            t.moved_objects,
            t.relisting_replicas,
            t.relisted_objects,
            t.secret_lists,
            t.stored_objects,
            report.objects,
            t.ferrvault_requests,
            t.object_writes,
            t.writes_by_resource
        );
    }
}
