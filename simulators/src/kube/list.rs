//! List requests: selectors, `limit` + `continue` pagination and list resourceVersion.
//!
//! # Caveats
//! The real server serves every page of a paginated list from one etcd snapshot (the rv
//! in the continue token). The simulator keeps no snapshots: later pages show current
//! objects after the page's last key, while every page reports the first page's
//! resourceVersion. A client that watches from that rv (as `kube_runtime::watcher`
//! does) therefore replays every change made during the pagination and converges to the
//! same state; it may see an object twice, never miss one.

use super::{
    errors::ApiError,
    metadata::{View, render_list},
    registry::ResourceType,
    selectors::Selectors,
    store::{ObjKey, Store},
};
use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The list-relevant query parameters.
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    /// Label and field selectors.
    pub selectors: Selectors,
    /// Page size; `None` or 0 means everything.
    pub limit: Option<usize>,
    /// Opaque continue token from a previous page.
    pub continue_token: Option<String>,
    /// `resourceVersion` (for lists: "", "0" or a number).
    pub resource_version: Option<String>,
    /// `resourceVersionMatch` (`NotOlderThan` or `Exact`).
    pub resource_version_match: Option<String>,
}

/// The decoded continue token: the list's rv and the last key served.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Continue {
    v: String,
    rv: u64,
    ns: String,
    name: String,
}

fn encode_continue(rv: u64, key: &ObjKey) -> String {
    let c = Continue {
        v: "meta.k8s.io/v1".into(),
        rv,
        ns: key.0.clone(),
        name: key.1.clone(),
    };
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(&c).expect("continue token serialises"))
}

fn decode_continue(token: &str) -> Result<Continue, ApiError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(token.trim_end_matches('='))
        .map_err(|_| invalid_continue())?;
    serde_json::from_slice(&bytes).map_err(|_| invalid_continue())
}

fn invalid_continue() -> ApiError {
    ApiError::bad_request("continue key is not valid: invalid continue token")
}

/// Lists `rt` objects (in `namespace` when given) as a `<Kind>List` / metadata list / Table.
///
/// # Errors
/// 400 for a malformed continue token; 410 Expired for `resourceVersionMatch=Exact` at an
/// rv other than the current one (no snapshots are kept) or a continue token older than
/// the retained history.
pub fn list(
    store: &Store,
    rt: &ResourceType,
    version: &str,
    namespace: Option<&str>,
    q: &ListQuery,
    view: View,
) -> Result<Value, ApiError> {
    let (list_rv, after) = match q.continue_token.as_deref().filter(|t| !t.is_empty()) {
        Some(token) => {
            let c = decode_continue(token)?;
            if c.rv < store.floor() {
                return Err(ApiError {
                    message: "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.".into(),
                    ..ApiError::expired(c.rv, store.floor())
                });
            }
            (c.rv, Some((c.ns, c.name)))
        }
        None => (list_resource_version(store, q)?, None),
    };
    let limit = q.limit.filter(|l| *l > 0).unwrap_or(usize::MAX);
    let mut matching = store
        .range(&rt.id(), namespace, after.as_ref())
        .filter(|(_, o)| q.selectors.matches(o));
    let page: Vec<(ObjKey, Value)> = matching
        .by_ref()
        .take(limit)
        .map(|(k, o)| (k.clone(), (**o).clone()))
        .collect();
    let remaining = matching.count();
    let mut list_meta = json!({ "resourceVersion": list_rv.to_string() });
    if remaining > 0
        && let Some((last, _)) = page.last()
    {
        list_meta["continue"] = json!(encode_continue(list_rv, last));
        list_meta["remainingItemCount"] = json!(remaining);
    }
    let items: Vec<Value> = page.into_iter().map(|(_, o)| o).collect();
    Ok(render_list(&items, rt, version, view, list_meta))
}

fn list_resource_version(store: &Store, q: &ListQuery) -> Result<u64, ApiError> {
    let requested = q.resource_version.as_deref().unwrap_or_default();
    if q.resource_version_match.as_deref() == Some("Exact") {
        let n: u64 = requested
            .parse()
            .map_err(|_| ApiError::bad_request(format!("invalid resource version: {requested:?}")))?;
        if n != store.rv() {
            return Err(ApiError::expired(n, store.rv()));
        }
    }
    Ok(store.rv())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kube::registry::ResourceId;

    #[test]
    fn continue_token_should_round_trip() {
        let key = ("ns".to_string(), "name-1".to_string());
        let c = decode_continue(&encode_continue(42, &key)).expect("valid token");
        assert_eq!((c.rv, c.ns, c.name), (42, key.0, key.1));
        assert_eq!(decode_continue("garbage!").unwrap_err().code, 400);
    }

    #[test]
    fn pages_should_cover_every_object_once_with_the_first_pages_rv() {
        let mut store = Store::new(100);
        let rt = store
            .registry
            .get(&ResourceId {
                group: "".into(),
                plural: "secrets".into(),
            })
            .cloned()
            .expect("builtin");
        for i in 0..7 {
            store.put(
                &rt.id(),
                ("ns".into(), format!("s{i}")),
                json!({"metadata": {"name": format!("s{i}")}}),
            );
        }
        let mut q = ListQuery {
            limit: Some(3),
            ..ListQuery::default()
        };
        let mut names = Vec::new();
        loop {
            let page = list(&store, &rt, "v1", Some("ns"), &q, View::Full).expect("page");
            assert_eq!(page["metadata"]["resourceVersion"], "7");
            names.extend(
                page["items"]
                    .as_array()
                    .expect("items")
                    .iter()
                    .map(|o| o["metadata"]["name"].clone()),
            );
            match page["metadata"]["continue"].as_str() {
                Some(c) => q.continue_token = Some(c.to_string()),
                None => break,
            }
        }
        assert_eq!(names.len(), 7);
    }
}
