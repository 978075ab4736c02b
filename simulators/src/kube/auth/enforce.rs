//! RBAC on requests, when a simulator is started with `enforce_rbac` (see
//! [`crate::kube::KubeSimOptions`]): every API request is authorized like on a real server
//! (resource requests by verb, group, resource, subresource, namespace and name;
//! non-resource requests by lowercase method and path) and refused with the real
//! server's 401 or 403 `Status`. Off by default: most tests act as registered identities
//! that no RoleBinding names. Impersonation is not itself authorized.

use super::{
    rbac::{Attributes, authorize},
    users::UserInfo,
};
use crate::kube::{
    errors::ApiError,
    request::{ResourcePath, Route, verb},
    store::Store,
};
use http::Method;
use serde_json::json;

/// What `route` asks to do, `None` for what is never authorized (the `/_sim` admin API).
pub fn attributes(route: &Route, method: &Method, path: &str, watch: bool) -> Option<Attributes> {
    match route {
        Route::Admin(_) => None,
        Route::Resource(p) => Some(resource_attributes(p, method, watch)),
        _ => Some(Attributes::NonResource {
            verb: method.as_str().to_lowercase(),
            path: path.to_string(),
        }),
    }
}

fn resource_attributes(p: &ResourcePath, method: &Method, watch: bool) -> Attributes {
    Attributes::Resource {
        verb: verb(method, p.name.is_some(), watch)
            .unwrap_or_default()
            .to_string(),
        group: p.group.clone(),
        resource: p.plural.clone(),
        subresource: p.subresource.clone().unwrap_or_default(),
        namespace: p.namespace.clone().unwrap_or_default(),
        name: p.name.clone().unwrap_or_default(),
    }
}

/// Whether `user` (`None`: an unknown bearer token) may do `attrs`.
///
/// # Errors
/// 401 for an unknown token, 403 Forbidden (worded as the real server words it) when no
/// rule allows the request.
pub fn check(store: &Store, user: Option<&UserInfo>, attrs: &Attributes) -> Result<(), ApiError> {
    let user = user.ok_or_else(ApiError::unauthorized)?;
    if authorize(store, user, attrs).allowed {
        return Ok(());
    }
    Err(forbidden(&user.username, attrs))
}

fn forbidden(username: &str, attrs: &Attributes) -> ApiError {
    match attrs {
        Attributes::NonResource { verb, path } => ApiError::forbidden(format!(
            "forbidden: User \"{username}\" cannot {verb} path \"{path}\""
        )),
        Attributes::Resource {
            verb,
            group,
            resource,
            subresource,
            namespace,
            name,
        } => {
            let shown = if subresource.is_empty() {
                resource.clone()
            } else {
                format!("{resource}/{subresource}")
            };
            let qualified = if group.is_empty() {
                resource.clone()
            } else {
                format!("{resource}.{group}")
            };
            let subject = if name.is_empty() {
                qualified
            } else {
                format!("{qualified} \"{name}\"")
            };
            let scope = if namespace.is_empty() {
                "at the cluster scope".to_string()
            } else {
                format!("in the namespace \"{namespace}\"")
            };
            let mut e = ApiError::forbidden(format!(
                "{subject} is forbidden: User \"{username}\" cannot {verb} resource \"{shown}\" in API group \"{group}\" {scope}"
            ));
            let mut details = json!({ "name": name, "kind": resource });
            if !group.is_empty() {
                details["group"] = json!(group);
            }
            e.details = Some(details);
            e
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_should_be_worded_like_the_real_server() {
        let attrs = Attributes::Resource {
            verb: "list".into(),
            group: String::new(),
            resource: "secrets".into(),
            subresource: String::new(),
            namespace: "default".into(),
            name: String::new(),
        };
        assert_eq!(
            forbidden("alice", &attrs).message,
            "secrets is forbidden: User \"alice\" cannot list resource \"secrets\" in API group \"\" in the namespace \"default\""
        );
        let scale = Attributes::Resource {
            verb: "patch".into(),
            group: "apps".into(),
            resource: "deployments".into(),
            subresource: "scale".into(),
            namespace: String::new(),
            name: "web".into(),
        };
        assert_eq!(
            forbidden("bob", &scale).message,
            "deployments.apps \"web\" is forbidden: User \"bob\" cannot patch resource \"deployments/scale\" in API group \"apps\" at the cluster scope"
        );
        let metrics = Attributes::NonResource {
            verb: "get".into(),
            path: "/metrics".into(),
        };
        assert_eq!(
            forbidden("carol", &metrics).message,
            "forbidden: User \"carol\" cannot get path \"/metrics\""
        );
    }
}
