//! Whether a namespace is in a [`NamespaceSelection`]: its name listed (or `"*"`), or its labels
//! matching the selector. Pure: names and labels in, a verdict out.
//!
//! # Guarantees
//! - An empty selection selects nothing, and so does an empty selector (`{}`): only `"*"` says
//!   "every namespace".
//! - A selector term this operator cannot read (an `In` without values) selects nothing rather
//!   than everything: a mistake refuses, never allows.
//! - The cost is bounded by the selection's schema bounds (at most
//!   [`MAX_NAMESPACE_NAMES`](crate::api::bounds::MAX_NAMESPACE_NAMES) names and a bounded selector);
//!   nothing is allocated.

use std::collections::BTreeMap;

use crate::api::{EVERY_NAMESPACE, LabelOperator, NamespaceLabelSelector, NamespaceSelection};

/// Whether namespace `name`, carrying `labels`, is in `selection`.
pub(crate) fn selects(selection: &NamespaceSelection, name: &str, labels: &BTreeMap<String, String>) -> bool {
    selection
        .names
        .iter()
        .any(|listed| listed == EVERY_NAMESPACE || listed == name)
        || selection
            .selector
            .as_ref()
            .is_some_and(|selector| matches_labels(selector, labels))
}

/// Whether `labels` satisfy every term of `selector` (an empty selector matches nothing).
fn matches_labels(selector: &NamespaceLabelSelector, labels: &BTreeMap<String, String>) -> bool {
    if selector.is_empty() {
        return false;
    }
    let exact = selector
        .match_labels
        .iter()
        .all(|(key, value)| labels.get(key) == Some(value));
    exact
        && selector.match_expressions.iter().all(|term| {
            let value = labels.get(&term.key);
            match term.operator {
                LabelOperator::In => value.is_some_and(|v| term.values.contains(v)),
                LabelOperator::NotIn => {
                    !term.values.is_empty() && value.is_none_or(|v| !term.values.contains(v))
                }
                LabelOperator::Exists => value.is_some(),
                LabelOperator::DoesNotExist => value.is_none(),
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::LabelRequirement;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn by_names(names: &[&str]) -> NamespaceSelection {
        NamespaceSelection {
            names: names.iter().map(|n| (*n).to_owned()).collect(),
            selector: None,
        }
    }

    fn by_selector(selector: NamespaceLabelSelector) -> NamespaceSelection {
        NamespaceSelection {
            names: Vec::new(),
            selector: Some(selector),
        }
    }

    #[test]
    fn an_empty_selection_should_select_no_namespace() {
        assert!(!selects(&NamespaceSelection::default(), "team-a", &labels(&[])));
        let empty_selector = by_selector(NamespaceLabelSelector::default());
        assert!(!selects(&empty_selector, "team-a", &labels(&[("team", "a")])));
    }

    #[test]
    fn names_should_select_exactly_the_listed_namespaces_or_every_one_with_the_wildcard() {
        assert!(selects(&by_names(&["team-a"]), "team-a", &labels(&[])));
        assert!(!selects(&by_names(&["team-a"]), "team-ab", &labels(&[])));
        assert!(selects(&by_names(&["*"]), "anything", &labels(&[])));
    }

    #[test]
    fn a_selector_should_need_every_term() {
        let selector = NamespaceLabelSelector {
            match_labels: labels(&[("tier", "apps")]),
            match_expressions: vec![
                LabelRequirement {
                    key: "env".into(),
                    operator: LabelOperator::In,
                    values: vec!["prod".into(), "staging".into()],
                },
                LabelRequirement {
                    key: "frozen".into(),
                    operator: LabelOperator::DoesNotExist,
                    values: Vec::new(),
                },
            ],
        };
        let selection = by_selector(selector);
        assert!(selects(
            &selection,
            "x",
            &labels(&[("tier", "apps"), ("env", "prod")])
        ));
        assert!(!selects(
            &selection,
            "x",
            &labels(&[("tier", "apps"), ("env", "dev")])
        ));
        assert!(!selects(&selection, "x", &labels(&[("env", "prod")])));
        let frozen = labels(&[("tier", "apps"), ("env", "prod"), ("frozen", "")]);
        assert!(!selects(&selection, "x", &frozen));
    }

    #[test]
    fn a_term_without_values_should_select_nothing_rather_than_everything() {
        for operator in [LabelOperator::In, LabelOperator::NotIn] {
            let selection = by_selector(NamespaceLabelSelector {
                match_labels: BTreeMap::new(),
                match_expressions: vec![LabelRequirement {
                    key: "env".into(),
                    operator,
                    values: Vec::new(),
                }],
            });
            assert!(!selects(&selection, "x", &labels(&[])), "{operator:?}");
            assert!(
                !selects(&selection, "x", &labels(&[("env", "a")])),
                "{operator:?}"
            );
        }
    }
}
