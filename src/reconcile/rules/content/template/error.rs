//! [`TemplateError`]: which field of `target.template` failed, and why; key names, filter names
//! and columns only, never values.

use super::parse::ParseFailure;
use crate::api::{DOCKER_CONFIG_TYPE_MESSAGE, Reason};

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
        /// The limit, [`MAX_SECRET_BYTES`](crate::reconcile::rules::content::MAX_SECRET_BYTES).
        limit: usize,
    },
}
