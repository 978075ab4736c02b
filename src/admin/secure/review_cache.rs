//! What the secure metrics endpoint remembers of the API server's review answers, positive ones
//! apart from negative ones (issue 34 point 5). Anyone who reaches the port can make up tokens,
//! and each made-up token is an unauthenticated answer to remember: kept in a cache of their own,
//! they can only push out one another, never the answer for Prometheus's token.
//!
//! # Guarantees
//! - Four caches of at most [`CACHE_ENTRIES`] entries each: tokens authenticated, tokens not
//!   authenticated (both for [`TOKEN_TTL`]), decisions allowed ([`ALLOW_TTL`]) and decisions
//!   denied ([`DENY_TTL`]), with controller-runtime's lifetimes.
//! - A new answer for a key replaces the old one whichever cache it was in (a revoked token is
//!   not still found authenticated).
//! - An authenticated answer or an allowed decision is pushed out only by others of its kind:
//!   by tokens the API server authenticates, or by users it allows.
//! - Keys are SHA-256 digests (of the token, of the review's spec); no token is kept.

use std::time::Duration;

use k8s_openapi::api::authentication::v1::UserInfo;

use super::ttl_cache::TtlCache;

/// How long a token review's answer is reused (controller-runtime: `CacheTTL`).
pub const TOKEN_TTL: Duration = Duration::from_secs(60);
/// How long an allowed decision is reused (controller-runtime: `AllowCacheTTL`).
pub const ALLOW_TTL: Duration = Duration::from_secs(5 * 60);
/// How long a denied decision is reused (controller-runtime: `DenyCacheTTL`).
pub const DENY_TTL: Duration = Duration::from_secs(30);
/// The most entries of each cache.
pub const CACHE_ENTRIES: usize = 1024;

/// A SHA-256 digest: of a token, or of a SubjectAccessReview's spec.
pub(super) type Key = [u8; 32];

/// What the API server said of a token.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum TokenAnswer {
    /// It names this user.
    Authenticated(UserInfo),
    /// It names nobody.
    Unauthenticated,
}

/// The four caches.
#[derive(Debug)]
pub(super) struct ReviewCache {
    /// Tokens the API server authenticated: only a valid token can add one.
    authenticated: TtlCache<Key, UserInfo>,
    /// Tokens it did not authenticate: anyone can add these, so they live apart.
    unauthenticated: TtlCache<Key, ()>,
    /// Decisions that allowed the request.
    allowed: TtlCache<Key, ()>,
    /// Decisions that denied it.
    denied: TtlCache<Key, ()>,
}

impl ReviewCache {
    /// Empty caches of [`CACHE_ENTRIES`] entries each.
    pub(super) fn new() -> Self {
        Self {
            authenticated: TtlCache::new(CACHE_ENTRIES),
            unauthenticated: TtlCache::new(CACHE_ENTRIES),
            allowed: TtlCache::new(CACHE_ENTRIES),
            denied: TtlCache::new(CACHE_ENTRIES),
        }
    }

    /// The remembered answer for the token whose digest is `key`.
    pub(super) fn token(&self, key: &Key) -> Option<TokenAnswer> {
        if let Some(user) = self.authenticated.get(key) {
            return Some(TokenAnswer::Authenticated(user));
        }
        self.unauthenticated
            .get(key)
            .map(|()| TokenAnswer::Unauthenticated)
    }

    /// Remembers `answer` for the token whose digest is `key`, for [`TOKEN_TTL`].
    pub(super) fn remember_token(&self, key: Key, answer: TokenAnswer) {
        match answer {
            TokenAnswer::Authenticated(user) => {
                self.unauthenticated.remove(&key);
                self.authenticated.insert(key, user, TOKEN_TTL);
            }
            TokenAnswer::Unauthenticated => {
                self.authenticated.remove(&key);
                self.unauthenticated.insert(key, (), TOKEN_TTL);
            }
        }
    }

    /// The remembered decision for the review whose digest is `key`: allowed or not.
    pub(super) fn decision(&self, key: &Key) -> Option<bool> {
        if self.allowed.get(key).is_some() {
            return Some(true);
        }
        self.denied.get(key).map(|()| false)
    }

    /// Remembers a decision, for [`ALLOW_TTL`] or [`DENY_TTL`].
    pub(super) fn remember_decision(&self, key: Key, allowed: bool) {
        if allowed {
            self.denied.remove(&key);
            self.allowed.insert(key, (), ALLOW_TTL);
        } else {
            self.allowed.remove(&key);
            self.denied.insert(key, (), DENY_TTL);
        }
    }
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::*;

    fn key(text: &str) -> Key {
        Sha256::digest(text.as_bytes()).into()
    }

    fn prometheus() -> TokenAnswer {
        TokenAnswer::Authenticated(UserInfo {
            username: Some("system:serviceaccount:monitoring:prometheus".to_owned()),
            ..UserInfo::default()
        })
    }

    #[test]
    fn an_authenticated_token_should_survive_ten_thousand_made_up_ones() {
        let cache = ReviewCache::new();
        cache.remember_token(key("prometheus"), prometheus());
        for i in 0..10_000 {
            cache.remember_token(key(&format!("made-up-{i}")), TokenAnswer::Unauthenticated);
        }
        assert_eq!(cache.token(&key("prometheus")), Some(prometheus()));
        assert_eq!(cache.unauthenticated.len(), CACHE_ENTRIES, "bounded");
        assert_eq!(
            cache.token(&key("made-up-9999")),
            Some(TokenAnswer::Unauthenticated)
        );
    }

    #[test]
    fn an_allowed_decision_should_survive_ten_thousand_denied_ones() {
        let cache = ReviewCache::new();
        cache.remember_decision(key("prometheus on /metrics"), true);
        for i in 0..10_000 {
            cache.remember_decision(key(&format!("user-{i} on /metrics")), false);
        }
        assert_eq!(cache.decision(&key("prometheus on /metrics")), Some(true));
        assert_eq!(cache.denied.len(), CACHE_ENTRIES, "bounded");
    }

    #[test]
    fn a_newer_answer_should_replace_the_older_one_of_the_other_kind() {
        let cache = ReviewCache::new();
        cache.remember_token(key("revoked"), prometheus());
        cache.remember_token(key("revoked"), TokenAnswer::Unauthenticated);
        assert_eq!(cache.token(&key("revoked")), Some(TokenAnswer::Unauthenticated));
        cache.remember_decision(key("review"), true);
        cache.remember_decision(key("review"), false);
        assert_eq!(cache.decision(&key("review")), Some(false));
        assert_eq!(cache.token(&key("unknown")), None);
        assert_eq!(cache.decision(&key("unknown")), None);
    }
}
