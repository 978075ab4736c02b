//! `ferrvault-dev bench freshness` counts what it claims, at a tiny size (counts, not times):
//! under `changeDetection: Versions` with nothing rotating, the quiet window costs one `list` per
//! interval and no reveal, however many objects follow the connection.

use std::{process::Command, time::Duration};

use ferrvault_sim::testkit::process::Spawned;

/// The quiet window, seconds.
const WINDOW: u64 = 12;
/// The `Versions` interval, seconds.
const INTERVAL: u64 = 5;

#[test]
fn the_versions_row_should_count_one_list_per_interval_and_no_reveal_when_nothing_changes() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ferrvault-dev"));
    command.args([
        "bench",
        "freshness",
        "--freshness-objects=5",
        &format!("--duration={WINDOW}"),
        "--rotations=0",
        &format!("--versions-interval={INTERVAL}"),
        "--no-hints",
    ]);
    let mut bench = Spawned::start(command);
    let status = bench.wait_exit(Duration::from_secs(180));
    let output = bench.output();
    assert_eq!(status.code(), Some(0), "{output}");
    let row = output
        .lines()
        .find(|l| l.starts_with("freshness: Versions"))
        .unwrap_or_else(|| panic!("no Versions row:\n{output}"));
    // The quiet counts read `<lists>/<reveals> in <seconds> s`.
    let words: Vec<&str> = row.split_whitespace().collect();
    let counts = words
        .iter()
        .position(|w| *w == "in")
        .and_then(|at| words.get(at.checked_sub(1)?))
        .and_then(|w| w.split_once('/'))
        .map(|(l, v)| (l.parse::<u64>(), v.parse::<u64>()));
    let Some((Ok(lists), Ok(reveals))) = counts else {
        panic!("no quiet counts in {row}");
    };
    assert_eq!(reveals, 0, "nothing changed: no reveal ({row})");
    let whole = WINDOW / INTERVAL;
    assert!(
        (whole..=whole + 1).contains(&lists),
        "{lists} lists in {WINDOW} s at one per {INTERVAL} s ({row})"
    );
}
