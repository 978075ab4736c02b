//! Authentication and authorization of metrics scrapes, as controller-runtime's
//! `filters.WithAuthenticationAndAuthorization` does them: the bearer token is reviewed by the
//! API server (`TokenReview`), then the user it names must be allowed `get` (the request's verb)
//! on the request's path (`SubjectAccessReview` with `nonResourceAttributes`), which the
//! `metrics-reader` ClusterRole grants for `/metrics`.
//!
//! # Guarantees
//! - No token: 401. A token the API server does not authenticate: 401. Authenticated but not
//!   allowed: 403 naming the user. A review that fails (API server unreachable, timeout): 500,
//!   never an answer from a guess; nothing is cached then.
//! - Answers are cached like controller-runtime's ([`TOKEN_TTL`], [`ALLOW_TTL`], [`DENY_TTL`]),
//!   negative answers apart from positive ones, each cache bounded by [`CACHE_ENTRIES`]
//!   (`review_cache.rs`): made-up tokens cannot push out Prometheus's cached review.
//! - A review the caches cannot spare draws from its source address's bucket
//!   (`source_limit.rs`: [`REVIEW_BURST`], then [`REVIEWS_PER_SECOND`]); an empty bucket is a 429
//!   with `Retry-After` and no review. A cached answer draws nothing.
//! - At most [`CONCURRENT_REVIEWS`] reviews are in flight at once per process, each bounded by
//!   [`REVIEW_TIMEOUT`].
//! - The token is never logged, stored or put in an answer: caches are keyed by its SHA-256.
//! - The guard judges a request it is given; which paths reach it is the caller's choice
//!   (`routes.rs` sends `/metrics` only, so an unknown path costs no review).

use std::{
    net::IpAddr,
    sync::Arc,
    time::{Duration, Instant},
};

use http::{HeaderValue, Method, StatusCode};
use k8s_openapi::api::{
    authentication::v1::{TokenReview, TokenReviewSpec, UserInfo},
    authorization::v1::{NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec},
};
use kube::{Api, api::PostParams};
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

pub use super::{
    review_cache::{ALLOW_TTL, CACHE_ENTRIES, DENY_TTL, TOKEN_TTL},
    source_limit::{REVIEW_BURST, REVIEWS_PER_SECOND},
};
use super::{
    review_cache::{ReviewCache, TokenAnswer},
    source_limit::SourceLimit,
};

/// Reviews in flight at once.
pub const CONCURRENT_REVIEWS: usize = 4;
/// The longest one review may take, waiting for its turn included.
pub const REVIEW_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a scrape was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No bearer token, or one the API server does not authenticate.
    Unauthenticated,
    /// The user may not `get` the path.
    Forbidden {
        /// The authenticated user's name.
        user: String,
    },
    /// The request's source address has no review left for now.
    TooManyReviews {
        /// When its bucket holds a review again.
        retry_after: Duration,
    },
    /// A review could not be made.
    ReviewFailed(&'static str),
}

