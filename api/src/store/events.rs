//! `events`: the append-only, hash-chained log of every table.
//!
//! An append moves the table's `game_tables.version` from the version it
//! expects, in the same statement as its inserts: at a stale version it
//! writes nothing and becomes [`ApiError::VersionConflict`]. The primary key
//! `(table_id, seq)` refuses any duplicate seq all the same.

use chrono::{DateTime, Utc};
use domain::{ReadError, Salt, TableEvent, EVENT_VERSION};
use serde::{Serialize, Serializer};
use serde_json::Value;
use sqlx::{PgConnection, PgExecutor};
use std::borrow::Cow;

use utoipa::openapi::schema::{AllOfBuilder, Schema};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};
use uuid::Uuid;

pub use domain::Due;

use crate::chain::{self, ChainedEvent, GENESIS_PREV_HASH};
use crate::commit::notify::CHANNEL;
use crate::error::ApiError;

/// An event to append: its `type`, schema version `v` and `data`.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub kind: String,
    pub v: i32,
    pub data: Value,
}

impl NewEvent {
    pub fn new(kind: impl Into<String>, v: i32, data: Value) -> Self {
        Self {
            kind: kind.into(),
            v,
            data,
        }
    }

    /// An engine event in the current format ([`EVENT_VERSION`]): its data
    /// with a fresh salt from the thread's CSPRNG, so that its hash hides
    /// what redaction hides (see `domain::redaction`).
    pub fn sealed(event: &TableEvent) -> Self {
        let salt = Salt::draw(&mut rand::thread_rng());
        Self::new(event.kind(), EVENT_VERSION as i32, event.sealed_data(salt))
    }
}

/// An event as logged; serializes to the public format
/// `{seq, type, v, at, data, prev_hash, hash}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredEvent {
    pub seq: i64,
    #[serde(rename = "type")]
    pub kind: String,
    pub v: i32,
    /// RFC 3339 UTC with exactly six fractional digits.
    #[serde(serialize_with = "serialize_at")]
    pub at: DateTime<Utc>,
    pub data: Value,
    pub prev_hash: String,
    pub hash: String,
}

/// The fields of a stored event besides its `type` and `data` (the schema's
/// first half; the domain's `EventBody` is the other).
#[derive(ToSchema)]
#[allow(dead_code)]
struct EventHead {
    /// 1, 2, … in the table's log.
    #[schema(minimum = 1)]
    seq: i64,
    /// The format version of `data` (2 adds its `salt`).
    #[schema(minimum = 1, maximum = 2)]
    v: i32,
    /// RFC 3339 UTC with exactly six fractional digits.
    #[schema(format = DateTime)]
    at: String,
    /// The previous event's `hash` (64 zeros for the first).
    #[schema(pattern = "^[0-9a-f]{64}$")]
    prev_hash: String,
    /// SHA-256 of the event's canonical form with its whole data (docs/API.md).
    #[schema(pattern = "^[0-9a-f]{64}$")]
    hash: String,
}

impl PartialSchema for StoredEvent {
    fn schema() -> RefOr<Schema> {
        AllOfBuilder::new()
            .item(EventHead::schema())
            .item(Ref::from_schema_name(domain::schema::EVENT_BODY))
            .description(Some(
                "An event as logged: `{seq, type, v, at, data, prev_hash, hash}`, its data \
                 typed by its `type`.",
            ))
            .examples([serde_json::json!({
                "seq": 10,
                "type": "card_played",
                "v": 2,
                "at": "2025-01-31T18:04:05.123456Z",
                "data": {"seat": 0, "card": "8H", "suit": "S", "announce": false, "salt": "4f0c2a1e9b7d3c5a8e6f1d2b0a9c8e7f"},
                "prev_hash": "5a1f0e0c9b7d3e2a4f6b8c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f",
                "hash": "0c9d8e7f6a5b4c3d2e1f5a1f0e0c9b7d3e2a4f6b8c1d0e9f8a7b6c5d4e3f2a1b"
            })])
            .into()
    }
}

