//! The CRD schema's bounds ([`bounds`](crate::api::bounds)) checked again, for an object stored
//! past the schema (an API server without validation, or a schema installed after the object):
//! such an object is reported `InvalidSpec` like one with a field of the wrong type, before
//! anything is read, revealed or built from it.
//!
//! # Guarantees
//! - Exactly the schema's bounds, from the same constants, counted as the API server counts
//!   them (characters for `maxLength`, entries for `maxItems`): an object the API server admits
//!   is never refused here, and one it would refuse for a bound is.
//! - `target.metadata`'s keys are checked for their shape and the reserved prefixes too (the
//!   schema's CEL rules, [`target_shape`](crate::api::target_shape)): a key the API server
//!   would refuse at admission is never set on a target.
//! - The first bound exceeded, in the fields' declaration order (a list's length before its
//!   items), is reported as a [`SpecProblem`] naming the field's path and the bound, never its
//!   value.
//! - Pure and cheap: counting a string's characters stops one past its bound, a list's items
//!   are looked at only once its length is within bound, and a path is only spelled out for the
//!   problem it names.

use std::{collections::BTreeMap, fmt::Display};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::Resource;

use super::spec_conflicts::secret_spec_conflict;
use crate::api::{
    FerrVaultConnection, FerrVaultConnectionSpec, FerrVaultSecret, FerrVaultSecretSpec, InvalidObject,
    SecretKeyRef, SecretTemplate, SpecProblem,
    bounds::{
        MAX_CLUSTER_ID, MAX_DURATION, MAX_IDENTIFIER, MAX_KEY_NAMES, MAX_NAME, MAX_PATH, MAX_ROLLOUT_TARGETS,
        MAX_SECRET_KEY, MAX_TEMPLATE_KEYS, MAX_TEMPLATE_TEXT, MAX_TRANSFORMS, MAX_URL,
    },
    client_cert::{MAX_PINS, PIN_LENGTH},
    target_shape::{
        KEY_SHAPE_MESSAGE, MAX_LABEL_VALUE, MAX_TARGET_ANNOTATION_VALUE, MAX_TARGET_ANNOTATIONS,
        MAX_TARGET_LABELS, RESERVED_MESSAGE, is_reserved_key, is_shaped_key,
    },
};

/// A custom resource whose spec has bounds.
pub trait SpecBounds: Resource {
    /// The first bound the spec exceeds, if any.
    fn bounds_problem(&self) -> Option<SpecProblem>;

    /// `status.conditions`, kept by the `InvalidSpec` status write.
    fn conditions(&self) -> Vec<Condition>;

    /// The object as [`InvalidObject`] when its spec exceeds a bound (what the reconcilers report
    /// as `InvalidSpec`), else `None`.
    fn beyond_bounds(&self) -> Option<InvalidObject> {
        self.bounds_problem().map(|problem| InvalidObject {
            metadata: self.meta().clone(),
            conditions: self.conditions(),
            problem,
        })
    }
}

impl SpecBounds for FerrVaultSecret {
    fn bounds_problem(&self) -> Option<SpecProblem> {
        secret_spec_problem(&self.spec).err()
    }

    fn conditions(&self) -> Vec<Condition> {
        self.status
            .as_ref()
            .map(|status| status.conditions.clone())
            .unwrap_or_default()
    }
}

impl SpecBounds for FerrVaultConnection {
    fn bounds_problem(&self) -> Option<SpecProblem> {
        connection_spec_problem(&self.spec).err()
    }

    fn conditions(&self) -> Vec<Condition> {
        self.status
            .as_ref()
            .map(|status| status.conditions.clone())
            .unwrap_or_default()
    }
}

