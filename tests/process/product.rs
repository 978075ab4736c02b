//! What ships: the operator binary does `run` and `crdgen` only, and its crate's normal
//! dependency tree carries none of the development tools (simulators, benchmarks, plots, fonts).

use std::process::Command;

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
    let output = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--package",
            "ferrvault-operator",
            "--edges",
            "normal",
            "--prefix",
            "none",
            "--locked",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    let tree = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let crates: Vec<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert!(crates.contains(&"kube"), "the tree was read: {tree}");
    for tool in [
        "ferrvault-sim",
        "ferrvault-dev",
        "plotters",
        "plotters-bitmap",
        "image",
        "png",
        "ab_glyph",
        "ttf-noto-sans",
    ] {
        assert!(!crates.contains(&tool), "the operator depends on {tool}:\n{tree}");
    }
}
