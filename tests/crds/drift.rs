//! The chart's CRD files and `crdgen`'s output are exactly what the Rust types generate.

use std::{fs, path::Path, process::Command};

use ferrvault_operator::api::crdgen::{CHART_CRD_DIR, REGENERATE_COMMAND, all_crds_yaml, chart_crd_files};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

fn chart_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(CHART_CRD_DIR)
}

#[test]
fn chart_crd_files_should_match_the_rust_types() {
    for (name, generated) in chart_crd_files().expect("CRDs serialize") {
        let path = chart_dir().join(&name);
        let committed = fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{} is unreadable ({e}); regenerate it with `{REGENERATE_COMMAND}`",
                path.display()
            )
        });
        assert!(
            committed == generated,
            "{} has drifted from the Rust types in src/api; regenerate it with `{REGENERATE_COMMAND}`",
            path.display()
        );
    }
}

#[test]
fn chart_crd_dir_should_hold_no_stale_crd_files() {
    let expected: Vec<String> = chart_crd_files()
        .expect("CRDs serialize")
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let mut present: Vec<String> = fs::read_dir(chart_dir())
        .expect("chart CRD dir exists")
        .map(|entry| {
            entry
                .expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    present.sort();
    assert_eq!(
        present, expected,
        "stale or missing CRD files; regenerate with `{REGENERATE_COMMAND}`"
    );
}

#[test]
fn crdgen_subcommand_should_print_every_crd_as_a_multi_document_stream() {
    let output = Command::new(env!("CARGO_BIN_EXE_ferrvault-operator"))
        .arg("crdgen")
        .output()
        .expect("the binary runs");
    assert!(
        output.status.success(),
        "crdgen failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).expect("utf-8 YAML");
    assert_eq!(stdout, all_crds_yaml().expect("CRDs serialize"));
    let names: Vec<String> = stdout
        .split("---\n")
        .filter(|doc| !doc.trim().is_empty())
        .map(|doc| {
            let crd: CustomResourceDefinition =
                serde_norway::from_str(doc).unwrap_or_else(|e| panic!("each document is a CRD: {e}"));
            crd.metadata.name.expect("named")
        })
        .collect();
    assert_eq!(
        names,
        [
            "clusterferrvaultconnections.ferrvault.com",
            "clusterferrvaultsecrets.ferrvault.com",
            "ferrvaultconnections.ferrvault.com",
            "ferrvaultsecrets.ferrvault.com"
        ]
    );
}