/// The first bound a FerrVaultSecret's `spec` exceeds, then the first pair of its settings that
/// contradict each other (the schema's cross-field rules).
///
/// # Errors
/// The [`SpecProblem`] naming the field and its bound.
pub fn secret_spec_problem(spec: &FerrVaultSecretSpec) -> Result<(), SpecProblem> {
    text(&"spec.connectionRef.name", &spec.connection_ref.name, MAX_NAME)?;
    optional(&"spec.project", spec.project.as_deref(), MAX_IDENTIFIER)?;
    text(&"spec.vault", &spec.vault, MAX_IDENTIFIER)?;
    if let Some(selector) = &spec.selector {
        names(&"spec.selector.names", &selector.names)?;
    }
    if let Some(target) = &spec.target {
        optional(&"spec.target.name", target.name.as_deref(), MAX_NAME)?;
        optional(&"spec.target.type", target.type_.as_deref(), MAX_IDENTIFIER)?;
        if let Some(metadata) = &target.metadata {
            let labels = "spec.target.metadata.labels";
            key_values(labels, &metadata.labels, MAX_TARGET_LABELS, MAX_LABEL_VALUE)?;
            let annotations = "spec.target.metadata.annotations";
            key_values(
                annotations,
                &metadata.annotations,
                MAX_TARGET_ANNOTATIONS,
                MAX_TARGET_ANNOTATION_VALUE,
            )?;
        }
        if let Some(template) = &target.template {
            template_bounds(template)?;
        }
    }
    text(&"spec.refreshInterval", &spec.refresh_interval, MAX_DURATION)?;
    list(
        &"spec.rolloutRestart",
        spec.rollout_restart.len(),
        MAX_ROLLOUT_TARGETS,
    )?;
    for (index, workload) in spec.rollout_restart.iter().enumerate() {
        text(
            &format_args!("spec.rolloutRestart[{index}].name"),
            &workload.name,
            MAX_NAME,
        )?;
    }
    list(&"spec.transforms", spec.transforms.len(), MAX_TRANSFORMS)?;
    for (index, step) in spec.transforms.iter().enumerate() {
        for (name, value) in [
            ("value", &step.value),
            ("from", &step.from),
            ("to", &step.to),
            ("key", &step.key),
        ] {
            let path = &format_args!("spec.transforms[{index}].{name}");
            optional(path, value.as_deref(), MAX_SECRET_KEY)?;
        }
        names(&format_args!("spec.transforms[{index}].keys"), &step.keys)?;
    }
    secret_spec_conflict(spec)
}

/// The first bound a FerrVaultConnection's `spec` exceeds.
///
/// # Errors
/// The [`SpecProblem`] naming the field and its bound.
pub fn connection_spec_problem(spec: &FerrVaultConnectionSpec) -> Result<(), SpecProblem> {
    text(&"spec.url", &spec.url, MAX_URL)?;
    optional(&"spec.organization", spec.organization.as_deref(), MAX_IDENTIFIER)?;
    secret_key_ref("spec.tokenSecretRef", spec.token_secret_ref.as_ref())?;
    if let Some(oidc) = &spec.oidc {
        optional(&"spec.oidc.clusterID", oidc.cluster_id.as_deref(), MAX_CLUSTER_ID)?;
        optional(&"spec.oidc.tokenPath", oidc.token_path.as_deref(), MAX_PATH)?;
        optional(&"spec.oidc.audience", oidc.audience.as_deref(), MAX_URL)?;
    }
    if let Some(detection) = &spec.change_detection {
        optional(
            &"spec.changeDetection.interval",
            detection.interval.as_deref(),
            MAX_DURATION,
        )?;
    }
    secret_key_ref("spec.caBundleSecretRef", spec.ca_bundle_secret_ref.as_ref())?;
    if let Some(reference) = &spec.client_cert_secret_ref {
        text(&"spec.clientCertSecretRef.name", &reference.name, MAX_NAME)?;
    }
    let pins = spec.pin_sha256.as_deref().unwrap_or_default();
    list(&"spec.pinSha256", pins.len(), MAX_PINS)?;
    for (index, pin) in pins.iter().enumerate() {
        text(&format_args!("spec.pinSha256[{index}]"), pin, PIN_LENGTH)?;
    }
    Ok(())
}

