//! Which namespaces a cluster-scoped object reaches: [`NamespaceSelection`] (names and a label
//! selector), used by a ClusterFerrVaultConnection's `allowedNamespaces`.
//!
//! # Guarantees (enforced by the CRD schema, checked again by the reconciler)
//! - Empty means **no namespace** (not every one): `names: ["*"]` is how every namespace is
//!   allowed, and `"*"` must then be the only name.
//! - Every list, map and string has a bound from [`bounds`](super::bounds): a selection is at most
//!   a few hundred KiB however it is written, and matching one namespace costs at most
//!   [`MAX_NAMESPACE_NAMES`] comparisons plus the selector's terms.
//!
//! # Caveats
//! WARNING: whoever can set a namespace's labels can make it match a selector. Select on
//! `kubernetes.io/metadata.name` (set by the API server) or on labels only cluster admins may set.

use std::collections::BTreeMap;

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::bounds::{
    MAX_LABEL_TEXT, MAX_NAMESPACE_NAME, MAX_NAMESPACE_NAMES, MAX_SELECTOR_TERMS, MAX_SELECTOR_VALUES,
};

/// The name that stands for every namespace in [`NamespaceSelection::names`].
pub const EVERY_NAMESPACE: &str = "*";

/// The CEL rule keeping [`EVERY_NAMESPACE`] alone in `names`.
const WILDCARD_ALONE_RULE: &str = "!('*' in self.names) || size(self.names) == 1";

/// Namespaces chosen by name and by labels: a namespace is selected when its name is listed (or
/// `names` is `["*"]`) **or** its labels match `selector`. Both empty selects nothing.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[x_kube(validation = Rule::new(WILDCARD_ALONE_RULE).message("\"*\" must be the only name when it is used"))]
pub struct NamespaceSelection {
    /// Namespace names; `["*"]` is every namespace.
    #[serde(default)]
    #[schemars(length(max = MAX_NAMESPACE_NAMES), inner(length(max = MAX_NAMESPACE_NAME)))]
    pub names: Vec<String>,
    /// A label selector on the namespaces' labels; unset selects none by labels. An empty
    /// selector (`{}`) selects none either: `names: ["*"]` says "every namespace".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<NamespaceLabelSelector>,
}

impl NamespaceSelection {
    /// Whether this selection names or selects nothing at all.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
            && self
                .selector
                .as_ref()
                .is_none_or(NamespaceLabelSelector::is_empty)
    }
}

/// A Kubernetes label selector with bounded lists: `matchLabels` and `matchExpressions`, every
/// term must hold (AND).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceLabelSelector {
    /// Labels the namespace must carry with exactly these values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = MAX_SELECTOR_TERMS), inner(length(max = MAX_LABEL_TEXT)))]
    pub match_labels: BTreeMap<String, String>,
    /// Set-based requirements on the namespace's labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_SELECTOR_TERMS))]
    pub match_expressions: Vec<LabelRequirement>,
}

impl NamespaceLabelSelector {
    /// Whether the selector has no term (it then selects nothing).
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }
}

/// One set-based requirement of a label selector.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct LabelRequirement {
    /// The label key.
    #[schemars(length(max = MAX_LABEL_TEXT))]
    pub key: String,
    /// How the label's value relates to `values`.
    pub operator: LabelOperator,
    /// The values (`In`, `NotIn`); empty for `Exists` and `DoesNotExist`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_SELECTOR_VALUES), inner(length(max = MAX_LABEL_TEXT)))]
    pub values: Vec<String>,
}

/// The operators of a [`LabelRequirement`], as Kubernetes spells them.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum LabelOperator {
    /// The label is set to one of `values`.
    In,
    /// The label is unset or set to none of `values`.
    NotIn,
    /// The label is set.
    Exists,
    /// The label is unset.
    DoesNotExist,
}

/// What happens to the Secrets already written in a namespace that stops being allowed.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum Revocation {
    /// They stay as last written (the default): revoking access stops refreshes, not workloads.
    #[default]
    Keep,
    /// They are deleted.
    Delete,
}
