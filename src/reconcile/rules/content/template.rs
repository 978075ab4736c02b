//! `target.template`: target values rendered from the revealed (and transformed) keys by a
//! deliberately small language, and a docker config (user docs: `docs/templates.md`).
//!
//! - `parse.rs`: the language and its parser, a template into an AST, once.
//! - `filters.rs`: the closed list of filters, each total, with its worst-case growth.
//! - `render.rs`: the AST rendered over the values, and its size bound.
//! - `docker_config.rs`: the `.dockerconfigjson` of `dockerConfig`.
//! - `error.rs`: [`TemplateError`] and its [`TemplateFailure`].
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
mod error;
mod filters;
mod parse;
mod render;

use std::collections::BTreeMap;

use self::{
    docker_config::DockerValues,
    parse::{Template, is_key_char, parse},
};
pub use self::{
    error::{TemplateError, TemplateFailure},
    parse::ParseFailure,
};
use super::{MAX_SECRET_BYTES, SecretData};
use crate::api::{DOCKER_CONFIG_KEY, SecretTemplate, TemplateMergePolicy};

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
