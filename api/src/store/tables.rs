//! `game_tables`: one projection row per table. The events are the truth;
//! `version` is the seq of the last event and is moved by
//! [`super::events::append`] only.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgExecutor;
use uuid::Uuid;

#[derive(Debug, Clone)]
pub struct TableRow {
    pub id: Uuid,
    pub ruleset: String,
    pub status: String,
    pub version: i64,
    pub created_by: Uuid,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub snapshot: Option<Value>,
}

/// Creates the projection row of a new table (status `waiting`, version 0).
/// Append its first event (`table_created`) in the same transaction.
#[tracing::instrument(skip(executor))]
pub async fn insert(
    executor: impl PgExecutor<'_>,
    id: Uuid,
    ruleset: &str,
    created_by: Uuid,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO game_tables (id, ruleset, created_by) VALUES ($1, $2, $3)",
        id,
        ruleset,
        created_by,
    )
    .execute(executor)
    .await?;
    Ok(())
}

#[tracing::instrument(skip(executor))]
pub async fn get(executor: impl PgExecutor<'_>, id: Uuid) -> Result<Option<TableRow>, sqlx::Error> {
    sqlx::query_as!(
        TableRow,
        r#"SELECT id, ruleset, status, version, created_by, created_at, updated_at, snapshot
           FROM game_tables WHERE id = $1"#,
        id,
    )
    .fetch_optional(executor)
    .await
}

/// Updates the status and cached snapshot of a table at a known version
/// (after an append, in the same transaction). `false` when the row is not
/// at that version.
#[tracing::instrument(skip(executor, snapshot))]
pub async fn update_projection(
    executor: impl PgExecutor<'_>,
    id: Uuid,
    version: i64,
    status: &str,
    snapshot: Option<&Value>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        r#"UPDATE game_tables SET status = $3, snapshot = $4, updated_at = now()
           WHERE id = $1 AND version = $2"#,
        id,
        version,
        status,
        snapshot,
    )
    .execute(executor)
    .await?;
    Ok(done.rows_affected() == 1)
}
