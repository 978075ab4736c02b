//! `target.template`: target values rendered from the revealed (and transformed) keys by a
//! deliberately small language, and a docker config (user docs: `docs/templates.md`).
//!
//! - `parse.rs`: the language and its parser, a template into an AST, once.
//! - `filters.rs`: the closed list of filters, each total, with its worst-case growth.
//! - `render.rs`: the AST rendered over the values, and its size bound.
//! - `docker_config.rs`: the `.dockerconfigjson` of `dockerConfig`.
//!
//! # Guarantees
//! - The language has literal text, `${KEY}` placeholders and filters, nothing else: no loops,
//!   no lookups, no access to the environment, files, DNS or Kubernetes (ESO's three template
//!   advisories came from such power). A template reads the values it is given and nothing else.
//! - A value only ever becomes (part of) a value: keys are the spec's own text.
//! - A missing key, an unknown filter or a value a filter cannot take fails the whole render with
//!   [`TemplateError`] naming the key and the column; nothing is rendered as empty text.
//! - The output's size is computed from the AST and the values' lengths before anything is
//!   built; over [`MAX_SECRET_BYTES`] it fails ([`TemplateFailure::OutputTooLarge`]) unbuilt.
//! - Errors name fields, keys, filters and columns: never a value.

mod docker_config;
mod filters;
mod parse;
mod render;

use std::collections::BTreeMap;

pub use self::parse::ParseFailure;
use self::{
    docker_config::DockerValues,
    parse::{Template, is_key_char, parse},
};
use super::{MAX_SECRET_BYTES, SecretData};
use crate::api::{
    DOCKER_CONFIG_KEY, DOCKER_CONFIG_TYPE_MESSAGE, Reason, SecretTemplate, TemplateMergePolicy,
};

/// A template that failed: which field, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {failure}")]
pub struct TemplateError {
    /// The spec field, as `target.template.data["DSN"]` or `target.template.dockerConfig`.
    pub field: String,
    /// What went wrong.
    pub failure: TemplateFailure,
}

impl TemplateError {
    /// The condition reason: `SecretTooLarge` for an output over the limit, else `TemplateError`.
    pub fn reason(&self) -> Reason {
        match self.failure {
            TemplateFailure::OutputTooLarge { .. } => Reason::SecretTooLarge,
            TemplateFailure::Parse(_)
            | TemplateFailure::MissingKey { .. }
            | TemplateFailure::Filter { .. }
            | TemplateFailure::InvalidTargetKey
            | TemplateFailure::TypeConflict
            | TemplateFailure::DockerConfigMissingKey { .. }
            | TemplateFailure::DockerConfigNotUtf8 { .. } => Reason::TemplateError,
        }
    }
}

/// Why a template failed; key names, filter names and columns only, never values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateFailure {
    /// The template does not parse.
    #[error(transparent)]
    Parse(ParseFailure),
    /// A placeholder's key is not among the values (and no `default` fills it).
    #[error(
        "column {column}: key {key:?} not found (a missing key is never rendered as empty text; \
         `${{{key}|default \"x\"}}` allows it)"
    )]
    MissingKey {
        /// The key.
        key: String,
        /// The column of its placeholder, from 1.
        column: usize,
    },
    /// A filter refused the value.
    #[error("column {column}: {filter} refused the value of key {key:?}: {why}")]
    Filter {
        /// The key whose value it was.
        key: String,
        /// The filter's column, from 1.
        column: usize,
        /// The filter's name.
        filter: &'static str,
        /// Why, in fixed words.
        why: &'static str,
    },
    /// A target key that is not a Secret key.
    #[error("not a valid Secret key (letters, digits, `-`, `.` and `_` only)")]
    InvalidTargetKey,
    /// `dockerConfig` with another `target.type`.
    #[error("{DOCKER_CONFIG_TYPE_MESSAGE}")]
    TypeConflict,
    /// A key `dockerConfig` names is not among the values.
    #[error("{field} names key {key:?}, which is not among the values")]
    DockerConfigMissingKey {
        /// `usernameKey`, `passwordKey` or `emailKey`.
        field: &'static str,
        /// The key.
        key: String,
    },
    /// A value `dockerConfig` reads is not UTF-8.
    #[error("the value {field} names is not UTF-8 (a docker config is JSON text)")]
    DockerConfigNotUtf8 {
        /// `usernameKey`, `passwordKey` or `emailKey`.
        field: &'static str,
    },
    /// The output could be over the limit of a Secret; it was not built.
    #[error("output of up to {bound} bytes could be over the {limit}-byte limit of a Secret; not built")]
    OutputTooLarge {
        /// The computed bound (saturating).
        bound: usize,
        /// The limit, [`MAX_SECRET_BYTES`].
        limit: usize,
    },
}

