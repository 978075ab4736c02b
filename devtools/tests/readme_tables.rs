//! The README's Performance tables say what the committed report measured: the tables between
//! the `bench-tables` markers are read back from the README and compared, cell by cell, with
//! the tables rendered from `bench-results/published/report.json`.

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

fn readme_tables() -> Vec<Table> {
    let readme = workspace_file("README.md");
    let start = readme
        .find(START)
        .expect("README has the bench-tables start marker")
        + START.len();
    let end = readme[start..]
        .find(END)
        .expect("README has the bench-tables end marker");
    tables::parse_markdown(&readme[start..start + end])
}

fn published_tables() -> Vec<Table> {
    let json = workspace_file("bench-results/published/report.json");
    let report: AllReport =
        serde_json::from_str(&json).expect("the published report parses as a bench all report");
    tables::tables(&report)
}

#[test]
fn readme_performance_tables_should_match_the_published_report() {
    let readme = readme_tables();
    let published = published_tables();
    let titles = |t: &[Table]| t.iter().map(|t| t.title.clone()).collect::<Vec<_>>();
    assert_eq!(
        titles(&readme),
        titles(&published),
        "the README should show every table of the report, in order"
    );
    for (ours, theirs) in readme.iter().zip(&published) {
        assert_eq!(ours.header, theirs.header, "columns of {:?}", ours.title);
        assert_eq!(ours.rows.len(), theirs.rows.len(), "rows of {:?}", ours.title);
        for (i, (a, b)) in ours.rows.iter().zip(&theirs.rows).enumerate() {
            assert_eq!(a, b, "row {} of {:?}: README vs report.json", i + 1, ours.title);
        }
    }
}

#[test]
fn the_readme_should_quote_the_command_of_the_published_report() {
    let json = workspace_file("bench-results/published/report.json");
    let report: AllReport = serde_json::from_str(&json).expect("the published report parses");
    let readme = workspace_file("README.md");
    assert!(
        readme.contains(&format!("`{}`", report.command)),
        "the README should quote the command that produced the published report: {}",
        report.command
    );
}
