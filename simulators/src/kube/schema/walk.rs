//! What the schema walks share (pruning, value validation, CEL): the field path of a child, and
//! for ratcheting, the item of the stored object that an item of a list corresponds to.

use serde_json::Value;

/// `base.child` (or `child` at the root).
pub fn child_path(base: &str, child: &str) -> String {
    if base.is_empty() {
        child.to_owned()
    } else {
        format!("{base}.{child}")
    }
}

/// The fields whose value is compared when the schema marks a list as a map.
pub fn list_map_keys(schema: &Value) -> Vec<&str> {
    schema
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// The item of `old` that `item` (of a list typed `map` or `set` by `schema`) corresponds
/// to, for ratcheting: the entry with the same keys, or the equal element. Items of atomic
/// lists correspond to nothing.
pub fn correlated_item<'a>(schema: &Value, item: &Value, old: Option<&'a Value>) -> Option<&'a Value> {
    let old_items = old?.as_array()?;
    match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("map") => {
            let keys = list_map_keys(schema);
            old_items
                .iter()
                .find(|o| keys.iter().all(|k| o.get(*k) == item.get(*k)))
        }
        Some("set") => old_items.iter().find(|o| *o == item),
        _ => None,
    }
}
