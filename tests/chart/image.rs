//! The container image: the `Dockerfile` lints clean with `hadolint` and builds only the operator
//! package, locked. No Docker engine exists here, so CI proves the build through its test build,
//! which compiles the same package from the same lockfile (see
//! [`ci_should_prove_the_dockerfiles_build_through_its_test_build`]).

/// The Dockerfile's build command.
const RELEASE_BUILD: &str = "cargo build --release --locked --package ferrvault-operator";

fn dockerfile() -> String {
    std::fs::read_to_string(crate::tools::repo_root().join("Dockerfile")).expect("read Dockerfile")
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
    let output = crate::tools::run_tool("hadolint", &["Dockerfile"], None);
    assert!(
        output.status.success(),
        "hadolint Dockerfile:\n{}",
        crate::tools::describe(&output)
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

/// A second, release-profile build in CI would cost minutes and prove nothing more, as long as the
/// release profile only changes optimisation: the test build compiles every crate of the operator
/// with `--locked`, and no code is compiled only without `debug_assertions`.
#[test]
fn ci_should_prove_the_dockerfiles_build_through_its_test_build() {
    let root = crate::tools::repo_root();
    let read =
        |path: &str| std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("read {path}: {e}"));
    assert!(
        read(".ci/run")
            .lines()
            .any(|line| line.trim().starts_with("NEXTEST_PROFILE=ci bash .ci/test")),
        ".ci/run must run the test command"
    );
    assert!(
        read(".ci/test").contains("cargo nextest run --workspace --locked"),
        "the test build compiles the whole workspace (the operator included) from the lockfile"
    );
    let manifest: toml::Table = read("Cargo.toml").parse().expect("Cargo.toml parses");
    assert!(
        manifest.get("profile").and_then(|p| p.get("release")).is_none(),
        "a [profile.release] section would make the image's build differ from the tested one"
    );
    let sources = std::process::Command::new("git")
        .args([
            "grep",
            "-l",
            "debug_assertions",
            "--",
            "*.rs",
            ":!tests/chart/image.rs",
        ])
        .current_dir(&root)
        .output()
        .expect("git grep runs");
    assert!(
        sources.stdout.is_empty(),
        "code compiled differently in release: {}",
        String::from_utf8_lossy(&sources.stdout)
    );
}
