//! An account's tables (`GET /v1/me/tables`): those it sits at, by its
//! `table_players` rows (`table_players_account_id_idx`), and of those the
//! ones waiting for it, by `game_tables.turn_account` (migration 10); never
//! a log.

use chrono::{DateTime, Utc};
use sqlx::PgExecutor;
use uuid::Uuid;

/// A page of an account's tables: ids with the key of their order.
pub type Page = Vec<(Uuid, DateTime<Utc>)>;

/// The tables waiting for `account_id` (`game_tables.turn_account`, from
/// its `table_players` rows), soonest deadline first (none: last), after
/// the cursor, at most `limit`.
#[tracing::instrument(skip(executor))]
pub async fn on_turn(
    executor: impl PgExecutor<'_>,
    account_id: Uuid,
    after: Option<(DateTime<Utc>, Uuid)>,
    limit: i64,
) -> Result<Page, sqlx::Error> {
    let (after_key, after_id) = after.unzip();
    let rows = sqlx::query!(
        r#"SELECT g.id, COALESCE(g.due_at, '9999-12-31 00:00:00+00'::timestamptz) AS "key!"
           FROM table_players p JOIN game_tables g ON g.id = p.table_id
           WHERE p.account_id = $1 AND g.turn_account = $1
             AND ($2::timestamptz IS NULL
                  OR (COALESCE(g.due_at, '9999-12-31 00:00:00+00'::timestamptz), g.id)
                     > ($2, $3::uuid))
           ORDER BY 2, 1
           LIMIT $4"#,
        account_id,
        after_key,
        after_id,
        limit,
    )
    .fetch_all(executor)
    .await?;
    Ok(rows.into_iter().map(|r| (r.id, r.key)).collect())
}

/// How many tables wait for `account_id`.
#[tracing::instrument(skip(executor))]
pub async fn on_turn_count(
    executor: impl PgExecutor<'_>,
    account_id: Uuid,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT n AS "n!" FROM tables_waiting_for($1, '{}')"#,
        account_id
    )
    .fetch_one(executor)
    .await
}

/// The tables `account_id` sits at that are not over, oldest first, after
/// the cursor, at most `limit`.
#[tracing::instrument(skip(executor))]
pub async fn not_over(
    executor: impl PgExecutor<'_>,
    account_id: Uuid,
    after: Option<(DateTime<Utc>, Uuid)>,
    limit: i64,
) -> Result<Page, sqlx::Error> {
    let (after_at, after_id) = after.unzip();
    let rows = sqlx::query!(
        r#"SELECT g.id, g.created_at
           FROM table_players p JOIN game_tables g ON g.id = p.table_id
           WHERE p.account_id = $1 AND g.status IN ('waiting', 'playing')
             AND ($2::timestamptz IS NULL OR (g.created_at, g.id) > ($2, $3::uuid))
           ORDER BY g.created_at, g.id
           LIMIT $4"#,
        account_id,
        after_at,
        after_id,
        limit,
    )
    .fetch_all(executor)
    .await?;
    Ok(rows.into_iter().map(|r| (r.id, r.created_at)).collect())
}
