//! Response views negotiated by the `Accept` header: the full object, metadata only
//! (`as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`, what `metadata_watcher` asks
//! for) and `as=Table` (what `kubectl get` asks for; see [`super::table`]).

use super::{
    events, printers,
    registry::ResourceType,
    schema,
    table::{table, table_of_rows},
};
use serde_json::{Value, json};

/// How objects are rendered in a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The object itself.
    Full,
    /// `PartialObjectMetadata`: kind/apiVersion of meta.k8s.io plus the object's metadata.
    Metadata,
    /// A `meta.k8s.io/v1` `Table` (Name, then the CRD's printer columns or Age); rows embed the object as
    /// selected by `includeObject` (`true` = whole object, `false` = metadata only).
    Table {
        /// `includeObject=Object`.
        include_object: bool,
    },
}

impl View {
    /// The view asked for by the first acceptable media type in `Accept`.
    ///
    /// Only `meta.k8s.io/v1` is offered, like a current server; a client that lists a
    /// plain `application/json` fallback after something unknown gets the full object.
    pub fn negotiate(accept: &str, include_object: Option<&str>) -> View {
        for media in accept.split(',') {
            let params: Vec<&str> = media.split(';').map(str::trim).collect();
            let param = |k: &str| params.iter().find_map(|p| p.strip_prefix(k)?.strip_prefix('='));
            let is_meta_v1 = param("g") == Some("meta.k8s.io") && param("v") == Some("v1");
            match param("as") {
                Some("PartialObjectMetadata" | "PartialObjectMetadataList") if is_meta_v1 => {
                    return View::Metadata;
                }
                Some("Table") if is_meta_v1 => {
                    return View::Table {
                        include_object: include_object == Some("Object"),
                    };
                }
                Some(_) => continue,
                None if params[0] == "application/json" || params[0] == "*/*" => return View::Full,
                None => continue,
            }
        }
        View::Full
    }

    /// The `Content-Type` of a response in this view.
    pub fn content_type(self) -> &'static str {
        "application/json"
    }
}

/// `PartialObjectMetadata` for an object.
pub fn partial(obj: &Value) -> Value {
    json!({ "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"] })
}

/// One object as served at `version` in `view` (tables get a one-row table).
pub fn render(obj: &Value, rt: &ResourceType, version: &str, view: View) -> Value {
    match view {
        View::Full => at_version(obj, rt, version),
        View::Metadata => partial(obj),
        View::Table { include_object } => {
            table_of(std::slice::from_ref(obj), rt, version, include_object, &json!({}))
        }
    }
}

/// The object as read: custom resources get their storage version's defaults (they may
/// have been stored before a default existed), everything its served `apiVersion` and kind.
fn at_version(obj: &Value, rt: &ResourceType, version: &str) -> Value {
    let mut o = match rt.storage_schema() {
        Some(schema) => schema::default_on_read(schema, obj),
        None => events::from_stored(rt, obj),
    };
    o["apiVersion"] = json!(rt.api_version(version));
    o["kind"] = json!(rt.kind);
    o
}

/// A list response for `items` in `view`; `list_meta` is the ListMeta (resourceVersion,
/// continue, remainingItemCount).
pub fn render_list(items: &[Value], rt: &ResourceType, version: &str, view: View, list_meta: Value) -> Value {
    match view {
        View::Full => json!({
            "kind": rt.list_kind(),
            "apiVersion": rt.api_version(version),
            "metadata": list_meta,
            "items": items.iter().map(|o| at_version(o, rt, version)).collect::<Vec<_>>(),
        }),
        View::Metadata => json!({
            "kind": "PartialObjectMetadataList",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": list_meta,
            "items": items.iter().map(partial).collect::<Vec<_>>(),
        }),
        View::Table { include_object } => table_of(items, rt, version, include_object, &list_meta),
    }
}

fn table_of(
    items: &[Value],
    rt: &ResourceType,
    version: &str,
    include_object: bool,
    list_meta: &Value,
) -> Value {
    let embed = |o: &Value| {
        if include_object {
            at_version(o, rt, version)
        } else {
            partial(o)
        }
    };
    match printers::printer(rt) {
        Some(p) => table_of_rows(items, printers::definitions(&p), p.cells, list_meta, embed),
        None => table(items, &rt.printer_columns, list_meta, embed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_header_should_select_metadata_table_or_full() {
        let meta = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
        assert_eq!(View::negotiate(meta, None), View::Metadata);
        let table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(
            View::negotiate(table, Some("Object")),
            View::Table { include_object: true }
        );
        let only_beta = "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(View::negotiate(only_beta, None), View::Full);
        assert_eq!(
            View::negotiate("application/vnd.kubernetes.protobuf,application/json", None),
            View::Full
        );
    }
}
