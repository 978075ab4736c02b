//! What the runtime schedules: one key per object a controller reconciles.

use std::fmt;

/// Identifies one object that one controller reconciles.
///
/// `controller` is a fixed name (`"ferrvaultsecret"`, …) so it can be a bounded metric label.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    /// The controller that owns this key, e.g. `"ferrvaultsecret"`.
    pub controller: &'static str,
    /// The object's namespace; `None` for cluster-scoped kinds.
    pub namespace: Option<String>,
    /// The object's name.
    pub name: String,
}

impl ObjectKey {
    /// A key for a namespaced object.
    pub fn namespaced(
        controller: &'static str,
        namespace: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        Self {
            controller,
            namespace: Some(namespace.into()),
            name: name.into(),
        }
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{}:{}/{}", self.controller, ns, self.name),
            None => write!(f, "{}:{}", self.controller, self.name),
        }
    }
}

/// Why a watcher queues a key: it decides the lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    /// A watch event: the object is new, changed or deleted (also one found deleted by a
    /// re-list). Waits in the `Changed` lane.
    Event,
    /// The object was in a (re-)list: make sure it is in sync. Waits in the `Refresh`
    /// lane, so a restart's backlog never delays a new object.
    Listed,
}

impl Cause {
    /// The lane keys of this cause wait in.
    pub fn lane(self) -> Lane {
        match self {
            Self::Event => Lane::Changed,
            Self::Listed => Lane::Refresh,
        }
    }
}

/// Which lane a key waits in. New and changed objects run before periodic refreshes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lane {
    /// A watch event said the object is new or changed: run as soon as a worker is free.
    Changed,
    /// A scheduled refresh came due, or a (re-)list found the object: run when no `Changed`
    /// key waits.
    Refresh,
}
