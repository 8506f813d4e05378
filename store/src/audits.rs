//! `kept_audits`: the audit of a table whose game is over, computed once
//! (see `api::history::kept_audit`).

use serde_json::Value;
use sqlx::PgExecutor;
use uuid::Uuid;

/// The audit kept for a table at its current version, if any.
#[tracing::instrument(skip(executor))]
pub async fn kept(
    executor: impl PgExecutor<'_>,
    table_id: Uuid,
) -> Result<Option<Value>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT a.report AS "report!: Value"
           FROM kept_audits a JOIN game_tables g ON g.id = a.table_id
           WHERE a.table_id = $1 AND a.version = g.version"#,
        table_id,
    )
    .fetch_optional(executor)
    .await
}

/// Keeps `report`, the audit of the table at `version` (replacing an older one).
#[tracing::instrument(skip(executor, report))]
pub async fn keep(
    executor: impl PgExecutor<'_>,
    table_id: Uuid,
    version: i64,
    report: &Value,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        r#"INSERT INTO kept_audits (table_id, version, report) VALUES ($1, $2, $3)
           ON CONFLICT (table_id) DO UPDATE
           SET version = EXCLUDED.version, report = EXCLUDED.report, computed_at = now()"#,
        table_id,
        version,
        report,
    )
    .execute(executor)
    .await?;
    Ok(())
}
