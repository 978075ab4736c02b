//! `target.template.dockerConfig`: the `.dockerconfigjson` of a `kubernetes.io/dockerconfigjson`
//! Secret, `{"auths":{SERVER:{"username","password","email"?,"auth"}}}` with `auth` the base64
//! of `username:password`, as `kubectl create secret docker-registry` writes it.
//!
//! # Guarantees
//! - The three values are read from the revealed keys the spec names; a missing one fails naming
//!   the field and the key, a value that is not UTF-8 (JSON cannot hold it) naming the field.
//! - [`DockerValues::max_len`] bounds the rendered JSON, computed before it is built.
//! - The values are JSON-escaped by `serde_json`: a value can never add a member or a server.

use base64::{Engine as _, engine::general_purpose::STANDARD};
use serde_json::{Map, Value, json};

use super::{TemplateFailure, filters::Filter};
use crate::{api::DockerConfigTemplate, reconcile::rules::content::SecretData};

/// The JSON around the values: `{"auths":{"":{"auth":"","email":"","password":"","username":""}}}`
/// is 67 bytes; 96 leaves room.
const OVERHEAD: usize = 96;

/// A docker config's values, read and checked.
pub(crate) struct DockerValues<'a> {
    server: &'a str,
    username: &'a str,
    password: &'a str,
    email: Option<&'a str>,
}

impl<'a> DockerValues<'a> {
    /// The values `config` names, from `data`.
    ///
    /// # Errors
    /// A missing key, or a value that is not UTF-8.
    pub(crate) fn read(
        config: &'a DockerConfigTemplate,
        data: &'a SecretData,
    ) -> Result<Self, TemplateFailure> {
        let email = match &config.email_key {
            Some(key) => Some(value("emailKey", key, data)?),
            None => None,
        };
        Ok(Self {
            server: &config.server,
            username: value("usernameKey", &config.username_key, data)?,
            password: value("passwordKey", &config.password_key, data)?,
            email,
        })
    }

    /// The longest `.dockerconfigjson` these values make (saturating): each text JSON-escaped,
    /// and `auth` the base64 of `username:password`, with those filters' own worst cases.
    pub(crate) fn max_len(&self) -> usize {
        let escaped = [
            self.server,
            self.username,
            self.password,
            self.email.unwrap_or(""),
        ]
        .iter()
        .map(|text| Filter::Json.max_len(text.len()))
        .fold(OVERHEAD, usize::saturating_add);
        let auth = self
            .username
            .len()
            .saturating_add(1)
            .saturating_add(self.password.len());
        escaped.saturating_add(Filter::Base64.max_len(auth))
    }

    /// The `.dockerconfigjson`; at most [`DockerValues::max_len`] bytes.
    pub(crate) fn render(&self) -> Vec<u8> {
        let auth = STANDARD.encode(format!("{}:{}", self.username, self.password));
        let mut entry = Map::new();
        entry.insert("username".into(), self.username.into());
        entry.insert("password".into(), self.password.into());
        if let Some(email) = self.email {
            entry.insert("email".into(), email.into());
        }
        entry.insert("auth".into(), auth.into());
        let mut auths = Map::new();
        auths.insert(self.server.to_owned(), Value::Object(entry));
        json!({ "auths": auths }).to_string().into_bytes()
    }
}

/// The value of `key` (named by `field`) as text.
fn value<'a>(field: &'static str, key: &str, data: &'a SecretData) -> Result<&'a str, TemplateFailure> {
    let bytes = data
        .get(key)
        .ok_or_else(|| TemplateFailure::DockerConfigMissingKey {
            field,
            key: key.to_owned(),
        })?;
    std::str::from_utf8(bytes).map_err(|_| TemplateFailure::DockerConfigNotUtf8 { field })
}