impl Refusal {
    /// 401, 403, 429 or 500.
    pub fn status(&self) -> StatusCode {
        match self {
            Refusal::Unauthenticated => StatusCode::UNAUTHORIZED,
            Refusal::Forbidden { .. } => StatusCode::FORBIDDEN,
            Refusal::TooManyReviews { .. } => StatusCode::TOO_MANY_REQUESTS,
            Refusal::ReviewFailed(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The text answered (controller-runtime's wording where it has one).
    pub fn body(&self) -> String {
        match self {
            Refusal::Unauthenticated => "Unauthorized\n".to_owned(),
            Refusal::Forbidden { user } => format!("Authorization denied for user {user}\n"),
            Refusal::TooManyReviews { .. } => "Too many reviews from this address\n".to_owned(),
            Refusal::ReviewFailed(what) => format!("{what} failed\n"),
        }
    }

    /// How long the client should wait before trying again, when the refusal says.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Refusal::TooManyReviews { retry_after } => Some(*retry_after),
            Refusal::Unauthenticated | Refusal::Forbidden { .. } | Refusal::ReviewFailed(_) => None,
        }
    }
}

/// Reviews scrapes against the API server, with caches and a review budget per address.
pub struct MetricsGuard {
    client: kube::Client,
    /// Answers by SHA-256 of the token, or of the review's subject and attributes.
    answers: ReviewCache,
    /// Reviews each source address may still start.
    sources: SourceLimit,
    reviews: Semaphore,
}

impl MetricsGuard {
    /// A guard reviewing through `client` (the operator's own identity, which needs `create` on
    /// `tokenreviews` and `subjectaccessreviews`).
    pub fn new(client: kube::Client) -> Arc<Self> {
        Arc::new(Self {
            client,
            answers: ReviewCache::new(),
            sources: SourceLimit::default(),
            reviews: Semaphore::new(CONCURRENT_REVIEWS),
        })
    }

    /// Admits a `method` request for `path` from `source` whose bearer token (in
    /// `authorization`, the request's `Authorization` header) names a user allowed that verb on
    /// that path.
    ///
    /// # Errors
    /// The [`Refusal`] to answer.
    pub async fn admit(
        &self,
        method: &Method,
        path: &str,
        authorization: Option<&HeaderValue>,
        source: IpAddr,
    ) -> Result<(), Refusal> {
        let token = authorization.and_then(bearer).ok_or(Refusal::Unauthenticated)?;
        let user = match self.authenticate(token, source).await? {
            TokenAnswer::Authenticated(user) => user,
            TokenAnswer::Unauthenticated => return Err(Refusal::Unauthenticated),
        };
        let attributes = NonResourceAttributes {
            path: Some(path.to_owned()),
            verb: Some(verb(method)),
        };
        if self.authorize(&user, attributes, source).await? {
            Ok(())
        } else {
            Err(Refusal::Forbidden {
                user: user.username.unwrap_or_default(),
            })
        }
    }

    async fn authenticate(&self, token: &str, source: IpAddr) -> Result<TokenAnswer, Refusal> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(known) = self.answers.token(&key) {
            return Ok(known);
        }
        self.draw(source)?;
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: Some(token.to_owned()),
                audiences: None,
            },
            ..TokenReview::default()
        };
        let answer = self
            .review(
                Api::<TokenReview>::all(self.client.clone()),
                review,
                "Authentication",
            )
            .await?;
        let answer = match answer
            .status
            .filter(|status| status.authenticated == Some(true))
            .and_then(|status| status.user)
        {
            Some(user) => TokenAnswer::Authenticated(user),
            None => TokenAnswer::Unauthenticated,
        };
        self.answers.remember_token(key, answer.clone());
        Ok(answer)
    }

    async fn authorize(
        &self,
        user: &UserInfo,
        attributes: NonResourceAttributes,
        source: IpAddr,
    ) -> Result<bool, Refusal> {
        let spec = SubjectAccessReviewSpec {
            user: user.username.clone(),
            uid: user.uid.clone(),
            groups: user.groups.clone(),
            extra: user.extra.clone(),
            non_resource_attributes: Some(attributes),
            resource_attributes: None,
        };
        let key: [u8; 32] = Sha256::digest(serde_json::to_vec(&spec).unwrap_or_default()).into();
        if let Some(known) = self.answers.decision(&key) {
            return Ok(known);
        }
        self.draw(source)?;
        let review = SubjectAccessReview {
            spec,
            ..SubjectAccessReview::default()
        };
        let answer = self
            .review(
                Api::<SubjectAccessReview>::all(self.client.clone()),
                review,
                "Authorization",
            )
            .await?;
        let allowed = answer.status.is_some_and(|status| status.allowed);
        self.answers.remember_decision(key, allowed);
        Ok(allowed)
    }

    /// Takes one review from `source`'s bucket, or refuses with how long to wait.
    fn draw(&self, source: IpAddr) -> Result<(), Refusal> {
        self.sources
            .take(source, Instant::now())
            .map_err(|retry_after| Refusal::TooManyReviews { retry_after })
    }

    /// Creates one review, within the concurrency bound and the timeout.
    async fn review<K>(&self, api: Api<K>, review: K, what: &'static str) -> Result<K, Refusal>
    where
        K: kube::Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        let attempt = async {
            let _turn = self
                .reviews
                .acquire()
                .await
                .map_err(|_| Refusal::ReviewFailed(what))?;
            api.create(&PostParams::default(), &review)
                .await
                .map_err(|error| {
                    // kube's error names the status and reason; the request body (the token) is not in it.
                    tracing::warn!(%error, "metrics {what} review failed");
                    Refusal::ReviewFailed(what)
                })
        };
        tokio::time::timeout(REVIEW_TIMEOUT, attempt)
            .await
            .unwrap_or_else(|_| {
                tracing::warn!("metrics {what} review timed out");
                Err(Refusal::ReviewFailed(what))
            })
    }
}

/// The bearer token of an `Authorization` header's value, if any.
fn bearer(authorization: &HeaderValue) -> Option<&str> {
    let value = authorization.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The verb a request is authorized as: `get` for GET and HEAD, like the API server's
/// non-resource requests; the lower-cased method otherwise.
fn verb(method: &Method) -> String {
    if method == Method::GET || method == Method::HEAD {
        "get".to_owned()
    } else {
        method.as_str().to_ascii_lowercase()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_bearer_authorization_should_carry_a_token() {
        let with = |value: &str| bearer(&value.parse().expect("header")).map(str::to_owned);
        assert_eq!(with("Bearer abc"), Some("abc".into()));
        assert_eq!(with("bearer  abc "), Some("abc".into()));
        assert_eq!(with("Basic abc"), None);
        assert_eq!(with("Bearer "), None);
        assert_eq!(
            bearer(&HeaderValue::from_bytes(b"Bearer \xff").expect("header")),
            None
        );
    }

    #[test]
    fn head_should_be_authorized_as_get() {
        assert_eq!(verb(&Method::HEAD), "get");
        assert_eq!(verb(&Method::GET), "get");
        assert_eq!(verb(&Method::POST), "post");
    }
}
