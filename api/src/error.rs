//! The one error type of the API and its RFC 9457 rendering.
//!
//! Every failure a client can see is an [`ApiError`]; [`ResponseError`] turns
//! it into `application/problem+json` with a stable machine `code`. Unexpected
//! failures are logged with their cause chain and answered as an opaque 500.

use std::error::Error as StdError;
use std::fmt::Write as _;

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use chrono::{DateTime, Utc};
use domain::table::CorrectionError;
use domain::{RuleError, TableError};
use serde::Serialize;
use utoipa::ToSchema;

use store::{self, StoreError};

use crate::codes::ProblemCode;
use crate::ratings::RatingError;
use crate::service_error::ServiceError;

/// Content type of every error answer.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// An error answered to a client.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400 `malformed_json`: the body is not JSON at all.
    #[error("the request body is not valid JSON: {0}")]
    MalformedJson(String),
    /// 422 `invalid_body`: JSON of the wrong shape (missing or unknown field,
    /// wrong type).
    #[error("the request body does not have the expected fields: {0}")]
    InvalidBody(String),
    /// 400 `invalid_query`.
    #[error("invalid query string: {0}")]
    InvalidQuery(String),
    /// 415 `unsupported_media_type`.
    #[error("the request body must be sent as Content-Type: application/json")]
    UnsupportedMediaType,
    /// 413 `payload_too_large`.
    #[error("the request body is larger than the limit of {limit} bytes")]
    PayloadTooLarge { limit: usize },
    /// 422 with a specific code (`invalid_username`, `invalid_password`, ...).
    #[error("{detail}")]
    Validation { code: ProblemCode, detail: String },
    /// 401 `unauthorized`: no, malformed, unknown, expired or revoked token.
    #[error("{0}")]
    Unauthorized(&'static str),
    /// 401 `invalid_credentials`: wrong username or password at log-in.
    #[error("wrong username or password")]
    InvalidCredentials,
    /// 401 `wrong_password`: the caller's password, asked again (to delete
    /// the account, to change the password), is not theirs.
    #[error("this is not the account's password")]
    WrongPassword,
    /// 403 `forbidden`.
    #[error("{0}")]
    Forbidden(String),
    /// 403 `account_suspended`: a log-in refused while a sanction stands;
    /// the problem says `until` when (null: a ban).
    #[error("this account is suspended")]
    AccountSuspended { until: Option<DateTime<Utc>> },
    /// 404 `not_found` (also for a path whose id is not a well-formed UUID).
    #[error("{0}")]
    NotFound(String),
    /// 405 `method_not_allowed`, with the `Allow` header (the methods the
    /// resource has).
    #[error("this method is not allowed on this resource")]
    MethodNotAllowed { allow: String },
    /// 409 `username_taken` (case-insensitively).
    #[error("this username is already taken")]
    UsernameTaken,
    /// 409 `version_conflict`: the table moved on since the version the
    /// client (or the server) based its change on. Nothing was changed.
    #[error("the table has changed since version {expected}; reload and retry")]
    VersionConflict { expected: i64 },
    /// 422 `idempotency_key_reused`: the same key with another request body.
    #[error("this Idempotency-Key was already used with a different request")]
    IdempotencyKeyReused,
    /// 429 with `Retry-After`: `too_many_requests` (failed log-ins, request
    /// rates) or `too_many_streams` (open long polls and streams).
    #[error("{detail}")]
    TooManyRequests {
        code: ProblemCode,
        detail: String,
        retry_after_secs: u64,
    },
    /// 503 `service_unavailable`: the database does not answer.
    #[error("the service is temporarily unavailable")]
    ServiceUnavailable(#[source] Option<sqlx::Error>),
    /// Any other client error with its own status and code (the engine's
    /// refusals: 422 `illegal_move`, 409 `table_full`, ...).
    #[error("{detail}")]
    Problem {
        status: StatusCode,
        code: ProblemCode,
        detail: String,
    },
    /// 500 `internal_error`: a bug or an unexpected failure. The cause is
    /// logged, never sent.
    #[error("internal error")]
    Internal(#[source] Box<dyn StdError + Send + Sync>),
}

impl ApiError {
    pub fn internal(err: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        Self::Internal(err.into())
    }

    /// 429 `too_many_requests`: `detail`, and `Retry-After` the wait
    /// rounded up to whole seconds (at least one).
    pub fn too_many_requests(detail: impl Into<String>, wait: std::time::Duration) -> Self {
        Self::TooManyRequests {
            code: ProblemCode::TooManyRequests,
            detail: detail.into(),
            retry_after_secs: whole_seconds(wait),
        }
    }

    /// The stable machine code of this error.
    pub fn code(&self) -> ProblemCode {
        match self {
            Self::MalformedJson(_) => ProblemCode::MalformedJson,
            Self::InvalidBody(_) => ProblemCode::InvalidBody,
            Self::InvalidQuery(_) => ProblemCode::InvalidQuery,
            Self::UnsupportedMediaType => ProblemCode::UnsupportedMediaType,
            Self::PayloadTooLarge { .. } => ProblemCode::PayloadTooLarge,
            Self::Validation { code, .. }
            | Self::Problem { code, .. }
            | Self::TooManyRequests { code, .. } => *code,
            Self::Unauthorized(_) => ProblemCode::Unauthorized,
            Self::InvalidCredentials => ProblemCode::InvalidCredentials,
            Self::WrongPassword => ProblemCode::WrongPassword,
            Self::Forbidden(_) => ProblemCode::Forbidden,
            Self::AccountSuspended { .. } => ProblemCode::AccountSuspended,
            Self::NotFound(_) => ProblemCode::NotFound,
            Self::MethodNotAllowed { .. } => ProblemCode::MethodNotAllowed,
            Self::UsernameTaken => ProblemCode::UsernameTaken,
            Self::VersionConflict { .. } => ProblemCode::VersionConflict,
            Self::IdempotencyKeyReused => ProblemCode::IdempotencyKeyReused,
            Self::ServiceUnavailable(_) => ProblemCode::ServiceUnavailable,
            Self::Internal(_) => ProblemCode::InternalError,
        }
    }
}

/// `Retry-After`'s seconds: `wait` rounded up, at least one.
fn whole_seconds(wait: std::time::Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

/// An RFC 9457 problem document, as sent.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "type": "urn:huit:problem:username_taken",
    "title": "Conflict",
    "status": 409,
    "detail": "this username is already taken",
    "code": "username_taken"
}))]
pub struct Problem {
    /// `urn:huit:problem:<code>`.
    #[serde(rename = "type")]
    pub type_: String,
    /// The HTTP status phrase.
    pub title: String,
    pub status: u16,
    /// A human-readable explanation of this occurrence.
    pub detail: String,
    /// Stable machine-readable code; clients switch on this.
    #[schema(value_type = ProblemCode)]
    pub code: String,
}

