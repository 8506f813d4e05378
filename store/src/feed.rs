//! `feed_items`: every account's feed (docs/API.md "Finding a game and
//! coming back"), written by the statement that appends the events that
//! cause its items ([`super::events::insert_batch`]) or that fires a turn's
//! alarm ([`ring_turn_endings`]); read by `GET /v1/me/feed`, pruned by age.
//! The same rows are the webhooks' outbox ([`super::outbox`]).

use chrono::{DateTime, Utc};
use sqlx::PgExecutor;
use uuid::Uuid;

use super::events::Outbox;

/// A feed item as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub id: i64,
    pub account_id: Uuid,
    pub kind: String,
    pub table_id: Uuid,
    pub at: DateTime<Utc>,
    pub deadline: Option<DateTime<Utc>>,
    pub my_turn: i32,
}

/// `account_id`'s items after item `after`, oldest first, at most `limit`.
#[tracing::instrument(skip(executor))]
pub async fn after(
    executor: impl PgExecutor<'_>,
    account_id: Uuid,
    after: i64,
    limit: i64,
) -> Result<Vec<Item>, sqlx::Error> {
    sqlx::query_as!(
        Item,
        r#"SELECT id, account_id, kind, table_id, at, deadline, my_turn
           FROM feed_items WHERE account_id = $1 AND id > $2
           ORDER BY id LIMIT $3"#,
        account_id,
        after,
        limit,
    )
    .fetch_all(executor)
    .await
}

/// Rings the alarms of at most `limit` turns whose `turn_ending_at` has
/// passed, in one statement: each table's alarm is cleared (so it rings
/// once, whichever process gets there first: the others skip the rows it
/// holds) and its player on turn, if a person, gets a `turn_ending` item
/// with the turn's deadline, written to the outboxes `outbox` names.
/// Answers the accounts told.
#[tracing::instrument(skip(executor))]
pub async fn ring_turn_endings(
    executor: impl PgExecutor<'_>,
    limit: i64,
    outbox: Outbox,
) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"WITH rung AS (
               UPDATE game_tables g SET turn_ending_at = NULL
               WHERE g.id IN (SELECT id FROM game_tables
                              WHERE turn_ending_at <= now()
                              ORDER BY turn_ending_at LIMIT $1
                              FOR UPDATE SKIP LOCKED)
                 AND g.turn_ending_at <= now()
               RETURNING g.id, g.turn_account, g.due_at
           ), badges AS (
               SELECT a.account_id, w.n
               FROM (SELECT DISTINCT turn_account AS account_id FROM rung
                     WHERE turn_account IS NOT NULL) a
                    CROSS JOIN LATERAL tables_waiting_for(a.account_id, '{}') w
           ), noted AS (
               SELECT r.id AS table_id, r.turn_account AS account_id, r.due_at,
                      b.n AS my_turn
               FROM rung r JOIN badges b ON b.account_id = r.turn_account
           ), fed AS (
               SELECT feed_write(array_agg(account_id ORDER BY table_id),
                                 array_agg('turn_ending'::text ORDER BY table_id),
                                 array_agg(table_id ORDER BY table_id),
                                 array_agg(now() ORDER BY table_id),
                                 array_agg(due_at ORDER BY table_id),
                                 array_agg(my_turn ORDER BY table_id), $2, $3)
               FROM noted
           )
           SELECT account_id AS "account_id!" FROM noted CROSS JOIN fed"#,
        limit,
        outbox.webhooks,
        &outbox.platforms() as &[&str],
    )
    .fetch_all(executor)
    .await
}

/// Deletes at most `limit` items older than `before`, but those whose
/// webhook or a push is still to be delivered: how many were deleted.
#[tracing::instrument(skip(executor))]
pub async fn prune(
    executor: impl PgExecutor<'_>,
    before: DateTime<Utc>,
    limit: i64,
) -> Result<u64, sqlx::Error> {
    let done = sqlx::query!(
        r#"DELETE FROM feed_items
           WHERE id IN (SELECT id FROM feed_items
                        WHERE at < $1 AND delivery IS DISTINCT FROM 'pending'
                          AND NOT EXISTS (SELECT 1 FROM pushes p
                                          WHERE p.feed_item_id = feed_items.id
                                            AND p.status = 'pending')
                        LIMIT $2)"#,
        before,
        limit,
    )
    .execute(executor)
    .await?;
    Ok(done.rows_affected())
}
