//! The problem+json answers many routes share, declared once for the
//! OpenAPI document (`responses(..., Unauthorized, ServiceUnavailable)`);
//! the routes list only the answers of their own.

use std::collections::BTreeMap;

use utoipa::openapi::{RefOr, Response};
use utoipa::IntoResponses;

use crate::error::Problem;

/// 400: the body is not JSON.
#[derive(Debug, IntoResponses)]
#[response(
    status = 400,
    description = "`malformed_json`",
    content_type = "application/problem+json"
)]
pub struct MalformedJson(pub Problem);

/// 401: no valid bearer token (missing, unknown, revoked or expired).
#[derive(Debug, IntoResponses)]
#[response(
    status = 401,
    description = "`unauthorized`",
    content_type = "application/problem+json"
)]
pub struct Unauthorized(pub Problem);

/// 404 on a table's routes.
#[derive(Debug, IntoResponses)]
#[response(
    status = 404,
    description = "`not_found`: no such table",
    content_type = "application/problem+json"
)]
pub struct TableNotFound(pub Problem);

/// 413 and 415: a JSON body too large, or not sent as JSON.
#[derive(Debug, IntoResponses)]
pub enum JsonBodyRefused {
    #[response(
        status = 413,
        description = "`payload_too_large`",
        content_type = "application/problem+json"
    )]
    PayloadTooLarge(Problem),
    #[response(
        status = 415,
        description = "`unsupported_media_type`",
        content_type = "application/problem+json"
    )]
    UnsupportedMediaType(Problem),
}

/// 429 on long polls and streams.
#[derive(Debug, IntoResponses)]
#[response(
    status = 429,
    description = "`too_many_streams`: too many open long polls and streams for this account or address; see `Retry-After`",
    content_type = "application/problem+json",
    headers(("Retry-After" = u64, description = "Seconds to wait"))
)]
pub struct TooManyStreams(pub Problem);

/// 503: the database does not answer (within the acquire timeout).
#[derive(Debug, IntoResponses)]
#[response(
    status = 503,
    description = "`service_unavailable`: the database does not answer",
    content_type = "application/problem+json"
)]
pub struct ServiceUnavailable(pub Problem);

/// What every authenticated route may answer besides its own: 401 and 503.
#[derive(Debug)]
pub struct Authenticated;

impl IntoResponses for Authenticated {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        let mut all = Unauthorized::responses();
        all.extend(ServiceUnavailable::responses());
        all
    }
}

/// What every route on one table may answer besides its own: 401, 404 (no
/// such table) and 503.
#[derive(Debug)]
pub struct OnTable;

impl IntoResponses for OnTable {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        let mut all = Authenticated::responses();
        all.extend(TableNotFound::responses());
        all
    }
}
