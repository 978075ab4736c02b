//! Condition messages, worded as the Go operator's (reference §1.2, §3.2, §4) so users and
//! runbooks recognise them. Inputs are names and counts only: never a secret value.
//!
//! Every message is cut to 1 KiB where it is written ([`upsert_condition`]); one quoting what a
//! tenant wrote or a server answered (a controller's kind and name, a target type, a URL, a
//! parser's complaint) is cut while it is formatted, so it is never built whole either; a
//! message listing names lists only those that fit in [`LIST_BUDGET_BYTES`] and counts the rest
//! ([`first_names`]), so its count survives the cut.
//!
//! [`upsert_condition`]: super::conditions::upsert_condition

use std::{fmt, time::Duration};

use jiff::Timestamp;

use super::{
    bounded_text::{Bounded, MAX_MESSAGE_BYTES},
    credential_opt_in::{CREDENTIAL_LABEL, CREDENTIAL_LABEL_VALUE, CREDENTIAL_TYPE_PREFIX},
    duration::format_go_duration,
    target_access::TargetRefusal,
};
use crate::{
    api::{SpecProblem, names::ADOPTABLE_BY_ANNOTATION},
    ferrvault::MissingKeys,
};

/// How many dependants a `DeletionBlocked` message names before summarising the rest.
pub(crate) const DELETION_BLOCKED_NAMES_SHOWN: usize = 5;

/// The most bytes of names a message lists: with its words and the count of the names left out,
/// it stays within the 1 KiB bound of a message.
pub(crate) const LIST_BUDGET_BYTES: usize = 768;

/// The first of `names` (at most `most`, together no longer than [`LIST_BUDGET_BYTES`]) joined by
/// spaces, and how many are left out. The first name is shown cut to the budget if it alone does
/// not fit, so a list is never shown empty while it has names.
pub(crate) fn first_names(names: &[String], most: usize) -> (String, usize) {
    let mut shown = String::new();
    let mut count = 0;
    for name in names.iter().take(most) {
        let needed = name.len() + usize::from(count > 0);
        if shown.len() + needed > LIST_BUDGET_BYTES {
            if count == 0 {
                shown = super::bounded_text::cut(name.clone(), LIST_BUDGET_BYTES);
                count = 1;
            }
            break;
        }
        if count > 0 {
            shown.push(' ');
        }
        shown.push_str(name);
        count += 1;
    }
    (shown, names.len() - count)
}

/// `args` formatted, cut to the 1 KiB bound of a message as it is written.
fn bounded(args: fmt::Arguments<'_>) -> String {
    format!("{:?}", Bounded::new(&args, MAX_MESSAGE_BYTES))
}

/// Ready=True/`Synced`: "N key(s) synced into TARGET".
pub(crate) fn synced(key_count: usize, target: &str) -> String {
    format!("{key_count} key(s) synced into {target}")
}

/// Ready=False/`MissingKeys` after a write: "missing in FerrVault: [A B]", then " (and N more)"
/// past the [`MissingKeys::SHOWN`] names kept.
pub(crate) fn missing_keys(missing: &MissingKeys) -> String {
    format!(
        "missing in FerrVault: [{}]{}",
        missing.names().join(" "),
        and_more(missing.hidden())
    )
}

/// Ready=False/`MissingKeys` when the guard left the target alone:
/// "missing in FerrVault: [A B] (and N more): TARGET left unchanged".
pub(crate) fn missing_keys_target_unchanged(missing: &MissingKeys, target: &str) -> String {
    format!("{}: {target} left unchanged", missing_keys(missing))
}

/// `status.missingKeys`: the names kept, then "(and N more)" as a last entry when some are not
/// (it cannot be taken for a key: a Secret's key has no spaces or parentheses).
pub(crate) fn missing_keys_list(missing: &MissingKeys) -> Vec<String> {
    let mut list = missing.names().to_vec();
    if missing.hidden() > 0 {
        list.push(and_more(missing.hidden()).trim_start().to_owned());
    }
    list
}

/// " (and N more)" for `hidden` > 0, else nothing.
fn and_more(hidden: usize) -> String {
    match hidden {
        0 => String::new(),
        hidden => format!(" (and {hidden} more)"),
    }
}

