//! The pushes' outbox: a row per feed item per device of its account,
//! written `pending` with the item (`crate::feed::query_writing_feed`), claimed
//! by `api::push` in any process with `FOR UPDATE SKIP LOCKED` and held,
//! in the claiming transaction, until the outcome is written, as the
//! webhooks' ([`super::outbox`]): a process that dies mid-delivery leaves
//! them pending, for another to send again.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

use super::feed::Item;

/// A push claimed for sending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Push {
    pub id: i64,
    pub device_id: Uuid,
    pub platform: String,
    pub token: String,
    pub attempts: i32,
    pub item: Item,
    /// The player follows the item's table, or their feed, now (or did
    /// within the last seconds): not to be sent.
    pub watched: bool,
}

/// A push as admins see it (not its device's token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub id: i64,
    pub device_id: Uuid,
    pub platform: String,
    pub item: Item,
    pub status: String,
    pub attempts: i32,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub delivered_at: Option<DateTime<Utc>>,
}

/// A claimed push's row, flat.
struct PushRow {
    id: i64,
    device_id: Uuid,
    platform: String,
    token: String,
    attempts: i32,
    item_id: i64,
    account_id: Uuid,
    kind: String,
    table_id: Uuid,
    at: DateTime<Utc>,
    deadline: Option<DateTime<Utc>>,
    my_turn: i32,
    watched: bool,
}

/// The feed item of a row's columns (`item_id`, `account_id`, `kind`,
/// `table_id`, `at`, `deadline`, `my_turn`).
macro_rules! item_of {
    ($r:expr) => {
        Item {
            id: $r.item_id,
            account_id: $r.account_id,
            kind: $r.kind,
            table_id: $r.table_id,
            at: $r.at,
            deadline: $r.deadline,
            my_turn: $r.my_turn,
        }
    };
}

impl From<PushRow> for Push {
    fn from(r: PushRow) -> Self {
        Self {
            id: r.id,
            device_id: r.device_id,
            platform: r.platform,
            token: r.token,
            attempts: r.attempts,
            watched: r.watched,
            item: item_of!(r),
        }
    }
}

/// Claims, in `tx`, the pushes due of at most `devices` devices: the first
/// `per_device` pending pushes of each, in order, for one sender to send one
/// after the other. A device's pushes are claimed through its oldest
/// pending one (locked, `SKIP LOCKED`: another process sends them, or it
/// waits for its retry, and the device is left alone), so one sender at a
/// time sends a device's pushes, in order; the heads are found by skipping
/// through the pending pushes' index, one probe per device that has any.
/// Each says whether its player is following its table or their feed
/// (`watching`, kept by every process). Ordered by device, then id.
#[tracing::instrument(skip(tx))]
pub async fn claim(
    tx: &mut PgConnection,
    devices: i64,
    per_device: i64,
) -> Result<Vec<Push>, sqlx::Error> {
    let rows = sqlx::query_as!(
        PushRow,
        r#"WITH RECURSIVE heads AS (
               (SELECT device_id, id FROM pushes
                WHERE status = 'pending' ORDER BY device_id, id LIMIT 1)
               UNION ALL
               SELECT next.device_id, next.id
               FROM heads h CROSS JOIN LATERAL (
                   SELECT device_id, id FROM pushes
                   WHERE status = 'pending' AND device_id > h.device_id
                   ORDER BY device_id, id LIMIT 1) next
           ), due AS (
               SELECT p.id, p.device_id FROM pushes p
               WHERE p.id IN (SELECT id FROM heads)
                 AND p.status = 'pending' AND p.next_attempt_at <= now()
               ORDER BY p.id LIMIT $1
               FOR UPDATE SKIP LOCKED
           )
           SELECT p.id AS "id!", p.device_id AS "device_id!", dv.platform, dv.token,
                  p.attempts AS "attempts!", f.id AS item_id, f.account_id, f.kind,
                  f.table_id, f.at, f.deadline, f.my_turn,
                  EXISTS (SELECT FROM following(f.account_id, f.table_id)) AS "watched!"
           FROM due d CROSS JOIN LATERAL (
               SELECT * FROM pushes q
               WHERE q.device_id = d.device_id AND q.status = 'pending' AND q.id >= d.id
               ORDER BY q.id LIMIT $2) p
           JOIN devices dv ON dv.id = p.device_id
           JOIN feed_items f ON f.id = p.feed_item_id
           ORDER BY p.device_id, p.id"#,
        devices,
        per_device,
    )
    .fetch_all(&mut *tx)
    .await?;
    Ok(rows.into_iter().map(Push::from).collect())
}

