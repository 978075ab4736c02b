//! A FerrVaultSecret's target from values alone: `spec.transforms`, then `target.template`, then
//! the size check, and the target's type. The sync's payload step and the kubectl plugin's
//! offline `render NAME --values FILE` call this one function, so the two cannot disagree.
//!
//! # Guarantees
//! - Pure: reads the spec and the values it is given, nothing else (no cluster, no FerrVault,
//!   no file, no environment).
//! - The result is at most [`MAX_SECRET_BYTES`]; no step builds more (see
//!   [`transforms`](super::transforms) and [`template`](super::template)).
//! - Errors name fields and keys, never values.

use super::{
    MAX_SECRET_BYTES, SecretData, payload_bytes,
    template::{TemplateError, TemplateFailure, render_template},
    transforms::{TransformError, apply_transforms_owned},
};
use crate::api::{DOCKER_CONFIG_TYPE, FerrVaultSecretSpec, Reason};

/// The target a spec makes from some values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedTarget {
    /// The Secret `type` (`target.type`, `kubernetes.io/dockerconfigjson` for a docker config,
    /// else `Opaque`).
    pub type_: String,
    /// The content.
    pub data: SecretData,
}

/// Why a target could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// A transform failed.
    #[error(transparent)]
    Transform(#[from] TransformError),
    /// The template failed.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// The content is over the limit of a Secret.
    #[error("content of {size} bytes is over the {limit}-byte limit of a Secret")]
    TooLarge {
        /// Its size.
        size: usize,
        /// The limit, [`MAX_SECRET_BYTES`].
        limit: usize,
    },
}

impl RenderError {
    /// The condition reason it is reported with.
    pub fn reason(&self) -> Reason {
        match self {
            Self::Transform(error) => error.reason(),
            Self::Template(error) => error.reason(),
            Self::TooLarge { .. } => Reason::SecretTooLarge,
        }
    }
}

/// The target `spec` makes from `values` (the revealed keys; for the kubectl plugin, a local
/// file's), as the sync would write it.
///
/// # Errors
/// The first [`RenderError`]: a transform, the template (or a `target.type` conflicting with its
/// `dockerConfig`), or the content's size.
pub fn render_target(spec: &FerrVaultSecretSpec, values: SecretData) -> Result<RenderedTarget, RenderError> {
    let type_ = spec.target_type().to_owned();
    let transformed = apply_transforms_owned(values, &spec.transforms)?;
    let data = match spec.template() {
        Some(template) => {
            if template.docker_config.is_some() && type_ != DOCKER_CONFIG_TYPE {
                return Err(TemplateError {
                    field: "target.type".to_owned(),
                    failure: TemplateFailure::TypeConflict,
                }
                .into());
            }
            render_template(transformed, template)?
        }
        None => transformed,
    };
    let size = payload_bytes(&data);
    if size > MAX_SECRET_BYTES {
        return Err(RenderError::TooLarge {
            size,
            limit: MAX_SECRET_BYTES,
        });
    }
    Ok(RenderedTarget { type_, data })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{
        ConnectionRef, DockerConfigTemplate, SecretTarget, SecretTemplate, Transform, TransformType,
    };

    fn spec(type_: Option<&str>) -> FerrVaultSecretSpec {
        FerrVaultSecretSpec {
            connection_ref: ConnectionRef::namespaced("c"),
            project: None,
            vault: "v".into(),
            selector: None,
            target: Some(SecretTarget {
                type_: type_.map(str::to_owned),
                template: Some(SecretTemplate {
                    docker_config: Some(DockerConfigTemplate {
                        server: "ghcr.io".into(),
                        username_key: "U".into(),
                        password_key: "APP_P".into(),
                        email_key: None,
                    }),
                    ..SecretTemplate::default()
                }),
                ..SecretTarget::default()
            }),
            refresh_interval: "1h".into(),
            rollout_restart: Vec::new(),
            transforms: vec![Transform {
                from: Some("P".into()),
                to: Some("APP_P".into()),
                ..Transform::of_type(TransformType::Rename)
            }],
            refresh_policy: None,
            suspend: None,
        }
    }

    fn values() -> SecretData {
        [("U", "bot"), ("P", "pw")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn render_target_should_template_the_transformed_keys_into_a_docker_config_secret() {
        let rendered = render_target(&spec(None), values()).expect("renders");
        assert_eq!(rendered.type_, DOCKER_CONFIG_TYPE);
        assert!(rendered.data.contains_key(".dockerconfigjson"));
        assert!(
            rendered.data.contains_key("APP_P"),
            "Merge keeps the transformed keys"
        );
    }

    #[test]
    fn render_target_should_refuse_a_docker_config_with_another_target_type_naming_both_fields() {
        let refused = render_target(&spec(Some("Opaque")), values()).expect_err("refused");
        assert_eq!(refused.reason(), Reason::TemplateError);
        assert_eq!(
            refused.to_string(),
            "target.type: target.template.dockerConfig writes a kubernetes.io/dockerconfigjson Secret: \
             target.type must be unset or kubernetes.io/dockerconfigjson"
        );
    }
}
