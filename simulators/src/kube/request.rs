//! Request paths, verbs and query parameters, parsed the way the real server's request-info
//! resolver does.

use std::collections::HashMap;

use percent_encoding::percent_decode_str;

/// The query parameters of one request.
pub type Query = HashMap<String, String>;

/// What a request path addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/version`.
    Version,
    /// `/api`.
    CoreVersions,
    /// `/apis`.
    Groups,
    /// `/apis/{group}`.
    Group(String),
    /// `/api/v1` or `/apis/{group}/{version}`.
    Resources {
        /// API group ("" for core).
        group: String,
        /// Version.
        version: String,
    },
    /// `/healthz`, `/livez`, `/readyz`.
    Health,
    /// `/openapi/v3` (empty) or `/openapi/v3/<group-version path>`.
    OpenApiV3(Vec<String>),
    /// `/openapi/v2`.
    OpenApiV2,
    /// `/_sim/...` admin endpoints (the segments after `_sim`).
    Admin(Vec<String>),
    /// A resource or collection.
    Resource(ResourcePath),
    /// Anything else.
    Unknown,
}

/// The parts of a resource path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePath {
    /// API group.
    pub group: String,
    /// Version.
    pub version: String,
    /// Namespace segment, if any.
    pub namespace: Option<String>,
    /// Plural resource.
    pub plural: String,
    /// Object name, if any.
    pub name: Option<String>,
    /// Subresource, if any.
    pub subresource: Option<String>,
}

/// Parses a request path.
pub fn route(path: &str) -> Route {
    let segs: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned())
        .collect();
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    match s.as_slice() {
        ["version"] => Route::Version,
        ["healthz" | "livez" | "readyz", ..] => Route::Health,
        ["openapi", "v2"] => Route::OpenApiV2,
        ["openapi", "v3", rest @ ..] => Route::OpenApiV3(rest.iter().map(|r| r.to_string()).collect()),
        ["_sim", rest @ ..] => Route::Admin(rest.iter().map(|r| r.to_string()).collect()),
        ["api"] => Route::CoreVersions,
        ["api", v] => Route::Resources {
            group: String::new(),
            version: v.to_string(),
        },
        ["api", v, rest @ ..] => resource("", v, rest),
        ["apis"] => Route::Groups,
        ["apis", g] => Route::Group(g.to_string()),
        ["apis", g, v] => Route::Resources {
            group: g.to_string(),
            version: v.to_string(),
        },
        ["apis", g, v, rest @ ..] => resource(g, v, rest),
        _ => Route::Unknown,
    }
}

fn resource(group: &str, version: &str, rest: &[&str]) -> Route {
    let p = |namespace: Option<&str>, plural: &str, name: Option<&str>, sub: Option<&str>| {
        Route::Resource(ResourcePath {
            group: group.into(),
            version: version.into(),
            namespace: namespace.map(String::from),
            plural: plural.into(),
            name: name.map(String::from),
            subresource: sub.map(String::from),
        })
    };
    match rest {
        ["namespaces", ns, sub @ ("status" | "finalize")] => p(None, "namespaces", Some(ns), Some(sub)),
        ["namespaces", ns, plural] => p(Some(ns), plural, None, None),
        ["namespaces", ns, plural, name] => p(Some(ns), plural, Some(name), None),
        ["namespaces", ns, plural, name, sub] => p(Some(ns), plural, Some(name), Some(sub)),
        [plural] => p(None, plural, None, None),
        [plural, name] => p(None, plural, Some(name), None),
        [plural, name, sub] => p(None, plural, Some(name), Some(sub)),
        _ => Route::Unknown,
    }
}

/// The Kubernetes verb of a resource request.
pub fn verb(method: &http::Method, has_name: bool, watch: bool) -> Option<&'static str> {
    use http::Method;
    Some(match (method.clone(), has_name) {
        (Method::GET | Method::HEAD, _) if watch => "watch",
        (Method::GET | Method::HEAD, true) => "get",
        (Method::GET | Method::HEAD, false) => "list",
        (Method::POST, false) => "create",
        (Method::PUT, true) => "update",
        (Method::PATCH, true) => "patch",
        (Method::DELETE, true) => "delete",
        (Method::DELETE, false) => "deletecollection",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(path: &str) -> ResourcePath {
        match route(path) {
            Route::Resource(p) => p,
            other => panic!("{path} parsed as {other:?}"),
        }
    }

    #[test]
    fn route_should_tell_namespace_subresources_from_namespaced_collections() {
        let status = res("/api/v1/namespaces/team-a/status");
        assert_eq!(
            (
                status.plural.as_str(),
                status.name.as_deref(),
                status.subresource.as_deref()
            ),
            ("namespaces", Some("team-a"), Some("status"))
        );
        let secrets = res("/api/v1/namespaces/team-a/secrets");
        assert_eq!(
            (
                secrets.namespace.as_deref(),
                secrets.plural.as_str(),
                secrets.name
            ),
            (Some("team-a"), "secrets", None)
        );
        let d = res("/apis/apps/v1/namespaces/x/deployments/web/status");
        assert_eq!(
            (d.group.as_str(), d.subresource.as_deref()),
            ("apps", Some("status"))
        );
        assert_eq!(route("/openapi/v2"), Route::OpenApiV2);
        assert_eq!(
            route("/openapi/v3/apis/apps/v1"),
            Route::OpenApiV3(vec!["apis".into(), "apps".into(), "v1".into()])
        );
        assert_eq!(route("/apis/apps"), Route::Group("apps".into()));
    }
}
