//! `events`: the statements of the append-only, hash-chained log of every
//! table (what they write and read: [`crate::records`]; the server's `api::log` appends and announces through them).
//!
//! An insert moves the table's `game_tables.version` from the version it
//! expects, in the same statement as its events: at a stale version it
//! writes nothing ([`Appended::NotAtVersion`], [`StoreError::Conflict`]).
//! The primary key `(table_id, seq)` refuses any duplicate seq all the same.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

use super::{violates, StoreError};
use crate::feed::{query_writing_feed, Outbox};
use crate::{ChainedAppend, StoredEvent};

/// The hash of event `seq` of a table (the head of the chain when `seq` is
/// the table's version), `None` when there is no such event.
#[tracing::instrument(skip(executor))]
pub async fn head_hash(
    executor: impl PgExecutor<'_>,
    table_id: Uuid,
    seq: i64,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT hash FROM events WHERE table_id = $1 AND seq = $2",
        table_id,
        seq,
    )
    .fetch_optional(executor)
    .await
}

/// What [`insert_batch`] did with one table's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appended {
    Stored,
    /// The table is not at the expected version (or does not exist):
    /// nothing was written for it.
    NotAtVersion,
}

/// Appends the events of several tables (distinct) in ONE statement: for
/// each table at its expected version, `game_tables` moves (version, status,
/// `snapshot` cleared) and its events are inserted; a table at another
/// version is left alone ([`Appended::NotAtVersion`]) and does not stop the
/// others. Outside a transaction the statement is its own transaction: the
/// moves of many tables share one commit, one flush to disk. Answers in the
/// order of `batch`.
///
/// Every table of `batch` has events (callers append nothing otherwise):
/// the statement answers a row per event inserted, and a table with none
/// is one that did not move.
///
/// The `game_tables` rows are locked in table id order whatever the order
/// of `batch`, so that two batches (of two processes) that share tables
/// wait for one another rather than deadlock. Any error fails the whole
/// statement: nothing of the batch is written.
///
/// The statement is run with generic plans (see [`crate::held`]),
/// so its shape is chosen for them. `g.id = ANY($1)` gives the `UPDATE` an
/// index path whatever it estimates of `UNNEST`: without it, the generic
/// plan of a small database scanned and hashed all of `game_tables` on
/// every append. And the answer is the inserted rows themselves, counted here,
/// rather than a count per table in a subquery. Most of PostgreSQL's CPU
/// per statement is the same whatever the batch holds (`loadgen
/// append-cost`, BENCHMARKS.md), hence the batches.
#[tracing::instrument(skip_all, fields(tables = batch.len()))]
pub async fn insert_batch(
    conn: &mut PgConnection,
    batch: &[&ChainedAppend],
    outbox: Outbox,
) -> Result<Vec<Appended>, sqlx::Error> {
    debug_assert!(batch.iter().all(|c| !c.events.is_empty()));
    let mut order: Vec<&ChainedAppend> = batch.to_vec();
    order.sort_by_key(|c| c.table_id);
    let (t, rows) = (TableColumns::of(&order), EventColumns::of(&order));
    let notes = NoticeColumns::of(&order);
    let inserted = query_writing_feed!(
        r#"WITH moved AS (
               UPDATE game_tables g
               SET version = r.version, status = COALESCE(r.status, g.status),
                   snapshot = NULL, updated_at = now(),
                   due_at = CASE WHEN r.keep_due THEN g.due_at ELSE r.due_at END,
                   turn_account = r.turn,
                   turn_ending_at = CASE WHEN r.keep_ending THEN g.turn_ending_at
                                         ELSE r.ending_at END
               FROM UNNEST($1::uuid[], $2::bigint[], $3::bigint[], $4::text[],
                           $13::bool[], $14::timestamptz[], $15::uuid[],
                           $16::bool[], $17::timestamptz[])
                    AS r(id, expected, version, status, keep_due, due_at, turn,
                         keep_ending, ending_at)
               WHERE g.id = ANY($1::uuid[]) AND g.id = r.id AND g.version = r.expected
               RETURNING g.id, g.turn_account
           ), inserted AS (
               INSERT INTO events (table_id, seq, type, v, at, data, prev_hash, hash)
               SELECT e.table_id, e.seq, e.type, e.v, e.at, e.data::json, e.prev_hash, e.hash
               FROM UNNEST($5::uuid[], $6::bigint[], $7::text[], $8::int[],
                           $9::timestamptz[], $10::text[], $11::text[], $12::text[])
                    AS e(table_id, seq, type, v, at, data, prev_hash, hash)
               WHERE e.table_id IN (SELECT id FROM moved)
               RETURNING table_id
           ), badges AS (
               SELECT a.account_id, w.n
               FROM (SELECT DISTINCT account_id FROM UNNEST($19::uuid[]) AS account_id) a
                    CROSS JOIN LATERAL tables_waiting_for(a.account_id, $1::uuid[]) w
           ), noted AS (
               SELECT n.*, b.n
                             + (SELECT count(*) FROM moved m WHERE m.turn_account = n.account_id)
                             AS my_turn
               FROM UNNEST($18::uuid[], $19::uuid[], $20::text[], $21::timestamptz[],
                           $22::timestamptz[]) WITH ORDINALITY
                    AS n(table_id, account_id, kind, at, deadline, ord)
                    JOIN badges b ON b.account_id = n.account_id
               WHERE n.table_id IN (SELECT id FROM moved)
           ), outbox AS (
               SELECT $23::bool AS webhooks, $24::text[] AS platforms
           ),"#,
        r#"SELECT table_id AS "table_id!" FROM inserted"#,
        &t.ids,
        &t.expected,
        &t.versions,
        &t.statuses as &[Option<&str>],
        &rows.table_ids,
        &rows.seqs,
        &rows.kinds,
        &rows.vs,
        &rows.ats,
        &rows.datas,
        &rows.prevs,
        &rows.hashes,
        &t.keep_due,
        &t.due_ats as &[Option<DateTime<Utc>>],
        &t.turns as &[Option<Uuid>],
        &t.keep_ending,
        &t.ending_ats as &[Option<DateTime<Utc>>],
        &notes.table_ids,
        &notes.accounts,
        &notes.kinds as &[&str],
        &notes.ats,
        &notes.deadlines as &[Option<DateTime<Utc>>],
        outbox.webhooks,
        &outbox.platforms() as &[&str],
    )
    .fetch_all(&mut *conn)
    .await?;
    answers(batch, &inserted)
}

