//! A certificate authority of a test's own, and the certificates it signs:
//! what a private network's authority is to a deployed server.

use std::path::Path;
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose,
};

/// An authority: its certificate (to trust) and its key (to sign).
#[derive(Debug)]
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl TestCa {
    pub fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("a key");
        Self {
            issuer: CertifiedIssuer::self_signed(params, key).expect("a CA certificate"),
        }
    }

    /// Its certificate, PEM, written at `path` (what HUIT_EXTRA_CA_FILE or
    /// `sslrootcert` names).
    pub fn write_pem(&self, path: &Path) {
        std::fs::write(path, self.issuer.pem()).expect("write the CA's certificate");
    }

    /// A TLS server's configuration for 127.0.0.1 and localhost, its
    /// certificate signed by this authority.
    pub fn server_config(&self) -> rustls::ServerConfig {
        let key = KeyPair::generate().expect("a key");
        let params = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .expect("server parameters");
        let certificate = params.signed_by(&key, &self.issuer).expect("signed");
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into());
        rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![certificate.der().clone()], key)
        .expect("a server configuration")
    }
}
