//! Secure metrics, the kubebuilder way (`--metrics-secure`): `/metrics` over HTTPS ([`tls`]),
//! every scrape authenticated with a `TokenReview` and authorized with a `SubjectAccessReview`
//! ([`guard`]), answers cached briefly, negative apart from positive (`review_cache.rs` over
//! `ttl_cache.rs`), reviews limited per source address (`source_limit.rs`).

pub mod guard;
mod review_cache;
mod source_limit;
pub mod tls;
mod ttl_cache;

pub use guard::{MetricsGuard, Refusal};
pub use tls::{CertError, CertSource, ServingCert};

/// What `--metrics-secure` needs: where the serving certificate comes from, and a client to
/// review scrapes with (the operator's identity, without the write fence: reviews are not
/// reconcile writes and standbys must answer scrapes too).
#[derive(Clone)]
pub struct SecureMetrics {
    /// The serving certificate.
    pub cert: CertSource,
    /// Reviews scrapes.
    pub client: kube::Client,
}