/// `target.template`: its key count, each key and template, the docker config's fields.
fn template_bounds(template: &SecretTemplate) -> Result<(), SpecProblem> {
    if template.data.len() > MAX_TEMPLATE_KEYS {
        return Err(problem(
            &"spec.target.template.data",
            format!("more than {MAX_TEMPLATE_KEYS} entries (the CRD's maxProperties)"),
        ));
    }
    for (key, template_text) in &template.data {
        // A key is not spelled into the path: it may be the field over its bound.
        text(&"spec.target.template.data (a key)", key, MAX_SECRET_KEY)?;
        text(
            &format_args!("spec.target.template.data[{key:?}]"),
            template_text,
            MAX_TEMPLATE_TEXT,
        )?;
    }
    let Some(docker) = &template.docker_config else {
        return Ok(());
    };
    text(
        &"spec.target.template.dockerConfig.server",
        &docker.server,
        MAX_URL,
    )?;
    for (name, value) in [
        ("usernameKey", Some(&docker.username_key)),
        ("passwordKey", Some(&docker.password_key)),
        ("emailKey", docker.email_key.as_ref()),
    ] {
        let path = &format_args!("spec.target.template.dockerConfig.{name}");
        optional(path, value.map(String::as_str), MAX_SECRET_KEY)?;
    }
    Ok(())
}

/// A list of Secret key names: at most [`MAX_KEY_NAMES`], each at most [`MAX_SECRET_KEY`].
fn names(path: &dyn Display, names: &[String]) -> Result<(), SpecProblem> {
    list(path, names.len(), MAX_KEY_NAMES)?;
    for (index, name) in names.iter().enumerate() {
        text(&format_args!("{path}[{index}]"), name, MAX_SECRET_KEY)?;
    }
    Ok(())
}

/// A label or annotation map: at most `entries` entries, each key shaped and outside the
/// reserved prefixes (named in the path only once shaped, so at most 317 characters), each value
/// at most `value` characters.
fn key_values(
    path: &str,
    map: &BTreeMap<String, String>,
    entries: usize,
    value: usize,
) -> Result<(), SpecProblem> {
    if map.len() > entries {
        return Err(problem(
            &path,
            format!("more than {entries} entries (the CRD's maxProperties)"),
        ));
    }
    for (key, text_value) in map {
        if !is_shaped_key(key) {
            return Err(problem(&path, KEY_SHAPE_MESSAGE.to_owned()));
        }
        if is_reserved_key(key) {
            return Err(problem(&path, RESERVED_MESSAGE.to_owned()));
        }
        text(&format_args!("{path}[{key}]"), text_value, value)?;
    }
    Ok(())
}

fn secret_key_ref(path: &str, reference: Option<&SecretKeyRef>) -> Result<(), SpecProblem> {
    let Some(reference) = reference else {
        return Ok(());
    };
    text(&format_args!("{path}.name"), &reference.name, MAX_NAME)?;
    text(&format_args!("{path}.key"), &reference.key, MAX_SECRET_KEY)
}

fn optional(path: &dyn Display, value: Option<&str>, max: usize) -> Result<(), SpecProblem> {
    value.map_or(Ok(()), |value| text(path, value, max))
}

/// `value` is at most `max` characters (counting stops one past `max`).
pub(super) fn text(path: &dyn Display, value: &str, max: usize) -> Result<(), SpecProblem> {
    // A character is at least one byte: a string of at most `max` bytes needs no counting.
    if value.len() <= max || value.chars().take(max + 1).count() <= max {
        return Ok(());
    }
    Err(problem(
        path,
        format!("longer than {max} characters (the CRD's maxLength)"),
    ))
}

pub(super) fn list(path: &dyn Display, len: usize, max: usize) -> Result<(), SpecProblem> {
    if len <= max {
        return Ok(());
    }
    Err(problem(
        path,
        format!("more than {max} items (the CRD's maxItems)"),
    ))
}

pub(super) fn problem(path: &dyn Display, expected: String) -> SpecProblem {
    SpecProblem {
        path: path.to_string(),
        expected,
    }
}

#[cfg(test)]
mod tests;
