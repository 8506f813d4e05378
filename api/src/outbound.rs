//! The server as a client of other HTTP services (the webhooks' receiver,
//! APNs, FCM and its token service): the one place their clients are
//! built. TLS is rustls (no OpenSSL), trusting the platform's roots (the
//! image's `ca-certificates`) and, when `HUIT_EXTRA_CA_FILE` names one, the
//! certificates of a PEM file: a company's own authority, or a test's.

use std::path::Path;
use std::sync::Arc;

use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

/// The certificates trusted beyond the platform's: those of
/// `HUIT_EXTRA_CA_FILE`, read once at start-up (for reqwest, and as DER for
/// the hyper client of FCM's token service).
#[derive(Debug, Clone, Default)]
pub struct ExtraRoots(Vec<reqwest::Certificate>, Vec<CertificateDer<'static>>);

impl ExtraRoots {
    /// The certificates of the PEM file at `path`: an error names the file
    /// when it cannot be read, or holds no certificate.
    pub fn read(path: &Path) -> Result<Self, String> {
        let shown = path.display();
        let pem = std::fs::read(path).map_err(|e| format!("HUIT_EXTRA_CA_FILE {shown}: {e}"))?;
        let certificates = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| format!("HUIT_EXTRA_CA_FILE {shown}: {e}"))?;
        if certificates.is_empty() {
            return Err(format!(
                "HUIT_EXTRA_CA_FILE {shown}: no PEM certificate in it"
            ));
        }
        let ders = CertificateDer::pem_slice_iter(&pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("HUIT_EXTRA_CA_FILE {shown}: {e}"))?;
        Ok(Self(certificates, ders))
    }

    /// How many certificates (for the start-up log).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A client builder with rustls, the platform's roots and `extra`; the
/// caller adds its timeouts, redirects and name.
pub fn client(extra: &ExtraRoots) -> reqwest::ClientBuilder {
    extra.0.iter().fold(
        reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_native_certs(true),
        |builder, certificate| builder.add_root_certificate(certificate.clone()),
    )
}

/// A hyper client (HTTP/1.1 and 2 over rustls, with the platform's roots
/// and `extra`) for what takes one rather than reqwest: yup-oauth2, for
/// FCM's access tokens.
pub fn hyper_client(
    extra: &ExtraRoots,
) -> Result<Client<HttpsConnector<HttpConnector>, String>, String> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    for certificate in &extra.1 {
        roots
            .add(certificate.clone())
            .map_err(|e| format!("HUIT_EXTRA_CA_FILE: {e}"))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .build();
    Ok(Client::builder(TokioExecutor::new()).build(connector))
}

/// A client error (without its URL, which may hold credentials) with its
/// causes: "error sending request: … Connection refused".
pub fn described(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    text
}
