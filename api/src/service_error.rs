//! What a service answers when it does not do what it was asked, in its own
//! words: the rules refused, the table moved on, nothing of that name, not
//! for this caller, not now, too much at once, the store away. The HTTP
//! layer maps each to a status and a problem document once
//! (`crate::error`); whoever decides on an outcome (the deadlines, quick
//! play's retries) matches these, never an HTTP status.

use std::error::Error as StdError;
use std::time::Duration;

use domain::TableError;
use store::StoreError;

use crate::codes::ProblemCode;
use crate::ratings::RatingError;

/// Why a service did not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The engine refused the command: its own reason.
    #[error(transparent)]
    Rules(#[from] TableError),
    /// The table is not at the version the change was based on (another
    /// writer came first, or the caller's copy is stale): nothing changed.
    #[error("the table has changed since version {expected}; reload and retry")]
    VersionConflict { expected: i64 },
    /// Nothing of that name, or nothing the caller may see.
    #[error("{0}")]
    NotFound(String),
    /// The caller may not do this here (`not_a_player`).
    #[error("{detail}")]
    Forbidden { code: ProblemCode, detail: String },
    /// Not in the state it is in (`round_running`, `already_resolved`,
    /// `not_private`, `table_closed`…).
    #[error("{detail}")]
    Conflict { code: ProblemCode, detail: String },
    /// What was asked for cannot be (`invalid_dispute`,
    /// `step_out_of_range`).
    #[error("{detail}")]
    Invalid { code: ProblemCode, detail: String },
    /// Too much at once (`too_many_requests`, `too_many_bots`): again once
    /// `retry_after` has passed.
    #[error("{detail}")]
    Limited {
        code: ProblemCode,
        detail: String,
        retry_after: Duration,
    },
    /// An `Idempotency-Key` already used with another request.
    #[error("this Idempotency-Key was already used with a different request")]
    IdempotencyKeyReused,
    /// What the store said (its refusals, or the database away).
    #[error(transparent)]
    Store(StoreError),
    /// A rating that cannot be kept fails the write it was part of.
    #[error(transparent)]
    Rating(#[from] RatingError),
    /// A bug or unreadable data: logged, never told.
    #[error("internal error")]
    Internal(#[source] Box<dyn StdError + Send + Sync>),
}

impl ServiceError {
    pub fn internal(err: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        Self::Internal(err.into())
    }

    /// `too_many_requests`: `detail`, again after `wait`.
    pub fn too_many_requests(detail: impl Into<String>, wait: Duration) -> Self {
        Self::Limited {
            code: ProblemCode::TooManyRequests,
            detail: detail.into(),
            retry_after: wait,
        }
    }
}

/// The store's conflict and missing table are the service's own; its other
/// answers are passed on.
impl From<StoreError> for ServiceError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Conflict { expected } => Self::VersionConflict { expected },
            StoreError::NoTable => Self::NotFound("no such table".into()),
            other => Self::Store(other),
        }
    }
}

impl From<sqlx::Error> for ServiceError {
    fn from(err: sqlx::Error) -> Self {
        Self::Store(StoreError::Db(err))
    }
}
