//! A throwaway PKI for TLS tests, generated in memory: a CA, a server certificate for
//! `127.0.0.1` and `localhost`, and client certificates, all PEM. Nothing is written to disk and
//! no key outlives the test process.

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};

/// A certificate and its private key, PEM.
#[derive(Clone)]
pub struct CertAndKey {
    /// The certificate.
    pub cert_pem: String,
    /// Its private key (PKCS#8).
    pub key_pem: String,
}

impl std::fmt::Debug for CertAndKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertAndKey").finish_non_exhaustive()
    }
}

/// A test certificate authority.
pub struct TestPki {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl std::fmt::Debug for TestPki {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestPki").finish_non_exhaustive()
    }
}

impl TestPki {
    /// A fresh CA named `name`.
    ///
    /// # Panics
    /// When key generation fails (a broken crypto backend).
    pub fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("no names to parse");
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("a CA key");
        Self {
            issuer: CertifiedIssuer::self_signed(params, key).expect("a self-signed CA"),
        }
    }

    /// The CA certificate, PEM.
    pub fn ca_pem(&self) -> String {
        self.issuer.pem()
    }

    /// A server certificate for `127.0.0.1` and `localhost`, signed by this CA.
    ///
    /// # Panics
    /// As [`TestPki::new`].
    pub fn server(&self) -> CertAndKey {
        self.leaf(
            vec!["127.0.0.1".to_owned(), "localhost".to_owned()],
            "ferrvault-sim",
            ExtendedKeyUsagePurpose::ServerAuth,
        )
    }

    /// A client certificate for `name`, signed by this CA.
    ///
    /// # Panics
    /// As [`TestPki::new`].
    pub fn client(&self, name: &str) -> CertAndKey {
        self.leaf(Vec::new(), name, ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn leaf(&self, names: Vec<String>, common_name: &str, usage: ExtendedKeyUsagePurpose) -> CertAndKey {
        let mut params = CertificateParams::new(names).expect("valid names");
        params.distinguished_name.push(DnType::CommonName, common_name);
        params.extended_key_usages = vec![usage];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        let key = KeyPair::generate().expect("a leaf key");
        let cert = params.signed_by(&key, &self.issuer).expect("a signed leaf");
        CertAndKey {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }
}