impl ToSchema for StoredEvent {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("StoredEvent")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.extend(domain::schema::event_components());
    }
}

impl StoredEvent {
    /// The engine's event (through its format version, see
    /// `domain::TableEvent::read`).
    pub fn event(&self) -> Result<TableEvent, ReadError> {
        // Through text: maps keyed by seat have string keys in JSON, which
        // serde_json reads back as numbers only from text.
        TableEvent::read(&self.kind, format_version(self.v), &self.data.to_string())
    }
}

/// A stored `v` as the engine's format number (a negative one, refused by
/// the table's check, reads as no format at all).
fn format_version(v: i32) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

fn serialize_at<S: Serializer>(at: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&chain::format_at(*at))
}

impl ChainedEvent for StoredEvent {
    fn seq(&self) -> i64 {
        self.seq
    }
    fn kind(&self) -> &str {
        &self.kind
    }
    fn v(&self) -> i32 {
        self.v
    }
    fn at(&self) -> String {
        chain::format_at(self.at)
    }
    fn data(&self) -> &Value {
        &self.data
    }
    fn prev_hash(&self) -> &str {
        &self.prev_hash
    }
    fn hash(&self) -> &str {
        &self.hash
    }
}

/// Appends `events` to a table whose last event is `expected_version` (0 for
/// none), chaining their hashes and moving `game_tables.version`, all on
/// `conn`: call it inside a transaction, commit, then [`announce`] the new
/// version.
///
/// Errors: [`ApiError::VersionConflict`] when the table is not at
/// `expected_version` (nothing is written; the transaction is then aborted
/// and must be rolled back, which dropping it does); [`ApiError::NotFound`]
/// when the table has no `game_tables` row.
#[tracing::instrument(skip(conn, events), fields(count = events.len()))]
pub async fn append(
    conn: &mut PgConnection,
    table_id: Uuid,
    expected_version: i64,
    events: &[NewEvent],
) -> Result<Vec<StoredEvent>, ApiError> {
    if let Some(answer) = answered_without_query(expected_version, events) {
        return answer;
    }
    let conflict = || ApiError::VersionConflict {
        expected: expected_version,
    };
    let prev_hash = if expected_version == 0 {
        GENESIS_PREV_HASH.to_owned()
    } else {
        head_hash(&mut *conn, table_id, expected_version)
            .await?
            .ok_or_else(conflict)?
    };
    append_chained(conn, table_id, expected_version, &prev_hash, events, None).await
}

/// The appends answered before any query: a negative version conflicts,
/// no events append nothing.
fn answered_without_query(
    expected_version: i64,
    events: &[NewEvent],
) -> Option<Result<Vec<StoredEvent>, ApiError>> {
    if expected_version < 0 {
        return Some(Err(ApiError::VersionConflict {
            expected: expected_version,
        }));
    }
    events.is_empty().then(|| Ok(Vec::new()))
}

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

/// Like [`append`] when the caller knows the hash of event
/// `expected_version` (`prev_hash`, [`GENESIS_PREV_HASH`] for 0), and with
/// the new `status` of the table when it changes: ONE statement moves
/// `game_tables` (version, status, `snapshot` cleared) and inserts every
/// event ([`append_batch`] for one table). Being one statement, it is atomic
/// on its own: outside a transaction it commits by itself. Once it is
/// committed, [`announce`] it.
///
/// The `UPDATE … WHERE version = expected_version` comes first and the
/// inserts only happen when it moved the row, so a stale version (or a wrong
/// `prev_hash` from a stale cache, which goes with a stale version) writes
/// nothing; two writers at one version serialize on the
/// row, and the second finds the version moved. The primary key
/// `(table_id, seq)` still refuses any duplicate seq.
#[tracing::instrument(skip(conn, prev_hash, events), fields(count = events.len()))]
pub async fn append_chained(
    conn: &mut PgConnection,
    table_id: Uuid,
    expected_version: i64,
    prev_hash: &str,
    events: &[NewEvent],
    status: Option<&'static str>,
) -> Result<Vec<StoredEvent>, ApiError> {
    if let Some(answer) = answered_without_query(expected_version, events) {
        return answer;
    }
    let chained = ChainedAppend::new(
        table_id,
        expected_version,
        prev_hash,
        events.to_vec(),
        status,
    );
    append_one(conn, chained).await
}

