//! Which handshakes of an endpoint's client the server asked for a client certificate in (a
//! TLS `CertificateRequest`), so that a refusal whose alert never reached the request is still
//! recognised ([`TlsRefusal::ClientCertificateRefused`](super::TlsRefusal)).
//!
//! In TLS 1.3 the server judges the client's certificate (or its absence) after the client has
//! finished the handshake, so its refusal is an alert on the first read. When hyper's connection
//! task makes that read before it sends the request, the alert ends the task and the request
//! only learns that the connection closed: under load, one attempt in three here. Counting the
//! requests for a certificate tells such a closure apart from any other.
//!
//! # Guarantees
//! - The client's certificate choice is unchanged: the recorder asks the resolver it wraps.
//! - An attempt counts as refused over its certificate only when the connection closed before
//!   any answer and the server asked for a certificate since the attempt began
//!   ([`CertificateRequests::asked_since`]): an endpoint whose server never asks, and an
//!   attempt that reused a connection, keep their transport error.

use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering},
};

use rustls::{SignatureScheme, client::ResolvesClientCert, sign::CertifiedKey};

/// How many times the server of one endpoint asked for a client certificate.
#[derive(Debug, Default)]
pub(crate) struct CertificateRequests(AtomicU64);

impl CertificateRequests {
    /// The count now, to compare with [`asked_since`](Self::asked_since) after an attempt.
    pub(crate) fn count(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    /// Whether the server asked for a certificate since the count was `before`.
    pub(crate) fn asked_since(&self, before: u64) -> bool {
        self.count() > before
    }
}

/// A client-certificate resolver that counts the server's requests, then answers as `inner`.
#[derive(Debug)]
pub(crate) struct CountingResolver {
    pub(crate) inner: Arc<dyn ResolvesClientCert>,
    pub(crate) requests: Arc<CertificateRequests>,
}

impl ResolvesClientCert for CountingResolver {
    fn resolve(
        &self,
        root_hint_subjects: &[&[u8]],
        sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        self.requests.0.fetch_add(1, Ordering::AcqRel);
        self.inner.resolve(root_hint_subjects, sigschemes)
    }

    fn only_raw_public_keys(&self) -> bool {
        self.inner.only_raw_public_keys()
    }

    fn has_certs(&self) -> bool {
        self.inner.has_certs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct NoCertificate;

    impl ResolvesClientCert for NoCertificate {
        fn resolve(&self, _: &[&[u8]], _: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
            None
        }

        fn has_certs(&self) -> bool {
            false
        }
    }

    #[test]
    fn a_request_for_a_certificate_should_count_only_after_the_count_it_follows() {
        let requests = Arc::new(CertificateRequests::default());
        let resolver = CountingResolver {
            inner: Arc::new(NoCertificate),
            requests: requests.clone(),
        };
        let before = requests.count();
        assert!(!requests.asked_since(before));
        assert!(resolver.resolve(&[], &[]).is_none());
        assert!(requests.asked_since(before));
        assert!(!requests.asked_since(requests.count()));
        assert!(!resolver.has_certs());
    }
}
