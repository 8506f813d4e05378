//! The webhooks' outbox: the `feed_items` rows written `pending` (see
//! [`super::feed`]), claimed by [`crate::webhooks`] in any process with
//! `FOR UPDATE SKIP LOCKED` and held, in the claiming transaction, until
//! their delivery's outcome is written: a process that dies mid-delivery
//! leaves them pending, for another to send again.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgExecutor};

use super::feed::Item;

/// A delivery as admins see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub item: Item,
    pub status: String,
    pub attempts: i32,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub delivered_at: Option<DateTime<Utc>>,
}

/// A delivery's row, flat.
struct DeliveryRow {
    id: i64,
    account_id: uuid::Uuid,
    kind: String,
    table_id: uuid::Uuid,
    at: DateTime<Utc>,
    deadline: Option<DateTime<Utc>>,
    my_turn: i32,
    status: String,
    attempts: i32,
    next_attempt_at: Option<DateTime<Utc>>,
    last_error: Option<String>,
    delivered_at: Option<DateTime<Utc>>,
}

impl From<DeliveryRow> for Delivery {
    fn from(r: DeliveryRow) -> Self {
        Self {
            item: Item {
                id: r.id,
                account_id: r.account_id,
                kind: r.kind,
                table_id: r.table_id,
                at: r.at,
                deadline: r.deadline,
                my_turn: r.my_turn,
            },
            status: r.status,
            attempts: r.attempts,
            next_attempt_at: r.next_attempt_at,
            last_error: r.last_error,
            delivered_at: r.delivered_at,
        }
    }
}

/// Claims, in `tx`, at most `limit` items due for delivery, each the
/// oldest pending item of its account (in order per account: a later item
/// waits while an earlier one is pending, retrying or being sent by
/// another process), skipping those another transaction holds.
#[tracing::instrument(skip(tx))]
pub async fn claim(tx: &mut PgConnection, limit: i64) -> Result<Vec<Delivery>, sqlx::Error> {
    let rows = sqlx::query_as!(
        DeliveryRow,
        r#"SELECT f.id, f.account_id, f.kind, f.table_id, f.at, f.deadline, f.my_turn,
                  f.delivery AS "status!", f.attempts, f.next_attempt_at, f.last_error,
                  f.delivered_at
           FROM feed_items f
           WHERE f.delivery = 'pending' AND f.next_attempt_at <= now()
             AND NOT EXISTS (SELECT 1 FROM feed_items o
                             WHERE o.delivery = 'pending' AND o.account_id = f.account_id
                               AND o.id < f.id)
           ORDER BY f.id LIMIT $1
           FOR UPDATE SKIP LOCKED"#,
        limit,
    )
    .fetch_all(&mut *tx)
    .await?;
    Ok(rows.into_iter().map(Delivery::from).collect())
}

/// What came of one attempt, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Delivered,
    /// Tried again at `next` (or now, when the URL is paused).
    Retry {
        next: DateTime<Utc>,
        error: String,
    },
    Failed {
        error: String,
    },
}

