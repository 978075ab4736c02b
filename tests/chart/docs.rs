//! The Markdown documentation names only what exists: every relative link of every `.md` file of
//! the repository (README, `docs/`, the chart README, crate READMEs, `bench-results/`) reaches a
//! file and, with a `#anchor`, a heading of it; the README's "Where things live" map names
//! paths of the tree; `docs/operations.md` documents every flag of `run`. Pure: files only.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
    sync::LazyLock,
};

use regex::Regex;

use crate::{RUN_FLAGS, tools};

/// A Markdown link or image: `](target)` or `](target "title")`.
static LINK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"\]\(([^)\s]+)(?:\s+"[^"]*")?\)"#).expect("regex"));
/// A link inside a heading, kept as its text.
static LINK_TEXT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\[([^\]]*)\]\([^)]*\)").expect("regex"));
/// An inline code span.
static CODE: LazyLock<Regex> = LazyLock::new(|| Regex::new("`([^`\n]*)`").expect("regex"));

/// Every `.md` file under `dir`, skipping hidden folders (`.git`, `.tools`) and `target/`.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                markdown_files(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// `text` without fenced code blocks and inline code spans, which hold examples, not links.
fn prose(text: &str) -> String {
    let mut in_fence = false;
    let mut kept = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence {
            kept.push_str(line);
        }
        kept.push('\n');
    }
    CODE.replace_all(&kept, "").into_owned()
}

/// GitHub's anchor of a heading: lower case, links reduced to their text, everything but
/// letters, digits, `-` and `_` dropped, spaces made `-`.
fn slug(heading: &str) -> String {
    LINK_TEXT
        .replace_all(heading.trim(), "$1")
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of `text`'s headings, with GitHub's `-1`, `-2` … for repeated ones.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut in_fence = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        if in_fence {
            continue;
        }
        let base = slug(heading.trim_start_matches('#'));
        let count = seen.entry(base.clone()).or_insert(0);
        out.insert(if *count == 0 {
            base
        } else {
            format!("{base}-{count}")
        });
        *count += 1;
    }
    out
}

/// What is wrong with the relative links of `file` (empty: nothing); `headings` caches each
/// linked file's anchors.
fn broken_links(root: &Path, file: &Path, headings: &mut BTreeMap<PathBuf, BTreeSet<String>>) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
    let shown = file.strip_prefix(root).unwrap_or(file).display().to_string();
    let mut broken = Vec::new();
    for target in LINK.captures_iter(&prose(&text)).map(|c| c[1].to_owned()) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
        let linked = if path.is_empty() {
            file.to_path_buf()
        } else {
            file.parent().expect("a file has a folder").join(path)
        };
        if !linked.exists() {
            broken.push(format!("{shown}: {target} (no such file)"));
        } else if !anchor.is_empty() {
            let found = headings
                .entry(linked.clone())
                .or_insert_with(|| anchors(&std::fs::read_to_string(&linked).unwrap_or_default()));
            if !found.contains(anchor) {
                broken.push(format!("{shown}: {target} (no heading #{anchor})"));
            }
        }
    }
    broken
}

#[test]
fn every_relative_markdown_link_should_reach_a_file_and_its_heading() {
    let root = tools::repo_root();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    for expected in [
        "README.md",
        "docs/operations.md",
        "charts/ferrvault-operator/README.md",
    ] {
        assert!(
            files.contains(&root.join(expected)),
            "{expected} should be among the files checked: {files:?}"
        );
    }
    let mut headings = BTreeMap::new();
    let broken: Vec<String> = files
        .iter()
        .flat_map(|file| broken_links(&root, file, &mut headings))
        .collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_check_should_know_githubs_anchors() {
    let text = "# Title\n## 3. The work queue\n```\n# not a heading\n```\n## Secure metrics (`x.y`)\n## Dup\n## Dup\n";
    let found = anchors(text);
    for anchor in ["title", "3-the-work-queue", "secure-metrics-xy", "dup", "dup-1"] {
        assert!(found.contains(anchor), "{anchor} in {found:?}");
    }
    assert!(!found.contains("not-a-heading"), "{found:?}");
}

/// The section of `text` from the heading `heading` to the next heading of its level.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no {heading:?} section"));
    let level = heading.split(' ').next().expect("hashes");
    let body = &text[start + heading.len() + 2..];
    body.find(&format!("\n{level} ")).map_or(body, |end| &body[..end])
}

#[test]
fn the_readme_map_should_name_only_paths_of_the_tree() {
    let root = tools::repo_root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let map = section(&readme, "## Where things live");
    let mut named = 0;
    let mut missing = Vec::new();
    for row in map
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
    {
        let Some(files) = row.trim_end_matches('|').rsplit('|').next() else {
            continue;
        };
        for path in CODE.captures_iter(files).map(|c| c[1].to_owned()) {
            named += 1;
            if !root.join(&path).exists() {
                missing.push(path);
            }
        }
    }
    assert!(named > 30, "the map should name the files ({named} found)");
    assert!(
        missing.is_empty(),
        "the README's map names paths that do not exist: {missing:?}"
    );
}

#[test]
fn operations_md_should_document_every_flag_of_run() {
    let root = tools::repo_root();
    let text = std::fs::read_to_string(root.join("docs/operations.md")).expect("docs/operations.md");
    let table = section(&text, "## Flags");
    let row = Regex::new(r"(?m)^\| `--([a-z][a-z-]*)`").expect("regex");
    let documented: BTreeSet<&str> = row
        .captures_iter(table)
        .map(|c| c.get(1).expect("flag").as_str())
        .collect();
    // `RUN_FLAGS` is held to `run --help` by `operator_run`.
    let flags: BTreeSet<&str> = RUN_FLAGS.iter().copied().collect();
    let undocumented: Vec<_> = flags.difference(&documented).collect();
    let unknown: Vec<_> = documented.difference(&flags).collect();
    assert!(
        undocumented.is_empty() && unknown.is_empty(),
        "docs/operations.md's flags table: undocumented {undocumented:?}, not flags of run {unknown:?}"
    );
}
