//! The container image: the `Dockerfile` lints clean with `hadolint` and builds with the same locked
//! release command CI runs (no Docker engine exists here, so the build itself is proven by `.ci/run`).

#[path = "chart_manifests/tools.rs"]
mod tools;

/// The build command the Dockerfile and CI must share.
const RELEASE_BUILD: &str = "cargo build --release --locked";

fn dockerfile() -> String {
    std::fs::read_to_string(tools::repo_root().join("Dockerfile")).expect("read Dockerfile")
}

/// Instructions with line continuations joined, comments dropped.
fn instructions(dockerfile: &str) -> Vec<String> {
    let mut joined = Vec::new();
    let mut current = String::new();
    for line in dockerfile
        .lines()
        .map(str::trim)
        .filter(|line| !line.starts_with('#') && !line.is_empty())
    {
        match line.strip_suffix('\\') {
            Some(head) => current.push_str(head),
            None => {
                current.push_str(line);
                joined.push(std::mem::take(&mut current));
            }
        }
    }
    joined
}

#[test]
fn dockerfile_should_pass_hadolint() {
    let output = tools::run_tool("hadolint", &["Dockerfile"], None);
    assert!(
        output.status.success(),
        "hadolint Dockerfile:\n{}",
        tools::describe(&output)
    );
}

#[test]
fn dockerfile_should_build_locked_release_and_run_it_as_non_root_with_run() {
    let instructions = instructions(&dockerfile());
    let stages: Vec<&String> = instructions
        .iter()
        .filter(|line| line.starts_with("FROM "))
        .collect();
    assert_eq!(stages.len(), 2, "a build stage and a runtime stage: {stages:?}");
    assert!(
        stages[0].starts_with("FROM rust:1.95-bookworm "),
        "builder on the CI toolchain: {}",
        stages[0]
    );
    assert_eq!(
        stages[1], "FROM gcr.io/distroless/cc-debian12:nonroot",
        "minimal runtime with CA certificates"
    );
    let builds: Vec<&String> = instructions
        .iter()
        .filter(|line| line.starts_with("RUN ") && line.contains("cargo "))
        .collect();
    assert_eq!(builds.len(), 1, "one cargo invocation: {builds:?}");
    assert!(
        builds[0].contains(&format!("{RELEASE_BUILD} ")),
        "the build runs `{RELEASE_BUILD}`: {}",
        builds[0]
    );
    let runtime = instructions
        .iter()
        .skip_while(|line| !line.starts_with("FROM gcr.io"))
        .collect::<Vec<_>>();
    assert!(
        runtime.contains(&&"USER 65532:65532".to_owned()),
        "runtime stage runs as 65532: {runtime:?}"
    );
    assert_eq!(
        runtime.last().map(|line| line.as_str()),
        Some(r#"ENTRYPOINT ["/ferrvault-operator", "run"]"#),
        "the chart passes only the flags of `run`"
    );
}

#[test]
fn ci_should_prove_the_dockerfiles_release_build() {
    let ci = std::fs::read_to_string(tools::repo_root().join(".ci/run")).expect("read .ci/run");
    assert!(
        ci.lines().any(|line| line.trim() == RELEASE_BUILD),
        ".ci/run must run `{RELEASE_BUILD}`, the Dockerfile's build command"
    );
}
