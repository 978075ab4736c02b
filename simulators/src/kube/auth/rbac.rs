//! The RBAC authorizer over the stored Roles, ClusterRoles and their bindings, as the real
//! one decides: `system:masters` may do everything; otherwise a request is allowed when a
//! rule of a role bound to the user (by name, group or ServiceAccount) matches it.
//! ClusterRoleBindings grant everywhere; RoleBindings only in their namespace and never
//! non-resource URLs. Wildcards: `*` verbs, groups, resources and URLs, `*/subresource`,
//! URL prefixes ending in `*`; `resourceNames` restrict to named requests.
//!
//! The bootstrap bindings every cluster has are built in (not stored): authenticated
//! users may discover the API (`system:discovery`), read the public health and version
//! endpoints (`system:public-info-viewer`) and review their own access
//! (`system:basic-user`). Aggregated ClusterRoles are not aggregated.

use super::users::{AUTHENTICATED, SUPERUSERS, UserInfo};
use crate::kube::{registry::ResourceId, store::Store};
use serde_json::{Value, json};

/// What a request asks to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attributes {
    /// A resource request.
    Resource {
        /// Verb (`get`, `list`, `create`, …).
        verb: String,
        /// API group ("" for core).
        group: String,
        /// Plural resource.
        resource: String,
        /// Subresource or "".
        subresource: String,
        /// Namespace or "" (cluster scope, or all namespaces).
        namespace: String,
        /// Object name or "".
        name: String,
    },
    /// A non-resource request (`/metrics`, `/healthz`).
    NonResource {
        /// Verb (the lowercase HTTP method: `get`, `post`, …).
        verb: String,
        /// URL path.
        path: String,
    },
}

/// The decision and, when allowed by RBAC, which binding allowed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Allowed.
    pub allowed: bool,
    /// Why (`RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "z"`), or "".
    pub reason: String,
}