/// What came of one attempt at a push, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Delivered,
    /// Not sent: the player was following the table.
    Skipped,
    /// Tried again at `next`.
    Retry {
        next: DateTime<Utc>,
        error: String,
    },
    Failed {
        error: String,
    },
}

/// Writes the outcome of one attempt at each push of `settled`, in one
/// statement (a skipped push counts no attempt).
#[tracing::instrument(skip_all, fields(pushes = settled.len()))]
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
            Outcome::Skipped => ("skipped", None, None),
            Outcome::Retry { next, error } => ("pending", Some(*next), Some(error.as_str())),
            Outcome::Failed { error } => ("failed", None, Some(error.as_str())),
        };
        ids.push(*id);
        statuses.push(status);
        nexts.push(next);
        errors.push(error);
    }
    sqlx::query!(
        r#"UPDATE pushes p
           SET status = s.status,
               attempts = p.attempts + CASE WHEN s.status = 'skipped' THEN 0 ELSE 1 END,
               next_attempt_at = s.next,
               last_error = COALESCE(s.error, p.last_error),
               delivered_at = CASE WHEN s.status = 'delivered' THEN now() END
           FROM UNNEST($1::bigint[], $2::text[], $3::timestamptz[], $4::text[])
                AS s(id, status, next, error)
           WHERE p.id = s.id"#,
        &ids,
        &statuses as &[&str],
        &nexts as &[Option<DateTime<Utc>>],
        &errors as &[Option<&str>],
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// An admin's row, flat.
struct DeliveryRow {
    id: i64,
    device_id: Uuid,
    platform: String,
    item_id: i64,
    account_id: Uuid,
    kind: String,
    table_id: Uuid,
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
            id: r.id,
            device_id: r.device_id,
            platform: r.platform,
            status: r.status,
            attempts: r.attempts,
            next_attempt_at: r.next_attempt_at,
            last_error: r.last_error,
            delivered_at: r.delivered_at,
            item: item_of!(r),
        }
    }
}

/// Pushes with `status` (all when `None`), newest first after the cursor
/// (a push id), at most `limit`.
#[tracing::instrument(skip(executor))]
pub async fn list(
    executor: impl PgExecutor<'_>,
    status: Option<&str>,
    before: Option<i64>,
    limit: i64,
) -> Result<Vec<Delivery>, sqlx::Error> {
    let rows = sqlx::query_as!(
        DeliveryRow,
        r#"SELECT p.id, p.device_id, d.platform, f.id AS item_id, f.account_id, f.kind,
                  f.table_id, f.at, f.deadline, f.my_turn, p.status, p.attempts,
                  p.next_attempt_at, p.last_error, p.delivered_at
           FROM pushes p
           JOIN devices d ON d.id = p.device_id
           JOIN feed_items f ON f.id = p.feed_item_id
           WHERE ($1::text IS NULL OR p.status = $1) AND ($2::bigint IS NULL OR p.id < $2)
           ORDER BY p.id DESC LIMIT $3"#,
        status,
        before,
        limit,
    )
    .fetch_all(executor)
    .await?;
    Ok(rows.into_iter().map(Delivery::from).collect())
}

/// Push `id`, if there is one.
#[tracing::instrument(skip(executor))]
pub async fn get(executor: impl PgExecutor<'_>, id: i64) -> Result<Option<Delivery>, sqlx::Error> {
    let row = sqlx::query_as!(
        DeliveryRow,
        r#"SELECT p.id, p.device_id, d.platform, f.id AS item_id, f.account_id, f.kind,
                  f.table_id, f.at, f.deadline, f.my_turn, p.status, p.attempts,
                  p.next_attempt_at, p.last_error, p.delivered_at
           FROM pushes p
           JOIN devices d ON d.id = p.device_id
           JOIN feed_items f ON f.id = p.feed_item_id
           WHERE p.id = $1"#,
        id,
    )
    .fetch_optional(executor)
    .await?;
    Ok(row.map(Delivery::from))
}

