//! The resource types the simulator serves: built-ins plus whatever CRDs register.
//!
//! # Invariants
//! - `(group, plural)` identifies one [`ResourceType`]; every served version of it shares
//!   one object store (the simulator does no version conversion, it only rewrites
//!   `apiVersion` on the way out).
//! - A type with `stored_as` keeps no objects of its own: it serves another type's objects
//!   in its own shape (`events.k8s.io` Events are core Events, see [`super::events`]).

mod builtins;
mod resource_type;

pub use resource_type::{ResourceId, ResourceType, VERBS};

use std::collections::BTreeMap;

/// All resource types currently served, keyed by [`ResourceId`].
///
/// Built-ins are stored objects only: no controller acts on them (Deployments create no
/// ReplicaSets, Pods never run), but they can be created, read, watched and patched.
#[derive(Debug, Clone)]
pub struct Registry {
    types: BTreeMap<ResourceId, ResourceType>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry {
            types: builtins::builtin_types()
                .into_iter()
                .map(|t| (t.id(), t))
                .collect(),
        }
    }
}

impl Registry {
    /// The type served at `group/version/plural`, if any.
    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<&ResourceType> {
        let id = ResourceId {
            group: group.into(),
            plural: plural.into(),
        };
        self.types
            .get(&id)
            .filter(|t| t.versions.iter().any(|v| v == version))
    }

    /// The type stored under `id`.
    pub fn get(&self, id: &ResourceId) -> Option<&ResourceType> {
        self.types.get(id)
    }

    /// The built-in type `group/plural`, for unit tests of the per-kind rules.
    #[cfg(test)]
    pub(crate) fn builtin_type(group: &str, plural: &str) -> ResourceType {
        Self::default()
            .get(&ResourceId {
                group: group.into(),
                plural: plural.into(),
            })
            .cloned()
            .expect("a built-in type")
    }

    /// Where the objects of `id` are kept: its own store, or the one it serves from.
    pub fn storage_of<'a>(&'a self, id: &'a ResourceId) -> &'a ResourceId {
        self.types
            .get(id)
            .and_then(|t| t.stored_as.as_ref())
            .unwrap_or(id)
    }

    /// Registers (or re-registers) a type; returns whether anything changed.
    pub fn register(&mut self, t: ResourceType) -> bool {
        let id = t.id();
        if self.types.get(&id) == Some(&t) {
            return false;
        }
        self.types.insert(id, t);
        true
    }

    /// Removes a type (CRD deleted).
    pub fn unregister(&mut self, id: &ResourceId) {
        self.types.remove(id);
    }

    /// All types, sorted by group then plural.
    pub fn all(&self) -> impl Iterator<Item = &ResourceType> {
        self.types.values()
    }

    /// Groups other than core, each with its versions (preferred first), in a stable order.
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for t in self.types.values().filter(|t| !t.group.is_empty()) {
            let vs = out.entry(t.group.clone()).or_default();
            for v in &t.versions {
                if !vs.contains(v) {
                    vs.push(v.clone());
                }
            }
        }
        out.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_should_serve_builtins_only_at_their_versions() {
        let r = Registry::default();
        assert!(r.lookup("apps", "v1", "deployments").is_some());
        assert!(r.lookup("apps", "v1beta1", "deployments").is_none());
    }
}
