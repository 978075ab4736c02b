//! A parsed [`Template`] rendered over the revealed values, and its size bound computed before.
//!
//! # Guarantees
//! - [`Template::max_len`] bounds [`Template::render`]'s output, from the values' lengths and
//!   each filter's worst case alone: the caller checks it against a Secret's limit before
//!   anything is built. As every filter's bound is at least its input's, it bounds every
//!   intermediate value of a filter chain too.
//! - A missing key (not filled by `default`) fails, naming the key and its column: it is never
//!   rendered as empty text. A value only ever goes into the output's value, never a key.

use std::borrow::Cow;

use super::{
    TemplateFailure,
    filters::FilterFailure,
    parse::{Part, Placeholder, Template},
};
use crate::reconcile::rules::content::SecretData;

impl Template {
    /// The longest output for `data`'s values (saturating): literals, plus each placeholder's
    /// value length through its filters' worst cases (a missing key counts as empty).
    pub(crate) fn max_len(&self, data: &SecretData) -> usize {
        self.parts
            .iter()
            .map(|part| match part {
                Part::Literal(text) => text.len(),
                Part::Placeholder(placeholder) => placeholder.max_len(data),
            })
            .fold(0, usize::saturating_add)
    }

    /// The template rendered over `data`; at most [`Template::max_len`] bytes.
    ///
    /// # Errors
    /// The first placeholder whose key is missing or whose filter refused its value.
    pub(crate) fn render(&self, data: &SecretData) -> Result<Vec<u8>, TemplateFailure> {
        let mut output = Vec::with_capacity(self.max_len(data));
        for part in &self.parts {
            match part {
                Part::Literal(text) => output.extend_from_slice(text.as_bytes()),
                Part::Placeholder(placeholder) => output.extend_from_slice(&placeholder.value(data)?),
            }
        }
        Ok(output)
    }
}

impl Placeholder {
    fn max_len(&self, data: &SecretData) -> usize {
        let len = data.get(&self.key).map_or(0, Vec::len);
        self.filters
            .iter()
            .fold(len, |len, (filter, _)| filter.max_len(len))
    }

    /// The key's value through the filters.
    fn value<'a>(&'a self, data: &'a SecretData) -> Result<Cow<'a, [u8]>, TemplateFailure> {
        let mut value = data.get(&self.key).map(|v| Cow::Borrowed(v.as_slice()));
        for (filter, column) in &self.filters {
            value = filter.apply(value).map_err(|failure| TemplateFailure::Filter {
                key: self.key.clone(),
                column: *column,
                filter: filter.name(),
                why: match failure {
                    FilterFailure::NotBase64 => "not valid base64",
                    FilterFailure::NotUtf8 => "not UTF-8",
                },
            })?;
        }
        value.ok_or_else(|| TemplateFailure::MissingKey {
            key: self.key.clone(),
            column: self.column,
        })
    }
}