/// Sends push `id` again, now (its attempts start over): `None` when there
/// is no such push, `Some(false)` when it is pending (being sent, or to be)
/// already.
#[tracing::instrument(skip(executor))]
pub async fn retry(executor: impl PgExecutor<'_>, id: i64) -> Result<Option<bool>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"WITH moved AS (UPDATE pushes
                          SET status = 'pending', attempts = 0, next_attempt_at = now(),
                              delivered_at = NULL
                          WHERE id = $1 AND status <> 'pending'
                          RETURNING id)
           SELECT EXISTS (SELECT 1 FROM moved) AS "retried!"
           FROM pushes WHERE id = $1"#,
        id,
    )
    .fetch_optional(executor)
    .await
}

/// Fails at most `limit` pushes still to send whose item is older than
/// `before` (past the feed's retention), so that the outbox stays bounded:
/// how many.
#[tracing::instrument(skip(executor))]
pub async fn expire(
    executor: impl PgExecutor<'_>,
    before: DateTime<Utc>,
    limit: i64,
) -> Result<u64, sqlx::Error> {
    let done = sqlx::query!(
        r#"UPDATE pushes
           SET status = 'failed', next_attempt_at = NULL,
               last_error = 'not sent within the retention (HUIT_FEED_RETENTION_SECS)'
           WHERE id IN (SELECT p.id FROM pushes p JOIN feed_items f ON f.id = p.feed_item_id
                        WHERE p.status = 'pending' AND f.at < $1
                        LIMIT $2 FOR UPDATE OF p SKIP LOCKED)"#,
        before,
        limit,
    )
    .execute(executor)
    .await?;
    Ok(done.rows_affected())
}

/// The age of the oldest push still to send, and how many there are.
#[tracing::instrument(skip(executor))]
pub async fn backlog(executor: impl PgExecutor<'_>) -> Result<(i64, f64), sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT count(*) AS "pending!",
                  COALESCE(EXTRACT(EPOCH FROM now() - min(f.at))::float8, 0) AS "oldest!"
           FROM pushes p JOIN feed_items f ON f.id = p.feed_item_id
           WHERE p.status = 'pending'"#
    )
    .fetch_one(executor)
    .await?;
    Ok((row.pending, row.oldest))
}

/// What a process follows (docs/API.md "Push to phones"): an account's
/// table, or its feed (stored as the nil uuid, which migration 19's
/// `following` reads as every table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Following {
    Feed,
    Table(Uuid),
}

impl Following {
    fn key(self) -> Uuid {
        match self {
            Self::Feed => Uuid::nil(),
            Self::Table(id) => id,
        }
    }
}

/// Marks each `(account, following)` of `watched` as watched until
/// `until`, for the accounts that have a device (no one else is pushed
/// to): one statement.
#[tracing::instrument(skip_all, fields(watched = watched.len()))]
pub async fn watch(
    executor: impl PgExecutor<'_>,
    watched: &[(Uuid, Following)],
    until: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    let accounts: Vec<Uuid> = watched.iter().map(|(a, _)| *a).collect();
    let keys: Vec<Uuid> = watched.iter().map(|(_, f)| f.key()).collect();
    sqlx::query!(
        r#"INSERT INTO watching (account_id, table_id, until)
           SELECT DISTINCT w.account_id, w.table_id, $3::timestamptz
           FROM UNNEST($1::uuid[], $2::uuid[]) AS w(account_id, table_id)
           WHERE EXISTS (SELECT 1 FROM devices d WHERE d.account_id = w.account_id)
           ORDER BY 1, 2
           ON CONFLICT (account_id, table_id)
           DO UPDATE SET until = GREATEST(watching.until, EXCLUDED.until)"#,
        &accounts,
        &keys,
        until,
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// Forgets what was watched until before `before`: how many rows.
#[tracing::instrument(skip(executor))]
pub async fn forget_watched(
    executor: impl PgExecutor<'_>,
    before: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    let done = sqlx::query!("DELETE FROM watching WHERE until < $1", before)
        .execute(executor)
        .await?;
    Ok(done.rows_affected())
}
