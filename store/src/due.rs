//! `game_tables.due_at`: when the server must next act on a table by
//! itself (set by the statement that appends the events that make it so,
//! [`super::events::insert_batch`]), and the tables due now; fired by
//! `api::deadlines`.

use chrono::{DateTime, Utc};
use sqlx::PgExecutor;
use uuid::Uuid;

/// A table the server must act on by itself (`due_at` passed), at the
/// version that made it due.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueTable {
    pub id: Uuid,
    pub version: i64,
    pub due_at: DateTime<Utc>,
}

/// Tables the server must act on by itself (a deadline, a seat it plays):
/// how many in all, and how many of them are due now.
#[tracing::instrument(skip(executor))]
pub async fn count_due(executor: impl PgExecutor<'_>) -> Result<(i64, i64), sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT count(*) AS "pending!", count(*) FILTER (WHERE due_at <= now()) AS "due!"
           FROM game_tables WHERE due_at IS NOT NULL"#
    )
    .fetch_one(executor)
    .await?;
    Ok((row.pending, row.due))
}

/// At most `limit` tables whose `due_at` has passed, the most overdue
/// first, but those of `underway` (fired already by this process).
#[tracing::instrument(skip(executor, underway))]
pub async fn due(
    executor: impl PgExecutor<'_>,
    limit: i64,
    underway: &[Uuid],
) -> Result<Vec<DueTable>, sqlx::Error> {
    sqlx::query_as!(
        DueTable,
        r#"SELECT id, version, due_at AS "due_at!"
           FROM game_tables
           WHERE due_at <= now() AND id <> ALL($2)
           ORDER BY due_at
           LIMIT $1"#,
        limit,
        underway,
    )
    .fetch_all(executor)
    .await
}

/// The next moment the server has something to do on a table by itself
/// after now: the earliest `due_at` or turn's alarm (`turn_ending_at`) yet
/// to come, if any (two reads of their indexes' first entries).
#[tracing::instrument(skip(executor))]
pub async fn next_due(executor: impl PgExecutor<'_>) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT LEAST((SELECT min(due_at) FROM game_tables WHERE due_at > now()),
                        (SELECT min(turn_ending_at) FROM game_tables
                         WHERE turn_ending_at > now()))"#
    )
    .fetch_one(executor)
    .await
}

/// Clears a table's `due_at` while the table is still at `version` (a
/// firing that had nothing to do).
#[tracing::instrument(skip(executor))]
pub async fn clear_due(
    executor: impl PgExecutor<'_>,
    id: Uuid,
    version: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE game_tables SET due_at = NULL WHERE id = $1 AND version = $2",
        id,
        version,
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// Puts off a table's `due_at` by `secs` while the table is still at
/// `version` (a firing refused for now: quick play's bots over a player's
/// bot caps).
#[tracing::instrument(skip(executor))]
pub async fn postpone(
    executor: impl PgExecutor<'_>,
    id: Uuid,
    version: i64,
    secs: f64,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE game_tables SET due_at = now() + make_interval(secs => $3)
         WHERE id = $1 AND version = $2",
        id,
        version,
        secs,
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// A table's `due_at`.
#[tracing::instrument(skip(executor))]
pub async fn due_at(
    executor: impl PgExecutor<'_>,
    id: Uuid,
) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    Ok(
        sqlx::query_scalar!("SELECT due_at FROM game_tables WHERE id = $1", id)
            .fetch_optional(executor)
            .await?
            .flatten(),
    )
}
