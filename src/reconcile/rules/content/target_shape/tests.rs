use k8s_openapi::ByteString;

use super::*;

fn map(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
    entries
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn keys(names: &[&str]) -> Vec<String> {
    names.iter().map(|k| (*k).to_owned()).collect()
}

/// (case, existing, owned before, spec, expected).
type Case = (
    &'static str,
    Option<BTreeMap<String, String>>,
    Vec<String>,
    BTreeMap<String, String>,
    Option<BTreeMap<String, String>>,
);

#[test]
fn owned_map_should_add_change_and_remove_only_owned_keys() {
    let cases: [Case; 8] = [
        (
            "added to nothing",
            None,
            keys(&[]),
            map(&[("a", "1")]),
            Some(map(&[("a", "1")])),
        ),
        ("nothing to nothing", None, keys(&[]), map(&[]), None),
        (
            "added beside a foreign key",
            Some(map(&[("team", "shop")])),
            keys(&[]),
            map(&[("a", "1")]),
            Some(map(&[("a", "1"), ("team", "shop")])),
        ),
        (
            "changed",
            Some(map(&[("a", "1"), ("team", "shop")])),
            keys(&["a"]),
            map(&[("a", "2")]),
            Some(map(&[("a", "2"), ("team", "shop")])),
        ),
        (
            "removed from the spec",
            Some(map(&[("a", "1"), ("b", "2"), ("team", "shop")])),
            keys(&["a", "b"]),
            map(&[("a", "1")]),
            Some(map(&[("a", "1"), ("team", "shop")])),
        ),
        (
            "all removed: an empty map, not absent",
            Some(map(&[("a", "1")])),
            keys(&["a"]),
            map(&[]),
            Some(map(&[])),
        ),
        (
            "a foreign key never recorded as ours stays when the spec drops nothing",
            Some(map(&[("team", "shop")])),
            keys(&["gone"]),
            map(&[]),
            Some(map(&[("team", "shop")])),
        ),
        (
            "drift on an owned key is corrected",
            Some(map(&[("a", "edited"), ("team", "shop")])),
            keys(&["a"]),
            map(&[("a", "1")]),
            Some(map(&[("a", "1"), ("team", "shop")])),
        ),
    ];
    for (case, existing, owned, spec, expected) in cases {
        assert_eq!(owned_map(existing.as_ref(), &owned, &spec), expected, "{case}");
    }
}

#[test]
fn owned_keys_should_be_the_spec_keys_sorted() {
    assert_eq!(owned_keys(&map(&[("b", "2"), ("a", "1")])), keys(&["a", "b"]));
}

fn secret(immutable: Option<bool>, type_: Option<&str>, value: &str) -> Secret {
    Secret {
        immutable,
        type_: type_.map(str::to_owned),
        data: Some([("k".to_owned(), ByteString(value.as_bytes().to_vec()))].into()),
        ..Secret::default()
    }
}

#[test]
fn target_write_should_refuse_or_replace_only_what_an_immutable_secret_forbids() {
    use ImmutableChange::{Refuse, Replace};
    use TargetWrite::{RefuseImmutable, Replace as Replaced, Update};
    let tls = Some("kubernetes.io/tls");
    // (case, existing, desired, change, expected)
    let cases = [
        (
            "mutable, new content",
            secret(None, None, "a"),
            secret(None, None, "b"),
            Refuse,
            Update,
        ),
        (
            "made immutable",
            secret(None, None, "a"),
            secret(Some(true), None, "a"),
            Refuse,
            Update,
        ),
        (
            "made immutable with new content",
            secret(Some(false), None, "a"),
            secret(Some(true), None, "b"),
            Refuse,
            Update,
        ),
        (
            "mutable, new type",
            secret(None, None, "a"),
            secret(None, tls, "a"),
            Refuse,
            Replaced { restart: false },
        ),
        (
            "immutable, same content (metadata only)",
            secret(Some(true), None, "a"),
            secret(Some(true), Some("Opaque"), "a"),
            Refuse,
            Update,
        ),
        (
            "immutable, new content, Refuse",
            secret(Some(true), None, "a"),
            secret(Some(true), None, "b"),
            Refuse,
            RefuseImmutable,
        ),
        (
            "immutable, new content, Replace",
            secret(Some(true), None, "a"),
            secret(Some(true), None, "b"),
            Replace,
            Replaced { restart: true },
        ),
        (
            "immutable flag unset, Refuse",
            secret(Some(true), None, "a"),
            secret(None, None, "a"),
            Refuse,
            RefuseImmutable,
        ),
        (
            "immutable flag unset, Replace",
            secret(Some(true), None, "a"),
            secret(Some(false), None, "a"),
            Replace,
            Replaced { restart: true },
        ),
        (
            "immutable, new type, Replace",
            secret(Some(true), None, "a"),
            secret(Some(true), tls, "a"),
            Replace,
            Replaced { restart: true },
        ),
        (
            "immutable, new type, Refuse",
            secret(Some(true), None, "a"),
            secret(Some(true), tls, "a"),
            Refuse,
            RefuseImmutable,
        ),
    ];
    for (case, existing, desired, change, expected) in cases {
        assert_eq!(target_write(&existing, &desired, change), expected, "{case}");
    }
}