/// Writes the outcome of an attempt at item `id`.
#[tracing::instrument(skip(executor))]
pub async fn settle(
    executor: impl PgExecutor<'_>,
    id: i64,
    outcome: &Outcome,
) -> Result<(), sqlx::Error> {
    let (status, next, error) = match outcome {
        Outcome::Delivered => ("delivered", None, None),
        Outcome::Retry { next, error } => ("pending", Some(*next), Some(error.as_str())),
        Outcome::Failed { error } => ("failed", None, Some(error.as_str())),
    };
    sqlx::query!(
        r#"UPDATE feed_items
           SET delivery = $2, attempts = attempts + 1, next_attempt_at = $3,
               last_error = COALESCE($4, last_error),
               delivered_at = CASE WHEN $2 = 'delivered' THEN now() END
           WHERE id = $1"#,
        id,
        status,
        next,
        error,
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// Deliveries with `status` (all when `None`), newest first after the
/// cursor (an item id), at most `limit`.
#[tracing::instrument(skip(executor))]
pub async fn list(
    executor: impl PgExecutor<'_>,
    status: Option<&str>,
    before: Option<i64>,
    limit: i64,
) -> Result<Vec<Delivery>, sqlx::Error> {
    let rows = sqlx::query_as!(
        DeliveryRow,
        r#"SELECT id, account_id, kind, table_id, at, deadline, my_turn,
                  delivery AS "status!", attempts, next_attempt_at, last_error, delivered_at
           FROM feed_items
           WHERE delivery IS NOT NULL AND ($1::text IS NULL OR delivery = $1)
             AND ($2::bigint IS NULL OR id < $2)
           ORDER BY id DESC LIMIT $3"#,
        status,
        before,
        limit,
    )
    .fetch_all(executor)
    .await?;
    Ok(rows.into_iter().map(Delivery::from).collect())
}

/// The delivery of item `id`, if it has one.
#[tracing::instrument(skip(executor))]
pub async fn get(executor: impl PgExecutor<'_>, id: i64) -> Result<Option<Delivery>, sqlx::Error> {
    let row = sqlx::query_as!(
        DeliveryRow,
        r#"SELECT id, account_id, kind, table_id, at, deadline, my_turn,
                  delivery AS "status!", attempts, next_attempt_at, last_error, delivered_at
           FROM feed_items WHERE id = $1 AND delivery IS NOT NULL"#,
        id,
    )
    .fetch_optional(executor)
    .await?;
    Ok(row.map(Delivery::from))
}

/// Sends item `id` again, now (its attempts start over): `None` when there
/// is no such delivery, `Some(false)` when it is pending (being sent, or
/// to be) already.
#[tracing::instrument(skip(executor))]
pub async fn retry(executor: impl PgExecutor<'_>, id: i64) -> Result<Option<bool>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"WITH moved AS (UPDATE feed_items
                          SET delivery = 'pending', attempts = 0, next_attempt_at = now(),
                              delivered_at = NULL
                          WHERE id = $1 AND delivery IN ('delivered', 'failed')
                          RETURNING id)
           SELECT EXISTS (SELECT 1 FROM moved) AS "retried!"
           FROM feed_items WHERE id = $1 AND delivery IS NOT NULL"#,
        id,
    )
    .fetch_optional(executor)
    .await
}

/// The age of the oldest item still to be delivered, and how many there
/// are.
#[tracing::instrument(skip(executor))]
pub async fn backlog(executor: impl PgExecutor<'_>) -> Result<(i64, f64), sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT count(*) AS "pending!",
                  COALESCE(EXTRACT(EPOCH FROM now() - min(at))::float8, 0) AS "oldest!"
           FROM feed_items WHERE delivery = 'pending'"#
    )
    .fetch_one(executor)
    .await?;
    Ok((row.pending, row.oldest))
}

/// When deliveries to `url` were paused (it answered 410 Gone), if they are.
#[tracing::instrument(skip(executor))]
pub async fn paused_at(
    executor: impl PgExecutor<'_>,
    url: &str,
) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    Ok(sqlx::query_scalar!(
        "SELECT paused_at FROM webhook_endpoints WHERE url = $1",
        url
    )
    .fetch_optional(executor)
    .await?
    .flatten())
}

/// Pauses deliveries to `url` (`true`) or resumes them.
#[tracing::instrument(skip(executor))]
pub async fn set_paused(
    executor: impl PgExecutor<'_>,
    url: &str,
    paused: bool,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        r#"INSERT INTO webhook_endpoints (url, paused_at)
           VALUES ($1, CASE WHEN $2 THEN now() END)
           ON CONFLICT (url) DO UPDATE
           SET paused_at = CASE WHEN $2 THEN COALESCE(webhook_endpoints.paused_at, now()) END"#,
        url,
        paused,
    )
    .execute(executor)
    .await?;
    Ok(())
}
