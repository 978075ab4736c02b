//! The `namespace`/`name` label set of the per-object series.

use prometheus_client::encoding::EncodeLabelSet;

/// `namespace`/`name` of one custom resource.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ObjectLabels {
    /// The object's namespace.
    pub namespace: String,
    /// The object's name.
    pub name: String,
}

impl ObjectLabels {
    pub(super) fn new(namespace: &str, name: &str) -> Self {
        Self {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }
}
