//! The external programs the chart tests drive, installed by `.ci/install-tools` into `.tools/bin`.
//!
//! A missing tool fails the test with the command that installs it: these tests never skip.

use std::{
    io::Write,
    path::PathBuf,
    process::{Command, Output, Stdio},
};

use ferrvault_sim::testkit::tools::workspace_root;

/// The repository root (where `.tools/`, the chart and the Dockerfile live).
pub fn repo_root() -> PathBuf {
    workspace_root()
}

/// Runs `.tools/bin/<tool>` with `args`, feeding `stdin` when given, and returns its output.
///
/// # Panics
/// When the tool is not installed (with the hint "run bash .ci/install-tools") or cannot be started.
pub fn run_tool(tool: &str, args: &[&str], stdin: Option<&str>) -> Output {
    let path = repo_root().join(".tools/bin").join(tool);
    assert!(
        path.exists(),
        "{} is missing: run bash .ci/install-tools",
        path.display()
    );
    // Helm keeps config and cache under $HOME by default; a private directory keeps tests hermetic.
    let helm_home = std::env::temp_dir().join("ferrvault-chart-tests-helm");
    let mut child = Command::new(&path)
        .args(args)
        .current_dir(repo_root())
        .env("HELM_CONFIG_HOME", helm_home.join("config"))
        .env("HELM_CACHE_HOME", helm_home.join("cache"))
        .env("HELM_DATA_HOME", helm_home.join("data"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {}: {error}", path.display()));
    let mut pipe = child.stdin.take().expect("stdin was requested as a pipe");
    let input = stdin.unwrap_or_default().to_owned();
    // A writer thread: a large rendering could otherwise fill the pipe while we wait for output.
    let writer = std::thread::spawn(move || pipe.write_all(input.as_bytes()));
    let output = child
        .wait_with_output()
        .unwrap_or_else(|error| panic!("{} did not finish: {error}", path.display()));
    match writer.join().expect("stdin writer panicked") {
        // A tool that exits without reading all its input is judged by its exit status and output.
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(error) => panic!("writing stdin of {tool}: {error}"),
        Ok(()) => {}
    }
    output
}

/// Stdout and stderr of `output`, for assertion messages.
pub fn describe(output: &Output) -> String {
    format!(
        "exit {}\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
