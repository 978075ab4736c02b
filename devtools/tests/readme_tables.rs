//! The tables of `docs/performance.md` say what the committed report measured: the tables
//! between the `bench-tables` markers are read back from that page and compared, cell by cell,
//! with the tables rendered from `bench-results/published/report.json`.

use std::path::PathBuf;

use ferrvault_dev::bench::{
    report::AllReport,
    tables::{self, Table},
};

const START: &str = "<!-- bench-tables:start -->";
const END: &str = "<!-- bench-tables:end -->";

fn workspace_file(path: &str) -> String {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()))
}

/// The page that shows the published results.
const PERFORMANCE: &str = "docs/performance.md";

fn documented_tables() -> Vec<Table> {
    let page = workspace_file(PERFORMANCE);
    let start = page
        .find(START)
        .expect("docs/performance.md has the bench-tables start marker")
        + START.len();
    let end = page[start..]
        .find(END)
        .expect("docs/performance.md has the bench-tables end marker");
    tables::parse_markdown(&page[start..start + end])
}

fn published_tables() -> Vec<Table> {
    let json = workspace_file("bench-results/published/report.json");
    let report: AllReport =
        serde_json::from_str(&json).expect("the published report parses as a bench all report");
    tables::tables(&report)
}

#[test]
fn performance_tables_should_match_the_published_report() {
    let documented = documented_tables();
    let published = published_tables();
    let titles = |t: &[Table]| t.iter().map(|t| t.title.clone()).collect::<Vec<_>>();
    assert_eq!(
        titles(&documented),
        titles(&published),
        "docs/performance.md should show every table of the report, in order"
    );
    for (ours, theirs) in documented.iter().zip(&published) {
        assert_eq!(ours.header, theirs.header, "columns of {:?}", ours.title);
        assert_eq!(ours.rows.len(), theirs.rows.len(), "rows of {:?}", ours.title);
        for (i, (a, b)) in ours.rows.iter().zip(&theirs.rows).enumerate() {
            assert_eq!(
                a,
                b,
                "row {} of {:?}: docs/performance.md vs report.json",
                i + 1,
                ours.title
            );
        }
    }
}

#[test]
fn the_performance_page_should_quote_the_command_of_the_published_report() {
    let json = workspace_file("bench-results/published/report.json");
    let report: AllReport = serde_json::from_str(&json).expect("the published report parses");
    let page = workspace_file(PERFORMANCE);
    assert!(
        page.contains(&format!("`{}`", report.command)),
        "docs/performance.md should quote the command that produced the published report: {}",
        report.command
    );
}