/// The problem of a log-in refused while a sanction stands (403
/// `account_suspended`): a [`Problem`] with the sanction's end.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "type": "urn:huit:problem:account_suspended",
    "title": "Forbidden",
    "status": 403,
    "detail": "this account is suspended",
    "code": "account_suspended",
    "until": "2025-03-01T00:00:00.000000Z"
}))]
pub struct SuspendedProblem {
    #[serde(rename = "type")]
    pub type_: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    #[schema(value_type = ProblemCode)]
    pub code: String,
    /// When the suspension ends; null: a ban, until an admin lifts it.
    #[schema(required = true)]
    pub until: Option<DateTime<Utc>>,
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::MalformedJson(_) | Self::InvalidQuery(_) => StatusCode::BAD_REQUEST,
            Self::InvalidBody(_) | Self::Validation { .. } | Self::IdempotencyKeyReused => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Unauthorized(_) | Self::InvalidCredentials | Self::WrongPassword => {
                StatusCode::UNAUTHORIZED
            }
            Self::Forbidden(_) | Self::AccountSuspended { .. } => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Self::UsernameTaken | Self::VersionConflict { .. } => StatusCode::CONFLICT,
            Self::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::ServiceUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Problem { status, .. } => *status,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status_code();
        match self {
            Self::Internal(_) => {
                tracing::error!(error.chain = %cause_chain(self), "unexpected error");
            }
            Self::ServiceUnavailable(_) => {
                tracing::warn!(error.chain = %cause_chain(self), "database unavailable");
            }
            _ => tracing::debug!(code = self.code().as_str(), "client error"),
        }
        let detail = match self {
            Self::Internal(_) => "an unexpected error occurred; it has been logged".to_owned(),
            other => other.to_string(),
        };
        let problem = Problem {
            type_: format!("urn:huit:problem:{}", self.code()),
            title: status.canonical_reason().unwrap_or("Error").to_owned(),
            status: status.as_u16(),
            detail,
            code: self.code().as_str().to_owned(),
        };
        let mut builder = HttpResponse::build(status);
        builder.content_type(PROBLEM_JSON);
        match self {
            Self::Unauthorized(_) | Self::InvalidCredentials | Self::WrongPassword => {
                builder.insert_header((
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"huit\""),
                ));
            }
            Self::TooManyRequests {
                retry_after_secs, ..
            } => {
                builder.insert_header((header::RETRY_AFTER, retry_after_secs.to_string()));
            }
            Self::ServiceUnavailable(_) => {
                builder.insert_header((header::RETRY_AFTER, "5"));
            }
            Self::MethodNotAllowed { allow } => {
                builder.insert_header((header::ALLOW, allow.as_str()));
            }
            Self::AccountSuspended { until } => {
                let Problem {
                    type_,
                    title,
                    status,
                    detail,
                    code,
                } = problem;
                return builder.json(SuspendedProblem {
                    type_,
                    title,
                    status,
                    detail,
                    code,
                    until: *until,
                });
            }
            _ => {}
        }
        builder.json(problem)
    }
}