/// `data` through `template`: the rendered keys (and `.dockerconfigjson`), beside the revealed
/// ones under `Merge`, alone under `Replace`. See the module guarantees.
///
/// # Errors
/// The first [`TemplateError`], in key order (templates, then `dockerConfig`); an output whose
/// [`output_bound`] is over [`MAX_SECRET_BYTES`] before anything is rendered.
pub fn render_template(data: SecretData, template: &SecretTemplate) -> Result<SecretData, TemplateError> {
    let mut output = {
        let prepared = Prepared::new(&data, template)?;
        let bound = prepared.bound(&data);
        if bound > MAX_SECRET_BYTES {
            return Err(TemplateError {
                field: "target.template".to_owned(),
                failure: TemplateFailure::OutputTooLarge {
                    bound,
                    limit: MAX_SECRET_BYTES,
                },
            });
        }
        prepared.render(&data)?
    };
    if template.merge_policy() == TemplateMergePolicy::Replace {
        return Ok(output);
    }
    let mut merged = data;
    merged.append(&mut output);
    Ok(merged)
}

/// The most bytes (keys and values, as [`payload_bytes`](super::payload_bytes) counts, saturating)
/// [`render_template`] can return for `data`, computed from the parsed templates, the values'
/// lengths and each filter's worst case, without rendering anything.
///
/// # Errors
/// A template that does not parse, a target key that is not a Secret key, an unusable
/// `dockerConfig`.
pub fn output_bound(data: &SecretData, template: &SecretTemplate) -> Result<usize, TemplateError> {
    Ok(Prepared::new(data, template)?.bound(data))
}

/// A template parsed, and its docker config's values read: what is rendered.
struct Prepared<'a> {
    template: &'a SecretTemplate,
    /// Each target key with its parsed template.
    parsed: Vec<(&'a String, Template)>,
    docker: Option<DockerValues<'a>>,
}

impl<'a> Prepared<'a> {
    fn new(data: &'a SecretData, template: &'a SecretTemplate) -> Result<Self, TemplateError> {
        let mut parsed = Vec::with_capacity(template.data.len());
        for (key, text) in &template.data {
            let at = |failure| data_error(key, failure);
            if key.is_empty() || !key.chars().all(is_key_char) {
                return Err(at(TemplateFailure::InvalidTargetKey));
            }
            parsed.push((key, parse(text).map_err(|e| at(TemplateFailure::Parse(e)))?));
        }
        let docker = template
            .docker_config
            .as_ref()
            .map(|config| DockerValues::read(config, data))
            .transpose()
            .map_err(|failure| TemplateError {
                field: "target.template.dockerConfig".to_owned(),
                failure,
            })?;
        Ok(Self {
            template,
            parsed,
            docker,
        })
    }

    /// Whether `key` is written by the template (so a revealed value of that name is not kept).
    fn writes(&self, key: &str) -> bool {
        self.template.data.contains_key(key) || (self.docker.is_some() && key == DOCKER_CONFIG_KEY)
    }

    /// See [`output_bound`].
    fn bound(&self, data: &SecretData) -> usize {
        let replace = self.template.merge_policy() == TemplateMergePolicy::Replace;
        let kept = data
            .iter()
            .filter(|(key, _)| !replace && !self.writes(key))
            .map(|(key, value)| key.len() + value.len());
        let rendered = self
            .parsed
            .iter()
            .map(|(key, parsed)| key.len().saturating_add(parsed.max_len(data)));
        let docker = self
            .docker
            .as_ref()
            .map_or(0, |d| DOCKER_CONFIG_KEY.len().saturating_add(d.max_len()));
        kept.chain(rendered).fold(docker, usize::saturating_add)
    }

    /// The template's own keys, rendered.
    fn render(&self, data: &SecretData) -> Result<SecretData, TemplateError> {
        let mut output = BTreeMap::new();
        for (key, parsed) in &self.parsed {
            let value = parsed.render(data).map_err(|failure| data_error(key, failure))?;
            output.insert((*key).clone(), value);
        }
        if let Some(docker) = &self.docker {
            output.insert(DOCKER_CONFIG_KEY.to_owned(), docker.render());
        }
        Ok(output)
    }
}

/// `failure` at `target.template.data[key]`.
fn data_error(key: &str, failure: TemplateFailure) -> TemplateError {
    TemplateError {
        field: format!("target.template.data[{key:?}]"),
        failure,
    }
}

#[cfg(test)]
mod tests;
