//! What a ServiceAccount may do under the rendered RBAC objects, decided like the Kubernetes RBAC
//! authorizer: a request is allowed when some rule bound to the account matches it.
//!
//! Bindings: a ClusterRoleBinding grants its ClusterRole everywhere (every namespace and cluster
//! scope); a RoleBinding grants its Role or ClusterRole only inside the binding's namespace.
//! Only objects in the rendering count: no default cluster roles (discovery is not checked here).

use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, Subject};
use serde_json::Value;

/// One API request, as the authorizer sees it.
#[derive(Debug, Clone, Copy)]
pub struct ApiRequest<'a> {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, …
    pub verb: &'a str,
    /// API group; `""` for the core group.
    pub group: &'a str,
    /// Resource, with `/subresource` when there is one (`ferrvaultsecrets/status`).
    pub resource: &'a str,
    /// Namespace, or `None` for a cluster-scoped request or a list across all namespaces.
    pub namespace: Option<&'a str>,
    /// Object name, when the request names one.
    pub name: Option<&'a str>,
}

/// The rules granted to one ServiceAccount, with where each applies.
pub struct Permissions {
    /// (namespace the rule is limited to, or `None` for everywhere; the rule).
    grants: Vec<(Option<String>, PolicyRule)>,
}

impl Permissions {
    /// The permissions of ServiceAccount `namespace/name` under the RBAC objects among `objects`.
    pub fn of_service_account(objects: &[Value], namespace: &str, name: &str) -> Self {
        let of_kind = |kind: &'static str| objects.iter().filter(move |object| object["kind"] == kind);
        let cluster_roles: Vec<ClusterRole> = of_kind("ClusterRole").map(typed).collect();
        let roles: Vec<Role> = of_kind("Role").map(typed).collect();
        let is_subject = |subjects: &Option<Vec<Subject>>| {
            subjects.iter().flatten().any(|subject| {
                subject.kind == "ServiceAccount"
                    && subject.name == name
                    && subject.namespace.as_deref() == Some(namespace)
            })
        };
        let cluster_role_rules = |role_name: &str| -> Vec<PolicyRule> {
            cluster_roles
                .iter()
                .filter(|role| role.metadata.name.as_deref() == Some(role_name))
                .flat_map(|role| role.rules.clone().unwrap_or_default())
                .collect()
        };
        let mut grants = Vec::new();
        for binding in of_kind("ClusterRoleBinding").map(typed::<ClusterRoleBinding>) {
            if is_subject(&binding.subjects) && binding.role_ref.kind == "ClusterRole" {
                grants.extend(
                    cluster_role_rules(&binding.role_ref.name)
                        .into_iter()
                        .map(|rule| (None, rule)),
                );
            }
        }
        for binding in of_kind("RoleBinding").map(typed::<RoleBinding>) {
            let scope = binding
                .metadata
                .namespace
                .clone()
                .expect("a RoleBinding needs a namespace");
            if !is_subject(&binding.subjects) {
                continue;
            }
            let rules = match binding.role_ref.kind.as_str() {
                "ClusterRole" => cluster_role_rules(&binding.role_ref.name),
                _ => roles
                    .iter()
                    .filter(|role| {
                        role.metadata.name.as_deref() == Some(binding.role_ref.name.as_str())
                            && role.metadata.namespace.as_deref() == Some(scope.as_str())
                    })
                    .flat_map(|role| role.rules.clone().unwrap_or_default())
                    .collect(),
            };
            grants.extend(rules.into_iter().map(|rule| (Some(scope.clone()), rule)));
        }
        Self { grants }
    }

    /// Whether some granted rule allows `request`.
    pub fn allows(&self, request: &ApiRequest<'_>) -> bool {
        self.grants
            .iter()
            .any(|(scope, rule)| in_scope(scope.as_deref(), request.namespace) && rule_matches(rule, request))
    }
}

impl Permissions {
    /// Each (scope, verb, group, resource, name) a rule grants that none of `requests` uses, as
    /// `scope verb group/resource name` (a rule without `resourceNames` grants any name: one
    /// request of any name uses it).
    pub fn unused(&self, requests: &[ApiRequest<'_>]) -> Vec<String> {
        let mut unused = Vec::new();
        for (scope, rule) in &self.grants {
            let names: Vec<Option<String>> = match rule.resource_names.as_deref() {
                Some(names) if !names.is_empty() => names.iter().cloned().map(Some).collect(),
                _ => vec![None],
            };
            for group in rule.api_groups.iter().flatten() {
                for resource in rule.resources.iter().flatten() {
                    for verb in &rule.verbs {
                        for name in &names {
                            let single = PolicyRule {
                                api_groups: Some(vec![group.clone()]),
                                resources: Some(vec![resource.clone()]),
                                verbs: vec![verb.clone()],
                                resource_names: name.clone().map(|name| vec![name]),
                                non_resource_urls: None,
                            };
                            let used = requests.iter().any(|request| {
                                in_scope(scope.as_deref(), request.namespace)
                                    && rule_matches(&single, request)
                            });
                            if !used {
                                unused.push(format!(
                                    "{} {verb} {group}/{resource} {}",
                                    scope.as_deref().unwrap_or("<cluster>"),
                                    name.as_deref().unwrap_or("<any name>")
                                ));
                            }
                        }
                    }
                }
            }
        }
        unused
    }
}

/// Whether a grant limited to `scope` (`None`: everywhere) covers a request in `namespace`.
fn in_scope(scope: Option<&str>, namespace: Option<&str>) -> bool {
    match (scope, namespace) {
        (None, _) => true,
        (Some(scope), Some(namespace)) => scope == namespace,
        (Some(_), None) => false,
    }
}

/// Whether one rule matches, with the authorizer's `*` wildcards and `resourceNames` restriction.
fn rule_matches(rule: &PolicyRule, request: &ApiRequest<'_>) -> bool {
    let has = |list: &[String], wanted: &str| list.iter().any(|item| item == "*" || item == wanted);
    let resource_matches = rule.resources.iter().flatten().any(|resource| {
        resource == "*"
            || resource == request.resource
            || resource.strip_prefix("*/").is_some_and(|sub| {
                request
                    .resource
                    .split_once('/')
                    .is_some_and(|(_, wanted)| wanted == sub)
            })
    });
    let name_matches = match (&rule.resource_names, request.name) {
        (None, _) => true,
        (Some(names), _) if names.is_empty() => true,
        (Some(names), Some(name)) => names.iter().any(|allowed| allowed == name),
        (Some(_), None) => false,
    };
    has(&rule.verbs, request.verb)
        && has(rule.api_groups.as_deref().unwrap_or_default(), request.group)
        && resource_matches
        && name_matches
}

fn typed<T: serde::de::DeserializeOwned>(object: &Value) -> T {
    serde_json::from_value(object.clone())
        .unwrap_or_else(|error| panic!("RBAC object does not fit its type: {error}"))
}