/// [`append_batch`] for one table, as an answer: its events as stored, or
/// why they were not (404 when there is no such table, 409 when it is not
/// at the expected version or another writer took the seq first).
pub async fn append_one(
    conn: &mut PgConnection,
    chained: ChainedAppend,
) -> Result<Vec<StoredEvent>, ApiError> {
    match append_batch(&mut *conn, &[&chained]).await {
        Ok(done) if done == [Appended::Stored] => Ok(chained.events),
        Ok(_) => Err(not_appended(&mut *conn, chained.table_id, chained.expected_version).await),
        Err(e) => Err(append_error(e, chained.expected_version)),
    }
}

/// A table's new events chained to its log, stamped and hashed, ready for
/// [`append_batch`].
#[derive(Debug, Clone)]
pub struct ChainedAppend {
    pub table_id: Uuid,
    /// The seq of the table's last event (0: none), the events follow it.
    pub expected_version: i64,
    /// The table's new status, when the events change it.
    pub status: Option<&'static str>,
    pub events: Vec<StoredEvent>,
    /// What becomes of the table's `due_at`.
    pub due: Due,
}

impl ChainedAppend {
    /// `events` after event `expected_version`, whose hash is `prev_hash`
    /// ([`GENESIS_PREV_HASH`] for 0), all stamped now.
    pub fn new(
        table_id: Uuid,
        expected_version: i64,
        prev_hash: &str,
        events: Vec<NewEvent>,
        status: Option<&'static str>,
    ) -> Self {
        let at = chain::truncate_at(Utc::now());
        let at_text = chain::format_at(at);
        let mut prev_hash = prev_hash.to_owned();
        let events = events
            .into_iter()
            .enumerate()
            .map(|(i, e)| {
                let seq = expected_version + 1 + i as i64;
                let hash = chain::event_hash(&prev_hash, seq, &e.kind, e.v, &at_text, &e.data);
                StoredEvent {
                    seq,
                    kind: e.kind,
                    v: e.v,
                    at,
                    data: e.data,
                    prev_hash: std::mem::replace(&mut prev_hash, hash.clone()),
                    hash,
                }
            })
            .collect();
        Self {
            table_id,
            expected_version,
            status,
            events,
            due: Due::Keep,
        }
    }

    /// The same, setting the table's `due_at` as `due` says.
    pub fn with_due(self, due: Due) -> Self {
        Self { due, ..self }
    }

    /// The table's `due_at` after the append: `None` to keep it as it is.
    pub fn due_at(&self) -> Option<Option<DateTime<Utc>>> {
        let at = self.events.first().map_or_else(Utc::now, |e| e.at);
        match self.due {
            Due::Keep => None,
            Due::Clear => Some(None),
            Due::After(wait) => Some(chrono::Duration::from_std(wait).ok().map(|w| at + w)),
        }
    }

    /// The table's version once the events are stored.
    pub fn new_version(&self) -> i64 {
        self.expected_version + self.events.len() as i64
    }
}