/// What became of each table of `batch`, from the table of each event
/// inserted: a row per event, and only tables that moved have any.
fn answers(batch: &[&ChainedAppend], inserted: &[Uuid]) -> Result<Vec<Appended>, sqlx::Error> {
    batch
        .iter()
        .map(
            |c| match inserted.iter().filter(|&&t| t == c.table_id).count() {
                0 => Ok(Appended::NotAtVersion),
                n if n == c.events.len() => Ok(Appended::Stored),
                n => Err(sqlx::Error::Protocol(format!(
                    "appended {n} of the {} events of table {}",
                    c.events.len(),
                    c.table_id
                ))),
            },
        )
        .collect()
}

/// The tables of a batch, column by column: what moves `game_tables`.
struct TableColumns {
    ids: Vec<Uuid>,
    expected: Vec<i64>,
    versions: Vec<i64>,
    statuses: Vec<Option<&'static str>>,
    /// Whether each table keeps its `due_at`, and its new one when not.
    keep_due: Vec<bool>,
    due_ats: Vec<Option<DateTime<Utc>>>,
    /// The account each table waits for.
    turns: Vec<Option<Uuid>>,
    /// Whether each table keeps its `turn_ending_at`, and its new one.
    keep_ending: Vec<bool>,
    ending_ats: Vec<Option<DateTime<Utc>>>,
}