/// Ready=False for a refused target (`TargetTypeRefused`, `TargetIsConnectionSecret`,
/// `TargetControlledByOther`, `TargetNotOwned`): what was found and, where the user can act, how.
/// `writer` is the FerrVaultSecret's name.
pub(crate) fn target_refused(refusal: &TargetRefusal, target: &str, writer: &str) -> String {
    match refusal {
        TargetRefusal::RefusedType { type_ } => bounded(format_args!(
            "target type {type_} is refused: Kubernetes turns Secrets of this type into cluster credentials; \
             {target} not written"
        )),
        TargetRefusal::KubernetesManaged { marker } => bounded(format_args!(
            "Secret {target} carries {marker}, which Kubernetes acts on (ServiceAccount or bootstrap \
             tokens): never written"
        )),
        TargetRefusal::ConnectionSecret(used) => bounded(format_args!(
            "Secret {target} is the {} Secret of FerrVaultConnection {:?}: a FerrVaultSecret never writes \
             a connection's credentials",
            used.role.as_str(),
            used.connection
        )),
        TargetRefusal::ControlledByOther { kind, name } => bounded(format_args!(
            "Secret {target} is controlled by {kind} {name:?}: not written"
        )),
        TargetRefusal::NotOwned => bounded(format_args!(
            "Secret {target} exists and is not controlled by this FerrVaultSecret: not written; to hand it \
             over, annotate the Secret with {ADOPTABLE_BY_ANNOTATION}={writer}"
        )),
    }
}

/// Ready=False/`MissingCloudScope`.
pub(crate) const MISSING_CLOUD_SCOPE: &str =
    "mode cloud needs organization on the FerrVaultConnection and project on the FerrVaultSecret";

/// RolloutRestarted=False/`RolloutDeferred`: stable for the whole deferral (no status write per
/// pass), naming when the restart becomes due and the floor.
pub(crate) fn rollout_deferred(until: Timestamp, floor: Duration) -> String {
    format!(
        "restart deferred until {}: a workload is restarted at most once per {}",
        until.round(jiff::Unit::Second).unwrap_or(until),
        format_go_duration(floor)
    )
}

/// RolloutRestarted=True/`UpToDate`.
pub(crate) const ROLLOUT_UP_TO_DATE: &str = "workloads run the current content of the target Secret";

/// Connection Ready=True/`Reachable`: "URL responded to /healthz", with any `user:password@`
/// in the URL replaced by `<redacted>@` so a credential embedded in `spec.url` never reaches status.
pub(crate) fn reachable(url: &str) -> String {
    bounded(format_args!("{} responded to /healthz", redact_userinfo(url)))
}

/// `url` with the userinfo part of its authority (before the last `@`) replaced by `<redacted>`.
pub(crate) fn redact_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_len].rfind('@') {
        Some(at) => format!("{scheme}://<redacted>{}", &rest[at..]),
        None => url.to_owned(),
    }
}

/// Ready=False/`InsecureUrl`.
pub(crate) const INSECURE_URL: &str = "spec.url is plain http://, refused: tokens and values would travel in clear \
     and the operator was not started with --allow-insecure-http; nothing was sent. Use https://";

/// Ready=False/`Redirected`: "FerrVault answered the WHAT with STATUS (a redirect) …".
pub(crate) fn redirected(what: &str, status: u16) -> String {
    format!(
        "FerrVault answered the {what} with {status} (a redirect): redirects are never followed, so \
         nothing was sent to the location it named; point spec.url at the final address"
    )
}

/// Ready=False/`UntrustedUrl`: the cluster identity goes to the operator's trusted URLs only.
pub(crate) const UNTRUSTED_URL: &str = "spec.url is not one of the operator's trusted FerrVault URLs \
     (--oidc-trusted-urls): the cluster identity is only sent there; nothing was sent";

/// Ready=False/`UntrustedUrl` for a connection that adds its own CA bundle.
pub(crate) const CLUSTER_IDENTITY_WITH_CA_BUNDLE: &str = "a connection using the cluster identity cannot set \
     caBundleSecretRef: its own CA could vouch for any host under the trusted name; nothing was sent";