/// What [`append_batch`] did with one table's events.
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
/// The statement is run with generic plans (see [`crate::store::held`]),
/// so its shape is chosen for them. `g.id = ANY($1)` gives the `UPDATE` an
/// index path whatever it estimates of `UNNEST`: without it, the generic
/// plan of a small database scanned and hashed all of `game_tables` on
/// every append. And the answer is the inserted rows themselves, counted here,
/// rather than a count per table in a subquery. Most of PostgreSQL's CPU
/// per statement is the same whatever the batch holds (`loadgen
/// append-cost`, BENCHMARKS.md), hence the batches.
#[tracing::instrument(skip_all, fields(tables = batch.len()))]
pub async fn append_batch(
    conn: &mut PgConnection,
    batch: &[&ChainedAppend],
) -> Result<Vec<Appended>, sqlx::Error> {
    debug_assert!(batch.iter().all(|c| !c.events.is_empty()));
    let mut order: Vec<&ChainedAppend> = batch.to_vec();
    order.sort_by_key(|c| c.table_id);
    let (mut ids, mut expected, mut versions, mut statuses) = (
        Vec::with_capacity(order.len()),
        Vec::with_capacity(order.len()),
        Vec::with_capacity(order.len()),
        Vec::with_capacity(order.len()),
    );
    let (mut keep_due, mut due_ats) = (
        Vec::with_capacity(order.len()),
        Vec::with_capacity(order.len()),
    );
    let n: usize = order.iter().map(|c| c.events.len()).sum();
    let mut rows = EventColumns::with_capacity(n);
    for c in &order {
        ids.push(c.table_id);
        expected.push(c.expected_version);
        versions.push(c.new_version());
        statuses.push(c.status);
        let due_at = c.due_at();
        keep_due.push(due_at.is_none());
        due_ats.push(due_at.flatten());
        for e in &c.events {
            rows.push(c.table_id, e);
        }
    }
    let inserted = sqlx::query_scalar!(
        r#"WITH moved AS (
               UPDATE game_tables g
               SET version = r.version, status = COALESCE(r.status, g.status),
                   snapshot = NULL, updated_at = now(),
                   due_at = CASE WHEN r.keep_due THEN g.due_at ELSE r.due_at END
               FROM UNNEST($1::uuid[], $2::bigint[], $3::bigint[], $4::text[],
                           $13::bool[], $14::timestamptz[])
                    AS r(id, expected, version, status, keep_due, due_at)
               WHERE g.id = ANY($1::uuid[]) AND g.id = r.id AND g.version = r.expected
               RETURNING g.id
           ), inserted AS (
               INSERT INTO events (table_id, seq, type, v, at, data, prev_hash, hash)
               SELECT e.table_id, e.seq, e.type, e.v, e.at, e.data::json, e.prev_hash, e.hash
               FROM UNNEST($5::uuid[], $6::bigint[], $7::text[], $8::int[],
                           $9::timestamptz[], $10::text[], $11::text[], $12::text[])
                    AS e(table_id, seq, type, v, at, data, prev_hash, hash)
               WHERE e.table_id IN (SELECT id FROM moved)
               RETURNING table_id
           )
           SELECT table_id AS "table_id!" FROM inserted"#,
        &ids,
        &expected,
        &versions,
        &statuses as &[Option<&str>],
        &rows.table_ids,
        &rows.seqs,
        &rows.kinds,
        &rows.vs,
        &rows.ats,
        &rows.datas,
        &rows.prevs,
        &rows.hashes,
        &keep_due,
        &due_ats as &[Option<DateTime<Utc>>],
    )
    .fetch_all(&mut *conn)
    .await?;
    // A row per event inserted, and only tables that moved have any.
    let mut answers = Vec::with_capacity(batch.len());
    for c in batch {
        answers.push(
            match inserted.iter().filter(|&&t| t == c.table_id).count() {
                0 => Appended::NotAtVersion,
                n if n == c.events.len() => Appended::Stored,
                n => {
                    return Err(sqlx::Error::Protocol(format!(
                        "appended {n} of the {} events of table {}",
                        c.events.len(),
                        c.table_id
                    )))
                }
            },
        );
    }
    Ok(answers)
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

/// Why a table's events were not appended ([`Appended::NotAtVersion`]):
/// 404 when there is no such table, else a version conflict.
pub async fn not_appended(
    executor: impl PgExecutor<'_>,
    table_id: Uuid,
    expected_version: i64,
) -> ApiError {
    match current_version(executor, table_id).await {
        Ok(None) => ApiError::NotFound("no such table".into()),
        Ok(Some(_)) => ApiError::VersionConflict {
            expected: expected_version,
        },
        Err(e) => e.into(),
    }
}