impl TableColumns {
    fn of(order: &[&ChainedAppend]) -> Self {
        let due: Vec<Option<Option<DateTime<Utc>>>> = order.iter().map(|c| c.due_at()).collect();
        let ending: Vec<Option<Option<DateTime<Utc>>>> =
            order.iter().map(|c| c.turn_ending_at()).collect();
        Self {
            ids: order.iter().map(|c| c.table_id).collect(),
            expected: order.iter().map(|c| c.expected_version).collect(),
            versions: order.iter().map(|c| c.new_version()).collect(),
            statuses: order.iter().map(|c| c.status).collect(),
            keep_due: due.iter().map(Option::is_none).collect(),
            due_ats: due.into_iter().map(Option::flatten).collect(),
            turns: order.iter().map(|c| c.turn).collect(),
            keep_ending: ending.iter().map(Option::is_none).collect(),
            ending_ats: ending.into_iter().map(Option::flatten).collect(),
        }
    }
}

/// The feed items of a batch, column by column, in its tables' order.
#[derive(Default)]
struct NoticeColumns {
    table_ids: Vec<Uuid>,
    accounts: Vec<Uuid>,
    kinds: Vec<&'static str>,
    ats: Vec<DateTime<Utc>>,
    deadlines: Vec<Option<DateTime<Utc>>>,
}

impl NoticeColumns {
    fn of(order: &[&ChainedAppend]) -> Self {
        let mut notes = Self::default();
        for c in order {
            for n in &c.notices {
                notes.table_ids.push(c.table_id);
                notes.accounts.push(n.account_id);
                notes.kinds.push(n.kind.as_str());
                notes.ats.push(c.at());
                notes.deadlines.push(n.deadline);
            }
        }
        notes
    }
}

/// The events of a batch, column by column (what `UNNEST` takes).
#[derive(Default)]
struct EventColumns {
    table_ids: Vec<Uuid>,
    seqs: Vec<i64>,
    kinds: Vec<String>,
    vs: Vec<i32>,
    ats: Vec<DateTime<Utc>>,
    datas: Vec<String>,
    prevs: Vec<String>,
    hashes: Vec<String>,
}

impl EventColumns {
    /// Every event of the tables of `order`, in that order.
    fn of(order: &[&ChainedAppend]) -> Self {
        let n: usize = order.iter().map(|c| c.events.len()).sum();
        let mut rows = Self::with_capacity(n);
        for c in order {
            for e in &c.events {
                rows.push(c.table_id, e);
            }
        }
        rows
    }

    fn with_capacity(n: usize) -> Self {
        Self {
            table_ids: Vec::with_capacity(n),
            seqs: Vec::with_capacity(n),
            kinds: Vec::with_capacity(n),
            vs: Vec::with_capacity(n),
            ats: Vec::with_capacity(n),
            datas: Vec::with_capacity(n),
            prevs: Vec::with_capacity(n),
            hashes: Vec::with_capacity(n),
        }
    }

    fn push(&mut self, table_id: Uuid, e: &StoredEvent) {
        self.table_ids.push(table_id);
        self.seqs.push(e.seq);
        self.kinds.push(e.kind.clone());
        self.vs.push(e.v);
        self.ats.push(e.at);
        self.datas.push(e.data.to_string());
        self.prevs.push(e.prev_hash.clone());
        self.hashes.push(e.hash.clone());
    }
}

