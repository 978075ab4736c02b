//! The audit log: one entry per request, reads included, with the caller's identity.
//!
//! # Guarantees
//! - A bearer token never appears in the log: registered tokens map to their user name,
//!   unknown ones to `token:<first 8 hex digits of sha256(token)>`; without a token the
//!   identity is the User-Agent (`anonymous` without one either).
//! - An `Impersonate-User` header (what `kubectl --as NAME` or a kubeconfig user with
//!   `as: NAME` sends) names the effective user and takes precedence, as the real server
//!   authorizes and audits impersonated requests as that user. kubectl never sends bearer
//!   tokens over plain HTTP (clientcmd applies user credentials only for TLS servers), so
//!   impersonation is how a kubectl caller gets a name here.
//! - Entries are in the order requests were answered (for watches: when the stream
//!   started); the log keeps the most recent [`AUDIT_CAPACITY`] entries.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::{
    collections::{HashMap, VecDeque},
    sync::Mutex,
};

/// How many entries the log keeps (oldest dropped first), bounding memory in benchmarks.
pub const AUDIT_CAPACITY: usize = 200_000;

/// One answered request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// When the response status was decided (RFC 3339, microseconds).
    pub time: String,
    /// Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection
    /// (non-resource requests: the lowercase HTTP method).
    pub verb: String,
    /// API group ("" for core and non-resource paths).
    pub group: String,
    /// Plural resource ("" for non-resource paths).
    pub resource: String,
    /// Subresource (`status`) or "".
    pub subresource: String,
    /// Namespace or "".
    pub namespace: String,
    /// Object name or "" (collections).
    pub name: String,
    /// Who called (see the module guarantees).
    pub identity: String,
    /// HTTP status code of the response.
    pub code: u16,
    /// Request path (without query).
    pub path: String,
}

/// Maps bearer tokens to identities and keeps the audit entries.
///
/// `Debug` prints counts only, never a token.
#[derive(Default)]
pub struct AuditLog {
    entries: Mutex<VecDeque<AuditEntry>>,
    tokens: Mutex<HashMap<String, String>>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries = self.entries.lock().map_or(0, |e| e.len());
        let tokens = self.tokens.lock().map_or(0, |t| t.len());
        f.debug_struct("AuditLog")
            .field("entries", &entries)
            .field("tokens", &tokens)
            .finish()
    }
}

impl AuditLog {
    /// Remembers that `token` stands for `identity`.
    pub fn register_token(&self, token: String, identity: &str) {
        self.tokens
            .lock()
            .expect("audit tokens lock poisoned")
            .insert(token, identity.to_string());
    }

    /// The identity a bearer token was registered for, if any.
    pub fn user_of_token(&self, token: &str) -> Option<String> {
        self.tokens
            .lock()
            .expect("audit tokens lock poisoned")
            .get(token)
            .cloned()
    }

    /// The identity of a caller from its `Impersonate-User`, `Authorization` and
    /// `User-Agent` headers.
    pub fn identity(
        &self,
        impersonate: Option<&str>,
        authorization: Option<&str>,
        user_agent: Option<&str>,
    ) -> String {
        if let Some(user) = impersonate.filter(|u| !u.is_empty()) {
            return user.to_string();
        }
        match authorization
            .and_then(|a| a.strip_prefix("Bearer "))
            .map(str::trim)
        {
            Some(token) => match self.tokens.lock().expect("audit tokens lock poisoned").get(token) {
                Some(user) => user.clone(),
                None => format!("token:{}", &hex::encode(Sha256::digest(token.as_bytes()))[..8]),
            },
            None => user_agent
                .filter(|u| !u.is_empty())
                .unwrap_or("anonymous")
                .to_string(),
        }
    }

    /// Appends an entry.
    pub fn record(&self, entry: AuditEntry) {
        let mut entries = self.entries.lock().expect("audit lock poisoned");
        if entries.len() == AUDIT_CAPACITY {
            entries.pop_front();
        }
        entries.push_back(entry);
    }

    /// Forgets every entry (token identities stay).
    pub fn clear(&self) {
        self.entries.lock().expect("audit lock poisoned").clear();
    }

    /// A copy of all retained entries, oldest first.
    pub fn snapshot(&self) -> Vec<AuditEntry> {
        self.entries
            .lock()
            .expect("audit lock poisoned")
            .iter()
            .cloned()
            .collect()
    }
}

/// The time format of audit entries.
pub fn audit_time() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_should_never_reveal_an_unknown_token() {
        let log = AuditLog::default();
        log.register_token("known-token".into(), "leader-a");
        assert_eq!(
            log.identity(None, Some("Bearer known-token"), Some("ua")),
            "leader-a"
        );
        let unknown = log.identity(None, Some("Bearer s3cr3t-value"), Some("ua"));
        assert!(unknown.starts_with("token:") && unknown.len() == 14, "{unknown}");
        assert!(!unknown.contains("s3cr3t"));
        assert_eq!(log.identity(None, None, Some("kubectl/v1.32")), "kubectl/v1.32");
        assert_eq!(log.identity(None, None, None), "anonymous");
        assert_eq!(
            log.identity(Some("alice"), Some("Bearer known-token"), None),
            "alice"
        );
    }
}