/// Ready=False/`ClusterIdentityMismatch`: `FIELD` differs from the operator's `FLAG`.
pub(crate) fn cluster_identity_mismatch(field: &str, flag: &str) -> String {
    format!(
        "{field} differs from the operator's {flag} and is not used: the cluster identity is configured \
         by the operator; remove {field} (or set it to the operator's value)"
    )
}

/// Ready=False/`ClusterIdentityUnavailable` when the operator runs without one.
pub(crate) const CLUSTER_IDENTITY_NOT_CONFIGURED: &str = "spec.oidc asks for the cluster identity but the operator has none (--oidc-cluster-id is unset); \
     use tokenSecretRef, or ask the operator's administrators to configure it";

/// Ready=False/`ClusterIdentityUnavailable` for a connection outside cloud mode.
pub(crate) const CLUSTER_IDENTITY_NEEDS_CLOUD_MODE: &str = "the cluster identity works in mode cloud only: \
     a cluster token travels with the namespace (X-FerrVault-Namespace) the server scopes it to";

/// Ready=False/`CredentialNotOptedIn`: the `WHAT` (token, CA bundle) Secret `NAMESPACE/NAME` did
/// not opt in, and how its owner opts it in.
pub(crate) fn credential_not_opted_in(what: &str, namespace: &str, name: &str) -> String {
    format!(
        "{what} Secret {namespace}/{name} is not opted in as a FerrVault credential \
         (--require-credential-opt-in): its owner labels it {CREDENTIAL_LABEL}={CREDENTIAL_LABEL_VALUE} \
         (or gives it a {CREDENTIAL_TYPE_PREFIX}* type) to let connections use it; nothing was sent"
    )
}

/// Ready=False/`ConnectionNotFound`: `FerrVaultConnection "NAME": CAUSE`.
pub(crate) fn connection_not_found(name: &str, cause: &str) -> String {
    bounded(format_args!("FerrVaultConnection {name:?}: {cause}"))
}

/// Ready=False/`InvalidRefreshInterval`.
pub(crate) fn invalid_refresh_interval(cause: &str) -> String {
    bounded(format_args!("spec.refreshInterval: {cause}"))
}

/// Ready=False/`InvalidSpec`: "PATH: WHAT; fix the object (it bypassed the CRD schema)".
/// `problem` names a field and the expected type, never the value found there.
pub(crate) fn invalid_spec(problem: &SpecProblem) -> String {
    bounded(format_args!(
        "{problem}; fix the object (it bypassed the CRD schema)"
    ))
}

/// Secret Ready=False/`InvalidConnection` when the connection itself is `InvalidSpec`.
pub(crate) fn connection_spec_invalid(name: &str, problem: &SpecProblem) -> String {
    bounded(format_args!(
        "FerrVaultConnection {name:?} has an invalid spec ({problem}); fix it (it bypassed the CRD schema)"
    ))
}

/// `<Field>Clamped`=True/`BelowMinimum`: "refreshInterval 1s is below the operator's minimum of 30s;
/// refreshing every 30s".
pub(crate) fn interval_clamped(
    field: &str,
    activity: &str,
    requested: Duration,
    minimum: Duration,
) -> String {
    let minimum = format_go_duration(minimum);
    format!(
        "{field} {} is below the operator's minimum of {minimum}; {activity} every {minimum}",
        format_go_duration(requested)
    )
}

/// Ready=False/`SecretTooLarge`.
pub(crate) fn secret_too_large(size: usize, limit: usize, target: &str) -> String {
    format!(
        "the synced content is {size} bytes, over the {limit}-byte limit of a Secret: {target} left unchanged"
    )
}

/// Connection Ready=False/`DeletionBlocked`: "cannot delete: still referenced by N
/// FerrVaultSecret(s): [a b c d e] (and K more)"; `dependants` should be sorted for a stable text.
pub(crate) fn deletion_blocked(dependants: &[String]) -> String {
    let (shown, hidden) = first_names(dependants, DELETION_BLOCKED_NAMES_SHOWN);
    let more = match hidden {
        0 => String::new(),
        hidden => format!(" (and {hidden} more)"),
    };
    format!(
        "cannot delete: still referenced by {} FerrVaultSecret(s): [{shown}]{more}",
        dependants.len(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::rules::target_access::{ConnectionSecret, ConnectionSecretRole};

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
}
