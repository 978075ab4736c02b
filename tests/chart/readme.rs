//! The chart README documents every value.

use crate::*;

/// Dotted paths of every leaf in `values` (lists and empty maps are leaves).
fn leaf_paths(prefix: &str, values: &Value, out: &mut Vec<String>) {
    match values.as_object() {
        Some(map) if !map.is_empty() && !prefix.ends_with("labels") && !prefix.ends_with("annotations") => {
            for (key, value) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                leaf_paths(&path, value, out);
            }
        }
        _ => out.push(prefix.to_owned()),
    }
}

#[test]
fn the_chart_readme_should_document_every_value() {
    let root = tools::repo_root().join(render::CHART);
    let values: Value =
        serde_norway::from_str(&std::fs::read_to_string(root.join("values.yaml")).expect("values.yaml"))
            .expect("yaml");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("chart README.md");
    let mut paths = Vec::new();
    leaf_paths("", &values, &mut paths);
    let documented = |path: &str| {
        // A row documents the value itself or the object holding it (e.g. `resources`).
        let mut prefix = path.to_owned();
        loop {
            if readme.contains(&format!("| `{prefix}` |")) {
                return true;
            }
            match prefix.rsplit_once('.') {
                Some((parent, _)) => prefix = parent.to_owned(),
                None => return false,
            }
        }
    };
    let missing: Vec<&String> = paths.iter().filter(|path| !documented(path)).collect();
    assert!(
        missing.is_empty(),
        "values missing from the README table: {missing:?}"
    );
}