/// `error: cause: cause ...`, for logs.
pub fn cause_chain(err: &dyn StdError) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let _ = write!(out, ": {cause}");
        source = cause.source();
    }
    out
}

impl From<sqlx::Error> for ApiError {
    /// A database that cannot be reached is 503; anything else is a 500.
    fn from(err: sqlx::Error) -> Self {
        if store::unavailable(&err) {
            Self::ServiceUnavailable(Some(err))
        } else {
            Self::Internal(Box::new(err))
        }
    }
}

/// The services' answers as HTTP, each kind of refusal with its status;
/// a rating that cannot be kept fails the write it was part of.
impl From<ServiceError> for ApiError {
    fn from(err: ServiceError) -> Self {
        use StatusCode as S;
        let problem = |status, code, detail| Self::Problem {
            status,
            code,
            detail,
        };
        match err {
            ServiceError::Rules(refusal) => refusal.into(),
            ServiceError::VersionConflict { expected } => Self::VersionConflict { expected },
            ServiceError::NotFound(what) => Self::NotFound(what),
            ServiceError::Forbidden { code, detail } => problem(S::FORBIDDEN, code, detail),
            ServiceError::Conflict { code, detail } => problem(S::CONFLICT, code, detail),
            ServiceError::Invalid { code, detail } => {
                problem(S::UNPROCESSABLE_ENTITY, code, detail)
            }
            ServiceError::Limited {
                code,
                detail,
                retry_after,
            } => Self::TooManyRequests {
                code,
                detail,
                retry_after_secs: whole_seconds(retry_after),
            },
            ServiceError::IdempotencyKeyReused => Self::IdempotencyKeyReused,
            ServiceError::Store(e) => e.into(),
            ServiceError::Rating(RatingError::Database(e)) => e.into(),
            ServiceError::Rating(corrupt) => Self::internal(corrupt),
            ServiceError::Internal(e) => Self::Internal(e),
        }
    }
}

