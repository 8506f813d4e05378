//! The server as a client of other HTTP services (the webhooks' receiver
//! now, the phones' push services next): the one place their clients are
//! built. TLS is rustls (no OpenSSL), trusting the platform's roots (the
//! image's `ca-certificates`) and, when `HUIT_EXTRA_CA_FILE` names one, the
//! certificates of a PEM file: a company's own authority, or a test's.

use std::path::Path;

/// The certificates trusted beyond the platform's: those of
/// `HUIT_EXTRA_CA_FILE`, read once at start-up.
#[derive(Debug, Clone, Default)]
pub struct ExtraRoots(Vec<reqwest::Certificate>);

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
        Ok(Self(certificates))
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