/// The rules every authenticated user has on a fresh cluster, with the name of the
/// bootstrap ClusterRole (and its binding) that grants them, in the order the authorizer
/// visits them.
fn bootstrap_rules() -> Vec<(&'static str, Value)> {
    vec![
        (
            "system:basic-user",
            json!({"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]}),
        ),
        (
            "system:basic-user",
            json!({"verbs": ["create"], "apiGroups": ["authentication.k8s.io"],
            "resources": ["selfsubjectreviews"]}),
        ),
        (
            "system:discovery",
            json!({"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*", "/apis",
            "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"]}),
        ),
    ]
}

fn strings(v: &Value) -> impl Iterator<Item = &str> {
    v.as_array().into_iter().flatten().filter_map(Value::as_str)
}

fn has(list: &Value, wanted: &str) -> bool {
    strings(list).any(|item| item == "*" || item == wanted)
}

/// Whether one policy rule allows `attrs`.
pub fn rule_allows(rule: &Value, attrs: &Attributes) -> bool {
    match attrs {
        Attributes::Resource {
            verb,
            group,
            resource,
            subresource,
            name,
            ..
        } => {
            let combined = if subresource.is_empty() {
                resource.clone()
            } else {
                format!("{resource}/{subresource}")
            };
            let resource_ok = strings(&rule["resources"]).any(|r| {
                r == "*"
                    || r == combined
                    || (!subresource.is_empty() && r.strip_prefix("*/") == Some(subresource.as_str()))
            });
            let names: Vec<&str> = strings(&rule["resourceNames"]).collect();
            let name_ok = names.is_empty() || names.contains(&name.as_str());
            has(&rule["verbs"], verb) && has(&rule["apiGroups"], group) && resource_ok && name_ok
        }
        Attributes::NonResource { verb, path } => {
            has(&rule["verbs"], verb)
                && strings(&rule["nonResourceURLs"]).any(|u| {
                    u == "*"
                        || u == path
                        || u.strip_suffix('*').is_some_and(|prefix| path.starts_with(prefix))
                })
        }
    }
}

/// Whether a binding subject is `user` (ServiceAccounts without a namespace are the
/// binding's).
fn subject_is(subject: &Value, user: &UserInfo, binding_namespace: &str) -> bool {
    let name = subject["name"].as_str().unwrap_or_default();
    match subject["kind"].as_str().unwrap_or_default() {
        "User" => user.username == name,
        "Group" => user.groups.iter().any(|g| g == name),
        "ServiceAccount" => {
            let ns = subject["namespace"]
                .as_str()
                .filter(|n| !n.is_empty())
                .unwrap_or(binding_namespace);
            user.username == format!("system:serviceaccount:{ns}:{name}")
        }
        _ => false,
    }
}

/// `User "alice"`, `ServiceAccount "bot/ns"`: how the authorizer names a subject.
fn describe_subject(subject: &Value, binding_namespace: &str) -> String {
    let kind = subject["kind"].as_str().unwrap_or_default();
    let name = subject["name"].as_str().unwrap_or_default();
    if kind == "ServiceAccount" {
        let ns = subject["namespace"]
            .as_str()
            .filter(|n| !n.is_empty())
            .unwrap_or(binding_namespace);
        return format!("{kind} \"{name}/{ns}\"");
    }
    format!("{kind} \"{name}\"")
}

fn id(group: &str, plural: &str) -> ResourceId {
    ResourceId {
        group: group.into(),
        plural: plural.into(),
    }
}

const RBAC: &str = "rbac.authorization.k8s.io";

/// The rules of the role a binding refers to (`Role` only in the binding's namespace).
fn role_rules(store: &Store, role_ref: &Value, binding_namespace: &str) -> Vec<Value> {
    let name = role_ref["name"].as_str().unwrap_or_default().to_string();
    let role = match role_ref["kind"].as_str() {
        Some("ClusterRole") => store.get(&id(RBAC, "clusterroles"), &(String::new(), name)),
        Some("Role") if !binding_namespace.is_empty() => {
            store.get(&id(RBAC, "roles"), &(binding_namespace.to_string(), name))
        }
        _ => None,
    };
    role.and_then(|r| r["rules"].as_array().cloned())
        .unwrap_or_default()
}

/// Decides `attrs` for `user` against what `store` holds.
pub fn authorize(store: &Store, user: &UserInfo, attrs: &Attributes) -> Decision {
    if user.groups.iter().any(|g| g == SUPERUSERS) {
        return Decision {
            allowed: true,
            reason: String::new(),
        };
    }
    let bootstrap = bootstrap_rules()
        .into_iter()
        .find(|(_, rule)| rule_allows(rule, attrs))
        .filter(|_| user.groups.iter().any(|g| g == AUTHENTICATED));
    if let Some((role, _)) = bootstrap {
        return Decision {
            allowed: true,
            reason: format!(
                "RBAC: allowed by ClusterRoleBinding \"{role}\" of ClusterRole \"{role}\" to Group \"{AUTHENTICATED}\""
            ),
        };
    }
    let allowed_by = |kind: &str, binding: &Value, namespace: &str| -> Option<String> {
        let subject = binding["subjects"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| subject_is(s, user, namespace))?;
        let rules = role_rules(store, &binding["roleRef"], namespace);
        rules.iter().any(|r| rule_allows(r, attrs)).then(|| {
            let name = binding["metadata"]["name"].as_str().unwrap_or_default();
            let shown = if namespace.is_empty() {
                name.to_string()
            } else {
                format!("{name}/{namespace}")
            };
            format!(
                "RBAC: allowed by {kind} \"{shown}\" of {} \"{}\" to {}",
                binding["roleRef"]["kind"].as_str().unwrap_or_default(),
                binding["roleRef"]["name"].as_str().unwrap_or_default(),
                describe_subject(subject, namespace)
            )
        })
    };
    let cluster_wide = store
        .range(&id(RBAC, "clusterrolebindings"), None, None)
        .find_map(|(_, b)| allowed_by("ClusterRoleBinding", b, ""));
    let namespaced = || match attrs {
        Attributes::Resource { namespace, .. } if !namespace.is_empty() => store
            .range(&id(RBAC, "rolebindings"), Some(namespace), None)
            .find_map(|(_, b)| allowed_by("RoleBinding", b, namespace)),
        _ => None,
    };
    match cluster_wide.or_else(namespaced) {
        Some(reason) => Decision {
            allowed: true,
            reason,
        },
        None => Decision {
            allowed: false,
            reason: String::new(),
        },
    }
}

/// The rules `user` has in `namespace` (what `SelfSubjectRulesReview` lists): every rule
/// of every role bound to the user cluster-wide or in `namespace`.
pub fn rules_of(store: &Store, user: &UserInfo, namespace: &str) -> Vec<Value> {
    if user.groups.iter().any(|g| g == SUPERUSERS) {
        return vec![
            json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}),
            json!({"verbs": ["*"], "nonResourceURLs": ["*"]}),
        ];
    }
    let mut rules: Vec<Value> = if user.groups.iter().any(|g| g == AUTHENTICATED) {
        bootstrap_rules().into_iter().map(|(_, rule)| rule).collect()
    } else {
        Vec::new()
    };
    let mut collect = |binding: &Value, binding_ns: &str| {
        let bound = binding["subjects"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|s| subject_is(s, user, binding_ns));
        if bound {
            rules.extend(role_rules(store, &binding["roleRef"], binding_ns));
        }
    };
    for (_, b) in store.range(&id(RBAC, "clusterrolebindings"), None, None) {
        collect(b, "");
    }
    for (_, b) in store.range(&id(RBAC, "rolebindings"), Some(namespace), None) {
        collect(b, namespace);
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(group: &str, resource: &str, subresource: &str, name: &str) -> Attributes {
        Attributes::Resource {
            verb: "get".into(),
            group: group.into(),
            resource: resource.into(),
            subresource: subresource.into(),
            namespace: "ns".into(),
            name: name.into(),
        }
    }

    #[test]
    fn rules_should_match_with_the_authorizers_wildcards() {
        let rule =
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["db"]});
        assert!(rule_allows(&rule, &get("", "secrets", "", "db")));
        assert!(!rule_allows(&rule, &get("", "secrets", "", "other")));
        assert!(
            !rule_allows(&rule, &get("", "secrets", "", "")),
            "a named rule does not allow lists"
        );
        let sub = json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*/status"]});
        assert!(rule_allows(&sub, &get("apps", "deployments", "status", "d")));
        assert!(!rule_allows(&sub, &get("apps", "deployments", "", "d")));
        let metrics = json!({"verbs": ["get"], "nonResourceURLs": ["/metrics", "/debug/*"]});
        let url = |path: &str| Attributes::NonResource {
            verb: "get".into(),
            path: path.into(),
        };
        assert!(rule_allows(&metrics, &url("/metrics")));
        assert!(rule_allows(&metrics, &url("/debug/actors")));
        assert!(!rule_allows(&metrics, &url("/healthz")));
    }

    #[test]
    fn subjects_should_match_users_groups_and_service_accounts() {
        let sa = UserInfo::named("system:serviceaccount:ns:bot");
        assert!(subject_is(
            &json!({"kind": "ServiceAccount", "name": "bot"}),
            &sa,
            "ns"
        ));
        assert!(!subject_is(
            &json!({"kind": "ServiceAccount", "name": "bot", "namespace": "other"}),
            &sa,
            "ns"
        ));
        assert!(subject_is(
            &json!({"kind": "Group", "name": "system:serviceaccounts:ns"}),
            &sa,
            ""
        ));
        assert!(!subject_is(&json!({"kind": "User", "name": "bot"}), &sa, ""));
    }
}
