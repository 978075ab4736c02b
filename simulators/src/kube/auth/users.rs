//! The user a request acts as, as the real server's authenticators and impersonation
//! filter decide it.
//!
//! - `Impersonate-User` (what `kubectl --as` and a kubeconfig `as:` send) makes the request
//!   act as that user, with the `Impersonate-Group` groups; a ServiceAccount user name
//!   without groups gets the ServiceAccount groups, as the real filter adds them.
//! - A bearer token registered with the simulator (see [`super::super::KubeSim::register_identity`])
//!   authenticates as its identity.
//! - A request without credentials is the cluster administrator: the kubeconfig the
//!   simulator writes carries none (kubectl sends no token over plain HTTP), and on a real
//!   cluster that kubeconfig would hold the admin's credentials.
//!
//! Every authenticated user is in `system:authenticated`.

use super::super::audit::AuditLog;
use serde_json::{Value, json};

/// The administrator's user name (requests without credentials).
pub const ADMIN: &str = "kubernetes-admin";
/// The group whose members every authorizer allows everything, as on a real server.
pub const SUPERUSERS: &str = "system:masters";
/// The group of every authenticated user.
pub const AUTHENTICATED: &str = "system:authenticated";

/// A user as authenticators describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    /// User name (`alice`, `system:serviceaccount:ns:name`).
    pub username: String,
    /// Groups, `system:authenticated` included.
    pub groups: Vec<String>,
}

impl UserInfo {
    /// A user with the groups a real server gives its name: a ServiceAccount's
    /// (`system:serviceaccounts`, `system:serviceaccounts:<ns>`) and `system:authenticated`.
    pub fn named(username: &str) -> Self {
        let mut groups = Vec::new();
        if let Some((ns, _)) = service_account(username) {
            groups.push("system:serviceaccounts".to_string());
            groups.push(format!("system:serviceaccounts:{ns}"));
        }
        groups.push(AUTHENTICATED.to_string());
        UserInfo {
            username: username.to_string(),
            groups,
        }
    }

    /// The administrator (requests without credentials).
    pub fn admin() -> Self {
        UserInfo {
            username: ADMIN.to_string(),
            groups: vec![SUPERUSERS.to_string(), AUTHENTICATED.to_string()],
        }
    }

    /// `userInfo` as reviews return it.
    pub fn to_json(&self) -> Value {
        json!({ "username": self.username, "groups": self.groups })
    }
}

/// `(namespace, name)` of a ServiceAccount user name.
pub fn service_account(username: &str) -> Option<(&str, &str)> {
    username.strip_prefix("system:serviceaccount:")?.split_once(':')
}

/// The user of a request from its `Impersonate-User`, `Impersonate-Group` and
/// `Authorization` headers. `None` for a bearer token nobody registered (a real server
/// answers 401).
pub fn authenticate(headers: &http::HeaderMap, tokens: &AuditLog) -> Option<UserInfo> {
    let text = |v: &http::HeaderValue| v.to_str().ok().map(str::to_string);
    if let Some(user) = headers
        .get("impersonate-user")
        .and_then(text)
        .filter(|u| !u.is_empty())
    {
        let groups: Vec<String> = headers
            .get_all("impersonate-group")
            .iter()
            .filter_map(text)
            .collect();
        if groups.is_empty() {
            return Some(UserInfo::named(&user));
        }
        let mut info = UserInfo {
            username: user,
            groups,
        };
        if !info.groups.iter().any(|g| g == AUTHENTICATED) {
            info.groups.push(AUTHENTICATED.to_string());
        }
        return Some(info);
    }
    let token = headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|a| a.strip_prefix("Bearer "))
        .map(str::trim);
    match token {
        None => Some(UserInfo::admin()),
        Some(token) => tokens.user_of_token(token).map(|name| UserInfo::named(&name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_account_should_be_in_its_groups() {
        let sa = UserInfo::named("system:serviceaccount:monitoring:prometheus");
        assert_eq!(
            sa.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:monitoring",
                AUTHENTICATED
            ]
        );
        assert_eq!(UserInfo::named("alice").groups, [AUTHENTICATED]);
    }

    #[test]
    fn credentials_should_decide_the_user() {
        let tokens = AuditLog::default();
        tokens.register_token("t".into(), "system:serviceaccount:ns:bot");
        let mut headers = http::HeaderMap::new();
        assert_eq!(authenticate(&headers, &tokens), Some(UserInfo::admin()));
        headers.insert(http::header::AUTHORIZATION, "Bearer t".parse().expect("header"));
        assert_eq!(
            authenticate(&headers, &tokens).map(|u| u.username),
            Some("system:serviceaccount:ns:bot".into())
        );
        headers.insert(
            http::header::AUTHORIZATION,
            "Bearer forged".parse().expect("header"),
        );
        assert_eq!(authenticate(&headers, &tokens), None);
        headers.insert("impersonate-user", "alice".parse().expect("header"));
        headers.append("impersonate-group", "devs".parse().expect("header"));
        assert_eq!(
            authenticate(&headers, &tokens).map(|u| u.groups),
            Some(vec!["devs".into(), AUTHENTICATED.into()])
        );
    }
}
