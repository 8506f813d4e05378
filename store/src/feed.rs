//! `feed_items`: every account's feed (docs/API.md "Finding a game and
//! coming back"), written by the statement that appends the events that
//! cause its items ([`super::events::insert_batch`]) or that fires a turn's
//! alarm ([`ring_turn_endings`]); read by `GET /v1/me/feed`, pruned by age.
//! The same rows are the webhooks' outbox ([`super::outbox`]).

use chrono::{DateTime, Utc};
use sqlx::PgExecutor;
use uuid::Uuid;

/// The one way feed items are written: the middle of a statement's `WITH`,
/// between `$head` (which ends with the CTEs `noted`, the items: columns
/// `account_id, kind, table_id, at, deadline, my_turn` and `ord`, their
/// order; and `outbox`, one row: `webhooks`, whether items are written
/// `pending` for the webhooks, and `platforms`, the push platforms) and
/// `$tail` (the statement's final `SELECT`), as a `query_scalar!`.
///
/// Each account's feed lock is taken first (a transaction-level advisory
/// lock, class 8, key `hashtext(account id)`), the keys in order so that two
/// writers never deadlock; then the items are inserted in
/// `ord`er, their ids drawn under the locks (the locks are the insert's
/// one-time filter, run before its first row), so that an account's ids
/// are in commit order: a reader who has seen item n never later finds an
/// item below n committed. An advisory lock rather than a row's: it writes
/// nothing, and the bot caps' count, which locks the account's row in a
/// transaction that may then append, cannot wait for it in turn. Then each
/// item's pushes, to the devices of its account on `platforms`, in the
/// items' order under the same locks, but for an item whose player follows
/// its table or their feed now (`watching`); no platforms, and that part is
/// not run at all (a one-time filter).
///
/// In the statement rather than in a function it calls: a PL/pgSQL call
/// cost about 55 µs a statement beyond its own statements (BENCHMARKS.md,
/// thirty-second and thirty-third passes).
macro_rules! query_writing_feed {
    ($head:tt, $tail:tt, $($arg:expr),* $(,)?) => {
        sqlx::query_scalar!(
            $head
                + r#"
               locked AS MATERIALIZED (
                   SELECT count(pg_advisory_xact_lock(8, k.key)) AS n
                   FROM (SELECT DISTINCT hashtext(account_id::text) AS key
                         FROM noted ORDER BY 1) k
               ), items AS (
                   INSERT INTO feed_items (account_id, kind, table_id, at, deadline, my_turn,
                                           delivery, next_attempt_at)
                   SELECT n.account_id, n.kind, n.table_id, n.at, n.deadline, n.my_turn,
                          CASE WHEN o.webhooks THEN 'pending' END,
                          CASE WHEN o.webhooks THEN n.at END
                   FROM noted n CROSS JOIN outbox o
                   WHERE (SELECT l.n FROM locked l) >= 0
                   ORDER BY n.ord
                   RETURNING id, account_id, table_id, at
               ), pushed AS (
                   INSERT INTO pushes (device_id, feed_item_id, next_attempt_at)
                   SELECT d.id, i.id, i.at
                   FROM items i JOIN devices d ON d.account_id = i.account_id
                   WHERE (SELECT cardinality(o.platforms) FROM outbox o) > 0
                     AND d.platform = ANY ((SELECT o.platforms FROM outbox o)::text[])
                     AND NOT EXISTS (SELECT FROM following(i.account_id, i.table_id))
                   ORDER BY i.id, d.id
                   -- A device its platform called dead may be dropped
                   -- meanwhile: it is skipped (not a failed foreign key,
                   -- which would fail the move).
                   FOR KEY SHARE OF d
               )
               "#
                + $tail,
            $($arg),*
        )
    };
}
pub(crate) use query_writing_feed;

/// Where feed items go beyond the feed: to the webhooks' outbox (a
/// webhook URL is set: written `pending`, for `api::webhooks` to deliver)
/// and to the pushes of their accounts' devices on the platforms this
/// server pushes to (for `api::push`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outbox {
    pub webhooks: bool,
    pub apns: bool,
    pub fcm: bool,
}

impl Outbox {
    /// The feed alone.
    pub const OFF: Self = Self {
        webhooks: false,
        apns: false,
        fcm: false,
    };

    /// The platforms pushed to, as `devices.platform` names them.
    pub fn platforms(self) -> Vec<&'static str> {
        [("apns", self.apns), ("fcm", self.fcm)]
            .into_iter()
            .filter_map(|(platform, on)| on.then_some(platform))
            .collect()
    }
}

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
    query_writing_feed!(
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
               SELECT r.turn_account AS account_id, 'turn_ending' AS kind,
                      r.id AS table_id, now() AS at, r.due_at AS deadline,
                      b.n AS my_turn, r.id AS ord
               FROM rung r JOIN badges b ON b.account_id = r.turn_account
           ), outbox AS (
               SELECT $2::bool AS webhooks, $3::text[] AS platforms
           ),"#,
        r#"SELECT account_id AS "account_id!" FROM noted"#,
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
