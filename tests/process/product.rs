//! What ships: the operator binary does `run` and `crdgen` only, and its crate's normal
//! dependency tree carries none of the development tools (simulators, benchmarks, plots, fonts)
//! and no dependency its code does not call; its tests compile the test kit, never the
//! devtools' plots and font.

use std::{path::Path, process::Command};

use crate::process_support::binary;

#[test]
fn the_binary_should_offer_run_and_crdgen_only() {
    let output = Command::new(binary())
        .arg("--help")
        .output()
        .expect("the binary runs");
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    let commands: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .expect("a Commands section")
        .split("Options:")
        .next()
        .expect("the command list")
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert_eq!(commands, ["run", "crdgen", "help"], "{help}");
}

#[test]
fn the_operator_crate_should_depend_on_no_development_tool() {
    let tree = normal_tree(&[]);
    let crates: Vec<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert!(crates.contains(&"kube"), "the tree was read: {tree}");
    for tool in ["ferrvault-sim", "ferrvault-testkit"]
        .iter()
        .chain(PLOTS_AND_DEVTOOLS)
    {
        assert!(!crates.contains(tool), "the operator depends on {tool}:\n{tree}");
    }
}

/// The devtools crate and what its benchmark plots pull in (plotters, an image codec, a font).
const PLOTS_AND_DEVTOOLS: &[&str] = &[
    "ferrvault-dev",
    "plotters",
    "plotters-bitmap",
    "image",
    "png",
    "ab_glyph",
    "ttf-noto-sans",
];

#[test]
fn the_operator_tests_should_compile_no_development_tool_nor_plot() {
    let tree = cargo_tree("normal,dev", &[]);
    let crates: Vec<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert!(crates.contains(&"ferrvault-testkit"), "the tree was read: {tree}");
    for tool in PLOTS_AND_DEVTOOLS {
        assert!(
            !crates.contains(tool),
            "`cargo test -p ferrvault-operator` compiles {tool}:\n{tree}"
        );
    }
}

#[test]
fn every_dependency_of_the_operator_crate_should_be_called_by_its_code() {
    let tree = normal_tree(&["--depth", "1"]);
    // The first line is the operator itself.
    let dependencies: Vec<&str> = tree
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert!(
        dependencies.contains(&"warp"),
        "the admin servers' routes are warp filters:\n{tree}"
    );
    let code = product_code(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let uncalled: Vec<&str> = dependencies
        .into_iter()
        .filter(|dependency| !names(&code, &dependency.replace('-', "_")))
        .collect();
    assert!(
        uncalled.is_empty(),
        "declared by the operator, named by none of its code (tests aside): {uncalled:?}"
    );
}

/// `cargo tree` of the operator crate, normal edges only, one package a line, with `extra`
/// arguments.
fn normal_tree(extra: &[&str]) -> String {
    cargo_tree("normal", extra)
}

/// `cargo tree` of the operator crate along `edges`, one package a line, with `extra` arguments.
fn cargo_tree(edges: &str, extra: &[&str]) -> String {
    let output = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--package",
            "ferrvault-operator",
            "--edges",
            edges,
            "--prefix",
            "none",
            "--locked",
            "--offline",
        ])
        .args(extra)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The code under `dir` that ships: every `.rs` file but the `tests.rs` and `fixtures.rs` files
/// and `tests/` folders, each up to its `#[cfg(test)]` module (`#[cfg(test)] mod …`).
fn product_code(dir: &Path) -> String {
    let mut code = String::new();
    for entry in std::fs::read_dir(dir).expect("a source folder") {
        let path = entry.expect("a folder entry").path();
        let name = path
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or_default();
        if path.is_dir() && name != "tests" {
            code.push_str(&product_code(&path));
        } else if name.ends_with(".rs") && name != "tests.rs" && name != "fixtures.rs" {
            let text = std::fs::read_to_string(&path).expect("a source file");
            let lines: Vec<&str> = text.lines().map(str::trim).collect();
            let tests = lines
                .windows(2)
                .position(|pair| pair[0] == "#[cfg(test)]" && pair[1].starts_with("mod "))
                .unwrap_or(lines.len());
            for line in &lines[..tests] {
                code.push_str(line);
                code.push('\n');
            }
        }
    }
    code
}

/// Whether `code` names the crate `ident` in a path (`ident::…`), not as the tail of another
/// path (`rustls::crypto::ring::…` does not name `ring`).
fn names(code: &str, ident: &str) -> bool {
    let path = format!("{ident}::");
    code.match_indices(&path).any(|(at, _)| {
        !code[..at]
            .chars()
            .next_back()
            .is_some_and(|before| before.is_alphanumeric() || before == '_' || before == ':')
    })
}
