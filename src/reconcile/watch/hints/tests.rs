use controller_actors::watch_store;
use kube::runtime::watcher::Event;

use super::*;
use crate::{
    api::{RefreshPolicy, SecretSelector},
    reconcile::fixtures,
};

/// FerrVaultSecret `name` reading `vault`, selecting `names` (every key when empty).
fn object(name: &str, vault: &str, names: &[&str]) -> Lenient<FerrVaultSecret> {
    let mut cr = fixtures::secret(1, Some(RefreshPolicy::Periodic));
    cr.metadata.name = Some(name.into());
    cr.spec.vault = vault.into();
    if !names.is_empty() {
        cr.spec.selector = Some(SecretSelector {
            names: names.iter().map(|n| (*n).to_owned()).collect(),
        });
    }
    Lenient::Valid(cr)
}

fn marks_over(objects: Vec<Lenient<FerrVaultSecret>>) -> HintMarks {
    let (store, mut writer) = watch_store();
    for object in objects {
        writer.apply(Event::Apply(object));
    }
    let mut scoped = Scoped::default();
    scoped.add(None, store);
    let marks = HintMarks::default();
    marks.watch_store(scoped);
    marks
}

fn hint(vault: &str, names: Option<&[&str]>) -> Hint {
    Hint {
        vault: vault.into(),
        names: names.map(|n| n.iter().map(|s| (*s).to_owned()).collect()),
    }
}

fn names(keys: Vec<(String, String)>) -> Vec<String> {
    let mut names: Vec<String> = keys.into_iter().map(|(_, name)| name).collect();
    names.sort();
    names
}

#[test]
fn marks_should_match_the_vault_and_the_selected_names() {
    let marks = marks_over(vec![
        object("all-keys", "pay", &[]),
        object("db", "pay", &["DB_URL"]),
        object("api", "pay", &["API_KEY"]),
        object("other-vault", "hr", &["DB_URL"]),
    ]);
    assert!(marks.gather(hint("pay", Some(&["DB_URL"]))));
    assert_eq!(names(marks.close_window()), ["all-keys", "db"]);
    assert!(marks.is_marked("default", "db"));
    assert!(marks.take("default", "db").is_some());
    assert!(marks.take("default", "db").is_none(), "a mark is taken once");
    assert!(!marks.is_marked("default", "db"));
    assert!(marks.take("default", "api").is_none());
}

#[test]
fn marks_should_gather_a_window_of_hints_into_one_enqueue_per_object() {
    let marks = marks_over(vec![
        object("db", "pay", &["DB_URL"]),
        object("api", "pay", &["API_KEY"]),
    ]);
    assert!(
        marks.gather(hint("pay", Some(&["DB_URL"]))),
        "the first hint opens the window"
    );
    for _ in 0..999 {
        assert!(!marks.gather(hint("pay", Some(&["DB_URL"]))));
    }
    assert!(!marks.gather(hint("pay", Some(&["API_KEY"]))));
    assert_eq!(names(marks.close_window()), ["api", "db"]);
    assert!(marks.gather(hint("pay", None)), "a closed window opens again");
    assert_eq!(
        names(marks.close_window()),
        Vec::<String>::new(),
        "both still marked"
    );
}

#[test]
fn marks_should_ignore_an_unknown_vault() {
    let marks = marks_over(vec![object("db", "pay", &[])]);
    marks.gather(hint("unknown", None));
    assert!(marks.close_window().is_empty());
    assert!(marks.take("default", "db").is_none());
}

#[test]
fn marks_should_treat_too_many_gathered_names_as_any() {
    let marks = marks_over(vec![object("db", "pay", &["DB_URL"])]);
    let first: Vec<String> = (0..MAX_NAMES).map(|n| format!("n{n}")).collect();
    marks.gather(Hint {
        vault: "pay".into(),
        names: Some(first.into_iter().collect()),
    });
    marks.gather(hint("pay", Some(&["one-more"])));
    assert_eq!(names(marks.close_window()), ["db"]);
}