/// A failed append statement as an answer: a duplicate seq is a version
/// conflict (another writer appended first).
fn append_error(err: sqlx::Error, expected_version: i64) -> ApiError {
    match &err {
        sqlx::Error::Database(db) if db.constraint() == Some("events_pkey") => {
            ApiError::VersionConflict {
                expected: expected_version,
            }
        }
        _ => err.into(),
    }
}

/// Tells every server process (their `LISTEN table_events`, see
/// [`crate::commit::notify`]) that each table is at its version: call it once an
/// append is committed.
///
/// A transaction of its own, committed without waiting for the disk
/// (`synchronous_commit` off for it alone): PostgreSQL serialises the
/// commits of transactions that NOTIFY (a lock held until their commit
/// record is flushed), so a NOTIFY inside the appending transaction made the
/// moves of all tables commit one flush at a time, with no group commit.
/// A notification lost in a crash between the commit and this only makes
/// other processes' waiters late: they check the table's version when
/// their wait ends.
#[tracing::instrument(skip_all, fields(tables = versions.len()))]
pub async fn announce(
    executor: impl PgExecutor<'_>,
    versions: &[(Uuid, i64)],
) -> Result<(), sqlx::Error> {
    let payloads = payloads(versions);
    sqlx::query!(
        r#"SELECT set_config('synchronous_commit', 'off', true) AS "set!",
                  (SELECT count(pg_notify($1, p)) FROM UNNEST($2::text[]) AS p) AS "sent!""#,
        CHANNEL,
        &payloads,
    )
    .fetch_one(executor)
    .await?;
    Ok(())
}

/// The longest payload [`announce`] sends: PostgreSQL takes up to 8000
/// bytes.
const PAYLOAD_MAX: usize = 7900;

/// `<table id>:<version>` entries, as few payloads as [`PAYLOAD_MAX`]
/// allows, their entries separated by commas: a payload per notification,
/// and every notification is delivered to every listening process.
fn payloads(versions: &[(Uuid, i64)]) -> Vec<String> {
    let mut payloads = Vec::new();
    let mut payload = String::new();
    for (table_id, version) in versions {
        let entry = format!("{table_id}:{version}");
        if !payload.is_empty() && payload.len() + 1 + entry.len() > PAYLOAD_MAX {
            payloads.push(std::mem::take(&mut payload));
        }
        if !payload.is_empty() {
            payload.push(',');
        }
        payload.push_str(&entry);
    }
    if !payload.is_empty() {
        payloads.push(payload);
    }
    payloads
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

/// An event's seq, type, format and data as JSON text: what folding a log needs,
/// without decoding the data into a `serde_json::Value` first.
#[derive(Debug, Clone, PartialEq)]
pub struct EventData {
    pub seq: i64,
    pub kind: String,
    /// The event's format version (`v`).
    pub v: i32,
    pub data: String,
}

impl EventData {
    /// The engine's event (see [`StoredEvent::event`]).
    pub fn event(&self) -> Result<TableEvent, ReadError> {
        TableEvent::read(&self.kind, format_version(self.v), &self.data)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announcements_go_in_as_few_payloads_as_postgres_takes() {
        assert!(payloads(&[]).is_empty());
        let one = Uuid::from_u128(1);
        assert_eq!(
            payloads(&[(one, 7)]),
            vec![format!("{one}:7")],
            "one table, one entry"
        );
        let versions: Vec<(Uuid, i64)> = (0..500u128)
            .map(|i| (Uuid::from_u128(i), i as i64 * 1000))
            .collect();
        let sent = payloads(&versions);
        assert!(sent.len() > 1, "500 entries need more than one payload");
        assert!(sent.iter().all(|p| p.len() <= PAYLOAD_MAX));
        let entries: Vec<String> = sent
            .iter()
            .flat_map(|p| p.split(',').map(str::to_owned))
            .collect();
        let expected: Vec<String> = versions
            .iter()
            .map(|(id, version)| format!("{id}:{version}"))
            .collect();
        assert_eq!(entries, expected, "every entry once, in order");
    }
}
