//! A FerrVaultSecret's `target.template`: target values built from the revealed keys
//! ([`SecretTemplate`]), and a `kubernetes.io/dockerconfigjson` Secret built from three of them
//! ([`DockerConfigTemplate`]). The language and its guarantees are
//! `reconcile::rules::content::template` (user docs: `docs/templates.md`).
//!
//! # Guarantees (enforced by the CRD schema, and again by the reconciler)
//! - At most [`MAX_TEMPLATE_KEYS`] template keys, each template at most [`MAX_TEMPLATE_TEXT`]
//!   characters, every key name and `dockerConfig` field at most [`MAX_SECRET_KEY`] (the server
//!   at most [`MAX_URL`]).
//! - `dockerConfig` with a `target.type` other than `kubernetes.io/dockerconfigjson` is refused at
//!   admission ([`DOCKER_CONFIG_TYPE_MESSAGE`]), naming both fields.

use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use super::bounds::{MAX_SECRET_KEY, MAX_TEMPLATE_KEYS, MAX_TEMPLATE_TEXT, MAX_URL};

/// The Secret type a `dockerConfig` template writes.
pub const DOCKER_CONFIG_TYPE: &str = "kubernetes.io/dockerconfigjson";

/// The key a `dockerConfig` template writes, as Kubernetes requires for [`DOCKER_CONFIG_TYPE`].
pub const DOCKER_CONFIG_KEY: &str = ".dockerconfigjson";

/// The CEL rule (on `target`) refusing a `dockerConfig` with another `target.type`.
pub(crate) const DOCKER_CONFIG_TYPE_RULE: &str = "!has(self.template) || !has(self.template.dockerConfig) \
     || !has(self.type) || self.type == 'kubernetes.io/dockerconfigjson'";

/// The message of [`DOCKER_CONFIG_TYPE_RULE`]; the reconciler reports the same text.
pub const DOCKER_CONFIG_TYPE_MESSAGE: &str = "target.template.dockerConfig writes a \
     kubernetes.io/dockerconfigjson Secret: target.type must be unset or kubernetes.io/dockerconfigjson";

/// Values of the target built from the revealed (and transformed) keys.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretTemplate {
    /// Target key → template: literal text with `${KEY}` or `${KEY|filter|filter "arg"}`
    /// placeholders over the revealed keys. Filters: `base64`, `base64decode`, `json`,
    /// `urlquery`, `trim`, `lower`, `upper`, `default "x"`. `$${` writes a literal `${`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "template_data_schema")]
    pub data: BTreeMap<String, String>,
    /// `Merge` (default): the revealed keys stay beside the template's (a template key wins);
    /// `Replace`: only the template's keys (and `.dockerconfigjson`) are written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_policy: Option<TemplateMergePolicy>,
    /// Writes a `kubernetes.io/dockerconfigjson` Secret usable as an `imagePullSecret`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docker_config: Option<DockerConfigTemplate>,
}

impl SecretTemplate {
    /// The merge policy, `Merge` when unset (never defaulted into stored objects).
    pub fn merge_policy(&self) -> TemplateMergePolicy {
        self.merge_policy.unwrap_or(TemplateMergePolicy::Merge)
    }
}

/// Whether the revealed keys stay beside the template's.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum TemplateMergePolicy {
    /// The revealed keys stay; a template key of the same name replaces its value.
    Merge,
    /// Only the template's keys are written.
    Replace,
}

/// A registry credential built from three revealed keys.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DockerConfigTemplate {
    /// The registry, as `auths` keys it (`ghcr.io`, `https://index.docker.io/v1/`).
    #[schemars(length(min = 1, max = MAX_URL))]
    pub server: String,
    /// The revealed key holding the user name.
    #[schemars(length(min = 1, max = MAX_SECRET_KEY))]
    pub username_key: String,
    /// The revealed key holding the password or token.
    #[schemars(length(min = 1, max = MAX_SECRET_KEY))]
    pub password_key: String,
    /// The revealed key holding the e-mail address, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_SECRET_KEY))]
    pub email_key: Option<String>,
}

/// Schema of `template.data`: at most [`MAX_TEMPLATE_KEYS`] keys, each value at most
/// [`MAX_TEMPLATE_TEXT`] characters (the key names are checked by the reconciler and the API
/// server's own Secret validation).
fn template_data_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "description": "Target key to template.",
        "type": "object",
        "maxProperties": MAX_TEMPLATE_KEYS,
        "additionalProperties": { "type": "string", "maxLength": MAX_TEMPLATE_TEXT },
    })
}
