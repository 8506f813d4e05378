//! The request headers of the table routes, each parsed once, as an
//! extractor, into what it means: `If-Match` (the version a move is based
//! on), `If-None-Match` (the versions a client has) and `Idempotency-Key`.
//! A header that is not visible ASCII, or not of its form, is 400
//! `invalid_header` before the handler runs.

use std::future::{ready, Ready};

use actix_web::dev::Payload;
use actix_web::http::{header, StatusCode};
use actix_web::{FromRequest, HttpRequest};

use crate::codes::ProblemCode;
use crate::error::ApiError;

/// An `ETag` header for a table at `version`: `"<version>"`.
pub fn etag(version: i64) -> (header::HeaderName, String) {
    (header::ETAG, format!("\"{version}\""))
}

fn bad_header(detail: String) -> ApiError {
    ApiError::Problem {
        status: StatusCode::BAD_REQUEST,
        code: ProblemCode::InvalidHeader,
        detail,
    }
}

/// `"N"` (or `W/"N"`) as a version; a bare `N` is read as `"N"`.
fn parse_etag(raw: &str) -> Option<i64> {
    let raw = raw.trim();
    if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) {
        return raw.parse().ok();
    }
    let raw = raw.strip_prefix("W/").unwrap_or(raw);
    raw.strip_prefix('"')?.strip_suffix('"')?.parse().ok()
}

fn header_str<'r>(req: &'r HttpRequest, name: &str) -> Result<Option<&'r str>, ApiError> {
    req.headers()
        .get(name)
        .map(|v| {
            v.to_str()
                .map_err(|_| bad_header(format!("{name} is not visible ASCII")))
        })
        .transpose()
}

/// `If-Match`: the version a move is based on; `None` when absent or `*`.
#[derive(Debug, Clone, Copy)]
pub struct IfMatch(pub Option<i64>);

impl IfMatch {
    fn parse(req: &HttpRequest) -> Result<Self, ApiError> {
        Ok(Self(match header_str(req, "if-match")? {
            None => None,
            Some(raw) if raw.trim() == "*" => None,
            Some(raw) => Some(
                parse_etag(raw)
                    .ok_or_else(|| bad_header("If-Match: expected \"<version>\"".into()))?,
            ),
        }))
    }
}

impl FromRequest for IfMatch {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(Self::parse(req))
    }
}

/// `If-None-Match`: the ETags a client has (or `*`); `None` when absent.
#[derive(Debug, Clone)]
pub struct IfNoneMatch(Option<String>);

impl IfNoneMatch {
    pub fn is_present(&self) -> bool {
        self.0.is_some()
    }

    /// The newest version the client has seen (0 for none): nothing older
    /// may be served to it.
    pub fn seen(&self) -> i64 {
        self.0
            .as_deref()
            .and_then(|raw| raw.split(',').filter_map(parse_etag).max())
            .unwrap_or(0)
    }

    /// Does the client have the table at `version` (a 304)?
    pub fn has(&self, version: i64) -> bool {
        self.0.as_deref().is_some_and(|raw| {
            raw.trim() == "*" || raw.split(',').any(|t| parse_etag(t) == Some(version))
        })
    }
}

impl FromRequest for IfNoneMatch {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(header_str(req, "if-none-match").map(|raw| Self(raw.map(str::to_owned))))
    }
}

/// `Idempotency-Key`: 1 to 255 visible ASCII characters, spaces allowed
/// inside; `None` when absent.
#[derive(Debug, Clone)]
pub struct IdempotencyKey(pub Option<String>);

/// The documented pattern `^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$`.
fn is_idempotency_key(key: &str) -> bool {
    let b = key.as_bytes();
    (1..=255).contains(&b.len())
        && b.iter().all(|c| (0x20..=0x7e).contains(c))
        && b.first() != Some(&b' ')
        && b.last() != Some(&b' ')
}

impl FromRequest for IdempotencyKey {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(match header_str(req, "idempotency-key") {
            Ok(Some(key)) if !is_idempotency_key(key) => Err(bad_header(
                "Idempotency-Key: 1 to 255 visible ASCII characters (inner spaces allowed)".into(),
            )),
            Ok(key) => Ok(Self(key.map(str::to_owned))),
            Err(e) => Err(e),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_are_quoted_weak_or_bare_versions() {
        assert_eq!(parse_etag("\"12\""), Some(12));
        assert_eq!(parse_etag("W/\"12\""), Some(12));
        assert_eq!(parse_etag(" 12 "), Some(12));
        assert_eq!(parse_etag("\"x\""), None);
        assert_eq!(parse_etag(""), None);
    }

    #[test]
    fn idempotency_keys_are_visible_ascii_with_inner_spaces() {
        assert!(is_idempotency_key("a b"));
        assert!(is_idempotency_key(&"k".repeat(255)));
        for bad in ["", " a", "a ", "a\tb", "é", &"k".repeat(256)] {
            assert!(!is_idempotency_key(bad), "{bad:?}");
        }
    }
}