/// The store's answers as HTTP: its refusals are client errors, a database
/// away is 503.
impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Conflict { expected } => Self::VersionConflict { expected },
            StoreError::NoTable => Self::NotFound("no such table".into()),
            StoreError::UsernameTaken => Self::UsernameTaken,
            StoreError::QuickPlayOpen => Self::Problem {
                status: StatusCode::CONFLICT,
                code: ProblemCode::QuickplayTableOpen,
                detail: "another quick-play table of these settings is open: \
                         POST /v1/quickplay sits you there"
                    .into(),
            },
            StoreError::KeyInUse => Self::Problem {
                status: StatusCode::CONFLICT,
                code: ProblemCode::IdempotencyKeyInUse,
                detail: err.to_string(),
            },
            StoreError::Shared { unavailable: true } => Self::ServiceUnavailable(None),
            StoreError::Shared { unavailable: false } | StoreError::Stopped(_) => {
                Self::internal(err)
            }
            StoreError::Db(e) => e.into(),
        }
    }
}

/// A refusal of the engine as an answer: state conflicts are 409, callers
/// who may not do this 403, bad rules and illegal moves 422. Every refusal
/// is placed here by name, so a new one cannot go unanswered; its code is
/// the engine's own ([`TableError::code`]), which must be one of
/// [`ProblemCode`]'s (a test goes through them all).
impl From<TableError> for ApiError {
    fn from(err: TableError) -> Self {
        use StatusCode as S;
        let status = match &err {
            TableError::Full
            | TableError::AlreadySeated
            | TableError::NotWaiting
            | TableError::NotEnoughPlayers { .. }
            | TableError::NotAway
            | TableError::SeatAway
            | TableError::AlreadyResigned
            | TableError::AbortTooLate
            | TableError::NoPersonSeated
            | TableError::Aborted
            | TableError::NoAutomaticMove
            | TableError::StartsByItself
            | TableError::GameNotOver
            | TableError::RematchOpen
            | TableError::Closed => S::CONFLICT,
            TableError::NotSeated
            | TableError::NotCreator
            | TableError::InvitationNeeded
            | TableError::SeatReserved => S::FORBIDDEN,
            TableError::InvalidClock(_) | TableError::Rules(_) => S::UNPROCESSABLE_ENTITY,
            TableError::Correction(c) => match c {
                CorrectionError::NotOver | CorrectionError::Aborted => S::CONFLICT,
                CorrectionError::NoSuchRound(_)
                | CorrectionError::PointsBySeat { .. }
                | CorrectionError::NoSuchSeat(_)
                | CorrectionError::Overflow => S::UNPROCESSABLE_ENTITY,
            },
            TableError::Rule(rule) => match rule {
                RuleError::GameOver | RuleError::NotStarted | RuleError::AlreadyStarted => {
                    S::CONFLICT
                }
                RuleError::NoSuchSeat(_)
                | RuleError::NotYourTurn { .. }
                | RuleError::NotInHand(_)
                | RuleError::Illegal { .. }
                | RuleError::BadChoice { .. }
                | RuleError::BadAnnounce(_)
                | RuleError::CannotDraw(_)
                | RuleError::CannotPass(_)
                | RuleError::CannotChallenge { .. }
                | RuleError::BadDeck(_) => S::UNPROCESSABLE_ENTITY,
            },
        };
        match err.code().parse::<ProblemCode>() {
            Ok(code) => ApiError::Problem {
                status,
                code,
                detail: err.to_string(),
            },
            Err(_) => ApiError::internal(format!(
                "the engine's code {:?} is no problem code",
                err.code()
            )),
        }
    }
}

impl From<actix_web::error::BlockingError> for ApiError {
    fn from(err: actix_web::error::BlockingError) -> Self {
        Self::internal(err)
    }
}

/// The error handler of `web::JsonConfig`.
pub fn json_error(err: actix_web::error::JsonPayloadError, limit: usize) -> ApiError {
    use actix_web::error::{JsonPayloadError as J, PayloadError};
    match err {
        J::OverflowKnownLength { .. } | J::Overflow { .. } => ApiError::PayloadTooLarge { limit },
        J::Payload(PayloadError::Overflow) => ApiError::PayloadTooLarge { limit },
        J::ContentType => ApiError::UnsupportedMediaType,
        J::Deserialize(e) if e.is_data() => ApiError::InvalidBody(e.to_string()),
        J::Deserialize(e) => ApiError::MalformedJson(e.to_string()),
        J::Payload(e) => ApiError::MalformedJson(e.to_string()),
        other => ApiError::MalformedJson(other.to_string()),
    }
}

