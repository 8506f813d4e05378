//! Which browser pages may call the API (`HUIT_CORS_ORIGINS`).

use actix_cors::Cors;
use actix_web::http::header::{self, HeaderName};
use actix_web::http::StatusCode;

use crate::codes::ProblemCode;
use crate::error::ApiError;

/// The CORS origins of the settings, checked: `scheme://host[:port]` each
/// (empty entries ignored); anything else stops the start with a reason.
pub(super) fn cors_origins(raw: &[String]) -> std::io::Result<Vec<String>> {
    raw.iter()
        .map(|o| o.trim())
        .filter(|o| !o.is_empty())
        .map(|o| {
            let uri: actix_web::http::Uri = o.parse().map_err(|e| bad_origin(o, &e))?;
            let plain = matches!(uri.scheme_str(), Some("http" | "https"))
                && uri.authority().is_some()
                && matches!(uri.path(), "" | "/")
                && uri.query().is_none();
            if plain {
                Ok(o.trim_end_matches('/').to_owned())
            } else {
                Err(bad_origin(o, &"expected scheme://host[:port]"))
            }
        })
        .collect()
}

pub(super) fn bad_origin(origin: &str, why: &dyn std::fmt::Display) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("HUIT_CORS_ORIGINS: {origin:?} is not an origin: {why}"),
    )
}

/// Browser pages of `origins` may call the API: the methods and request
/// headers it takes, and the response headers a client reads.
pub(super) fn cors(origins: &[String]) -> Cors {
    let cors = Cors::default()
        .allowed_methods(["GET", "POST", "DELETE"])
        .allowed_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::IF_MATCH,
            header::IF_NONE_MATCH,
            HeaderName::from_static("idempotency-key"),
            HeaderName::from_static("last-event-id"),
        ])
        .expose_headers([
            header::ETAG,
            header::LOCATION,
            header::RETRY_AFTER,
            HeaderName::from_static("x-request-id"),
            HeaderName::from_static("idempotent-replayed"),
        ])
        .max_age(3600);
    origins
        .iter()
        .fold(cors, |cors, origin| cors.allowed_origin(origin))
}

/// A preflight refused: an origin, method or header not allowed.
pub(super) fn cors_refused() -> ApiError {
    ApiError::Problem {
        status: StatusCode::BAD_REQUEST,
        code: ProblemCode::CorsRefused,
        detail: "this origin, method or request header is not allowed here (CORS)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cors_origins_are_scheme_host_and_port_only() {
        let ok = cors_origins(&[
            "https://app.example".into(),
            " http://localhost:5173/ ".into(),
            "".into(),
        ])
        .unwrap();
        assert_eq!(ok, ["https://app.example", "http://localhost:5173"]);
        for bad in [
            "*",
            "app.example",
            "https://app.example/path",
            "ftp://x",
            "https://",
        ] {
            assert!(cors_origins(&[bad.into()]).is_err(), "{bad}");
        }
    }
}
