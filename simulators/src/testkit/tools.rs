//! The programs `.ci/install-tools` puts in `.tools/bin`, as the tests find them.

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

/// The workspace's root folder (where `.tools/` and the chart live).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the simulators crate sits in the workspace root")
        .to_owned()
}

/// `.tools/bin/promtool` (from `bash .ci/install-tools`), else `promtool` on the PATH.
pub fn promtool() -> PathBuf {
    let local = workspace_root().join(".tools/bin/promtool");
    if local.exists() {
        local
    } else {
        PathBuf::from("promtool")
    }
}

/// Runs `promtool check metrics` on `scrape`; `Err` with promtool's output when it complains.
///
/// # Panics
/// When promtool cannot be run.
pub fn promtool_check_metrics(scrape: &str) -> Result<(), String> {
    let mut child = Command::new(promtool())
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool is installed: run bash .ci/install-tools");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(scrape.as_bytes())
        .expect("write the scrape to promtool");
    let output = child.wait_with_output().expect("promtool finishes");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if output.status.success() && said.trim().is_empty() {
        Ok(())
    } else {
        Err(said)
    }
}