/// The error handler of `web::PathConfig`: a path segment that does not
/// parse (a malformed UUID) names no resource, so it is a 404.
pub fn path_error(err: actix_web::error::PathError) -> ApiError {
    ApiError::NotFound(format!("no resource at this path ({err})"))
}

/// The error handler of `web::QueryConfig`.
pub fn query_error(err: actix_web::error::QueryPayloadError) -> ApiError {
    ApiError::InvalidQuery(err.to_string())
}

#[cfg(test)]
mod tests {
    use domain::{Card, RulesError};

    use super::*;

    /// A connection cut mid-message (PostgreSQL stopping under load) is the
    /// database being away: 503, not 500.
    #[test]
    fn a_garbled_connection_is_a_database_that_does_not_answer() {
        let err = ApiError::from(sqlx::Error::Protocol("unknown message type: '\\0'".into()));
        assert_eq!(err.status_code(), StatusCode::SERVICE_UNAVAILABLE);
    }

    /// The README's table of errors lists every code a client may meet.
    #[test]
    fn the_readme_lists_every_code() {
        use strum::IntoEnumIterator;
        let readme = include_str!("../../README.md");
        let table = readme
            .split("| status | code | when |")
            .nth(1)
            .and_then(|rest| rest.split("\n\n").next())
            .expect("the README's table of errors");
        for code in ProblemCode::iter() {
            let listed = format!("`{}`", code.as_str());
            assert!(table.contains(&listed), "the README's table lacks {listed}");
        }
    }

    /// A code is sent under the name serde gives it, and reads back.
    #[test]
    fn every_code_is_sent_as_its_serde_name() {
        use strum::IntoEnumIterator;
        for code in ProblemCode::iter() {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
            assert_eq!(code.as_str().parse::<ProblemCode>(), Ok(code));
        }
    }

    /// Every refusal of the engine, one of each kind, keeps its code when
    /// answered (the engine names it, the document lists it).
    #[test]
    fn engine_refusals_are_answered_with_their_own_codes() {
        let card = Card::Joker;
        let refusals = [
            TableError::Full,
            TableError::AlreadySeated,
            TableError::NotSeated,
            TableError::NotCreator,
            TableError::NotEnoughPlayers { have: 1, need: 2 },
            TableError::NotWaiting,
            TableError::NoPersonSeated,
            TableError::AbortTooLate,
            TableError::AlreadyResigned,
            TableError::NotAway,
            TableError::SeatAway,
            TableError::Aborted,
            TableError::InvalidClock("x".into()),
            TableError::NoAutomaticMove,
            TableError::InvitationNeeded,
            TableError::SeatReserved,
            TableError::StartsByItself,
            TableError::GameNotOver,
            TableError::RematchOpen,
            TableError::Closed,
            TableError::Rules(RulesError::Invalid("x".into())),
            TableError::Rule(RuleError::NotStarted),
            TableError::Rule(RuleError::AlreadyStarted),
            TableError::Rule(RuleError::GameOver),
            TableError::Rule(RuleError::NoSuchSeat(9)),
            TableError::Rule(RuleError::NotYourTurn {
                seat: 1,
                current: 0,
            }),
            TableError::Rule(RuleError::NotInHand(card)),
            TableError::Rule(RuleError::Illegal { card, reason: "x" }),
            TableError::Rule(RuleError::BadChoice { card, reason: "x" }),
            TableError::Rule(RuleError::BadAnnounce("x")),
            TableError::Rule(RuleError::CannotDraw("x")),
            TableError::Rule(RuleError::CannotPass("x")),
            TableError::Rule(RuleError::CannotChallenge {
                seat: 1,
                reason: "x",
            }),
            TableError::Rule(RuleError::BadDeck("x")),
        ];
        for err in refusals {
            let engine = err.code();
            let answered = ApiError::from(err);
            assert_eq!(answered.code().as_str(), engine);
            assert!(answered.status_code().is_client_error(), "{engine}");
        }
    }
}