/// [`insert_batch`] for one table, inside a caller's transaction or
/// alone: [`StoreError::NoTable`] when there is no such table,
/// [`StoreError::Conflict`] when it is not at the expected version or
/// another writer took the seq first (`events_pkey`).
#[tracing::instrument(skip_all, fields(table_id = %chained.table_id))]
pub async fn insert_one(
    conn: &mut PgConnection,
    chained: &ChainedAppend,
    outbox: Outbox,
) -> Result<(), StoreError> {
    match insert_batch(&mut *conn, &[chained], outbox).await {
        Ok(done) if done == [Appended::Stored] => Ok(()),
        Ok(_) => Err(not_appended(conn, chained).await),
        Err(e) if violates(&e, "events_pkey") => Err(StoreError::Conflict {
            expected: chained.expected_version,
        }),
        Err(e) => Err(e.into()),
    }
}

/// Why a table's events were not appended ([`Appended::NotAtVersion`]):
/// there is no such table, or it is at another version.
pub async fn not_appended(executor: impl PgExecutor<'_>, chained: &ChainedAppend) -> StoreError {
    match current_version(executor, chained.table_id).await {
        Ok(None) => StoreError::NoTable,
        Ok(Some(_)) => StoreError::Conflict {
            expected: chained.expected_version,
        },
        Err(e) => e.into(),
    }
}

/// The notification channel of commits; its payload is
/// `<table id>:<new version>` (a table moved), or `feed:<account id>` (an
/// account's feed has new items), or several of them separated by commas
/// (a bare table id is understood too): written and read by the server's
/// `api::log::announce`, heard by its `api::log::hub`.
pub const CHANNEL: &str = "table_events";

/// Sends each of `payloads` on [`CHANNEL`], heard by every server
/// process's `LISTEN` (see `api::log::announce`), in a transaction of its
/// own committed without waiting for the disk (`synchronous_commit` off for
/// it alone): PostgreSQL serialises the commits of transactions that NOTIFY
/// (a lock held until their commit record is flushed), so a NOTIFY inside
/// the appending transaction made the moves of all tables commit one flush
/// at a time, with no group commit.
#[tracing::instrument(skip_all, fields(payloads = payloads.len()))]
pub async fn notify(executor: impl PgExecutor<'_>, payloads: &[String]) -> Result<(), sqlx::Error> {
    sqlx::query!(
        r#"SELECT set_config('synchronous_commit', 'off', true) AS "set!",
                  (SELECT count(pg_notify($1, p)) FROM UNNEST($2::text[]) AS p) AS "sent!""#,
        CHANNEL,
        payloads,
    )
    .fetch_one(executor)
    .await?;
    Ok(())
}

/// Events read per query when a whole log is loaded or streamed.
pub const PAGE: i64 = 500;

/// Events of a table with `seq > after`, in order, at most `limit`.
#[tracing::instrument(skip(executor))]
pub async fn read_after(
    executor: impl PgExecutor<'_>,
    table_id: Uuid,
    after: i64,
    limit: i64,
) -> Result<Vec<StoredEvent>, sqlx::Error> {
    sqlx::query_as!(
        StoredEvent,
        r#"SELECT seq, type AS kind, v, at, data, prev_hash, hash
           FROM events WHERE table_id = $1 AND seq > $2
           ORDER BY seq LIMIT $3"#,
        table_id,
        after,
        limit,
    )
    .fetch_all(executor)
    .await
}

/// The version (last seq) of a table, `None` when the table does not exist.
#[tracing::instrument(skip(executor))]
pub async fn current_version(
    executor: impl PgExecutor<'_>,
    table_id: Uuid,
) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar!("SELECT version FROM game_tables WHERE id = $1", table_id)
        .fetch_optional(executor)
        .await
}

/// The stored versions of the tables of `ids` that exist: (id, version).
pub async fn current_versions(
    executor: impl PgExecutor<'_>,
    ids: &[Uuid],
) -> Result<Vec<(Uuid, i64)>, sqlx::Error> {
    let rows = sqlx::query!(
        "SELECT id, version FROM game_tables WHERE id = ANY($1::uuid[])",
        ids,
    )
    .fetch_all(executor)
    .await?;
    Ok(rows.into_iter().map(|r| (r.id, r.version)).collect())
}
