use std::time::Duration;

use jiff::Timestamp;

use super::{
    budget::{LIST_BUDGET_BYTES, first_names},
    *,
};
use crate::{
    ferrvault::MissingKeys,
    reconcile::rules::{
        access::target_access::{ConnectionSecret, ConnectionSecretRole, TargetRefusal},
        bounds::bounded_text::MAX_MESSAGE_BYTES,
    },
};

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|n| n.to_string()).collect()
}

fn missing(list: &[&str]) -> MissingKeys {
    names(list).into_iter().collect()
}

#[test]
fn messages_should_read_like_the_go_operators() {
    assert_eq!(synced(3, "app"), "3 key(s) synced into app");
    assert_eq!(missing_keys(&missing(&["A", "B"])), "missing in FerrVault: [A B]");
    assert_eq!(
        missing_keys_target_unchanged(&missing(&["A"]), "app"),
        "missing in FerrVault: [A]: app left unchanged"
    );
    assert_eq!(reachable("https://x"), "https://x responded to /healthz");
    assert_eq!(
        connection_not_found("main", "not found"),
        r#"FerrVaultConnection "main": not found"#
    );
}

#[test]
fn target_refusals_should_say_what_was_found_and_how_to_hand_a_secret_over() {
    assert_eq!(
        target_refused(&TargetRefusal::NotOwned, "db", "app"),
        "Secret db exists and is not controlled by this FerrVaultSecret: not written; to hand it over, \
         annotate the Secret with ferrvault.com/adoptable-by=app"
    );
    let controlled = TargetRefusal::ControlledByOther {
        kind: "Deployment".into(),
        name: "web".into(),
    };
    assert_eq!(
        target_refused(&controlled, "db", "app"),
        r#"Secret db is controlled by Deployment "web": not written"#
    );
    let connection = TargetRefusal::ConnectionSecret(ConnectionSecret {
        connection: "main".into(),
        secret: "sat".into(),
        role: ConnectionSecretRole::CaBundle,
    });
    assert_eq!(
        target_refused(&connection, "sat", "app"),
        r#"Secret sat is the CA bundle Secret of FerrVaultConnection "main": a FerrVaultSecret never writes a connection's credentials"#
    );
}

#[test]
fn a_refusal_quoting_a_huge_owner_should_be_cut_as_it_is_written() {
    let controlled = TargetRefusal::ControlledByOther {
        kind: "K".repeat(512 * 1024),
        name: "n".repeat(256 * 1024),
    };
    let message = target_refused(&controlled, "db", "app");
    assert!(message.len() <= MAX_MESSAGE_BYTES, "{} bytes", message.len());
    assert!(message.starts_with("Secret db is controlled by KKK"), "{message}");
    assert!(message.ends_with(" bytes in all]"), "{message}");
    let url = format!("https://{}.example", "h".repeat(100_000));
    assert!(reachable(&url).len() <= MAX_MESSAGE_BYTES);
}

#[test]
fn a_deferred_rollout_should_name_the_due_time_and_the_floor() {
    let until: Timestamp = "2026-12-01T10:05:00.4Z".parse().unwrap();
    assert_eq!(
        rollout_deferred(until, Duration::from_secs(300)),
        "restart deferred until 2026-12-01T10:05:00Z: a workload is restarted at most once per 5m0s"
    );
}

#[test]
fn reachable_should_never_show_a_credential_embedded_in_the_url() {
    assert_eq!(
        reachable("https://u:p4ss@h:8/x?a=b@c"),
        "https://<redacted>@h:8/x?a=b@c responded to /healthz"
    );
    assert_eq!(redact_userinfo("http://h/path@x"), "http://h/path@x");
    assert_eq!(redact_userinfo("not a url"), "not a url");
}

#[test]
fn missing_keys_should_show_the_names_kept_and_how_many_more() {
    let few = missing(&["B", "A"]);
    assert_eq!(missing_keys_list(&few), ["A", "B"]);
    let many: MissingKeys = (0..150).map(|i| format!("K{i:03}")).collect();
    let list = missing_keys_list(&many);
    assert_eq!(list.len(), MissingKeys::SHOWN + 1);
    assert_eq!((list[0].as_str(), list[100].as_str()), ("K000", "(and 50 more)"));
    let message = missing_keys_target_unchanged(&many, "app");
    assert!(
        message.starts_with("missing in FerrVault: [K000 K001 ")
            && message.ends_with(" K099] (and 50 more): app left unchanged"),
        "{message}"
    );
}

#[test]
fn deletion_blocked_should_name_at_most_five_dependants() {
    assert_eq!(
        deletion_blocked(&names(&["a", "b"])),
        "cannot delete: still referenced by 2 FerrVaultSecret(s): [a b]"
    );
    assert_eq!(
        deletion_blocked(&names(&["a", "b", "c", "d", "e", "f", "g"])),
        "cannot delete: still referenced by 7 FerrVaultSecret(s): [a b c d e] (and 2 more)"
    );
}

#[test]
fn a_list_of_the_longest_names_should_keep_its_count_within_the_bound() {
    let longest: Vec<String> = (0..40).map(|i| format!("{i:0>253}")).collect();
    let message = deletion_blocked(&longest);
    assert!(message.len() <= 1024, "{} bytes", message.len());
    assert!(message.ends_with("] (and 37 more)"), "{message}");
    assert_eq!(first_names(&longest[..1], 5), (longest[0].clone(), 0));
    let (shown, hidden) = first_names(&["x".repeat(5000)], 5);
    assert_eq!(hidden, 0);
    assert!(
        shown.len() <= LIST_BUDGET_BYTES && shown.starts_with("xxx"),
        "{shown}"
    );
}
