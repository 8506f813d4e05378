//! The webhooks' outbox: the `feed_items` rows written `pending` (see
//! [`super::feed`]), claimed by `api::webhooks` in any process with
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

/// Claims, in `tx`, the items due for delivery of at most `accounts`
/// accounts: the first `per_account` pending items of each, in order, for
/// one sender to send one after the other. An account's items are claimed
/// through its oldest pending item (locked, `SKIP LOCKED`: a sender of
/// another process holds it, or it waits for its retry, and the account is
/// left alone), so one sender at a time sends an account's items, in order.
/// The heads are found by skipping through the pending items' index, one
/// probe per account that has any (not a scan of the backlog). Ordered by
/// account, then id.
#[tracing::instrument(skip(tx))]
pub async fn claim(
    tx: &mut PgConnection,
    accounts: i64,
    per_account: i64,
) -> Result<Vec<Delivery>, sqlx::Error> {
    let rows = sqlx::query_as!(
        DeliveryRow,
        r#"WITH RECURSIVE heads AS (
               (SELECT account_id, id FROM feed_items
                WHERE delivery = 'pending' ORDER BY account_id, id LIMIT 1)
               UNION ALL
               SELECT next.account_id, next.id
               FROM heads h CROSS JOIN LATERAL (
                   SELECT account_id, id FROM feed_items
                   WHERE delivery = 'pending' AND account_id > h.account_id
                   ORDER BY account_id, id LIMIT 1) next
           ), due AS (
               SELECT f.id, f.account_id FROM feed_items f
               WHERE f.id IN (SELECT id FROM heads)
                 AND f.delivery = 'pending' AND f.next_attempt_at <= now()
               ORDER BY f.id LIMIT $1
               FOR UPDATE SKIP LOCKED
           )
           SELECT f.id AS "id!", f.account_id AS "account_id!", f.kind AS "kind!",
                  f.table_id AS "table_id!", f.at AS "at!", f.deadline,
                  f.my_turn AS "my_turn!", f.delivery AS "status!",
                  f.attempts AS "attempts!", f.next_attempt_at, f.last_error, f.delivered_at
           FROM due d CROSS JOIN LATERAL (
               SELECT * FROM feed_items p
               WHERE p.account_id = d.account_id AND p.delivery = 'pending' AND p.id >= d.id
               ORDER BY p.id LIMIT $2) f
           ORDER BY f.account_id, f.id"#,
        accounts,
        per_account,
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

/// Writes the outcome of one attempt at each item of `settled`, in one
/// statement.
#[tracing::instrument(skip_all, fields(items = settled.len()))]
pub async fn settle(
    executor: impl PgExecutor<'_>,
    settled: &[(i64, Outcome)],
) -> Result<(), sqlx::Error> {
    let mut ids = Vec::with_capacity(settled.len());
    let mut statuses = Vec::with_capacity(settled.len());
    let mut nexts = Vec::with_capacity(settled.len());
    let mut errors = Vec::with_capacity(settled.len());
    for (id, outcome) in settled {
        let (status, next, error) = match outcome {
            Outcome::Delivered => ("delivered", None, None),
            Outcome::Retry { next, error } => ("pending", Some(*next), Some(error.as_str())),
            Outcome::Failed { error } => ("failed", None, Some(error.as_str())),
        };
        ids.push(*id);
        statuses.push(status);
        nexts.push(next);
        errors.push(error);
    }
    sqlx::query!(
        r#"UPDATE feed_items f
           SET delivery = s.status, attempts = f.attempts + 1, next_attempt_at = s.next,
               last_error = COALESCE(s.error, f.last_error),
               delivered_at = CASE WHEN s.status = 'delivered' THEN now() END
           FROM UNNEST($1::bigint[], $2::text[], $3::timestamptz[], $4::text[])
                AS s(id, status, next, error)
           WHERE f.id = s.id"#,
        &ids,
        &statuses as &[&str],
        &nexts as &[Option<DateTime<Utc>>],
        &errors as &[Option<&str>],
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

/// Fails at most `limit` items still to be delivered that are older than
/// `before` (past the feed's retention: while deliveries are paused, or
/// retried that long), so that the outbox stays bounded: how many.
#[tracing::instrument(skip(executor))]
pub async fn expire(
    executor: impl PgExecutor<'_>,
    before: DateTime<Utc>,
    limit: i64,
) -> Result<u64, sqlx::Error> {
    let done = sqlx::query!(
        r#"UPDATE feed_items
           SET delivery = 'failed', next_attempt_at = NULL,
               last_error = 'not delivered within the retention (HUIT_FEED_RETENTION_SECS)'
           WHERE id IN (SELECT id FROM feed_items
                        WHERE delivery = 'pending' AND at < $1
                        LIMIT $2 FOR UPDATE SKIP LOCKED)"#,
        before,
        limit,
    )
    .execute(executor)
    .await?;
    Ok(done.rows_affected())
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
