//! `events`: the append-only, hash-chained log of every table.
//!
//! The primary key `(table_id, seq)` is the optimistic lock: an append at a
//! stale version collides with the event another writer appended, and becomes
//! [`ApiError::VersionConflict`]. No counter row is locked first.

use chrono::{DateTime, Utc};
use serde::{Serialize, Serializer};
use serde_json::Value;
use sqlx::{PgConnection, PgExecutor};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::chain::{self, ChainedEvent, GENESIS_PREV_HASH};
use crate::error::ApiError;
use crate::notify::CHANNEL;

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
}

/// An event as logged; serializes to the public format
/// `{seq, type, v, at, data, prev_hash, hash}`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({
    "seq": 1,
    "type": "table_created",
    "v": 1,
    "at": "2025-01-31T18:04:05.123456Z",
    "data": {"ruleset": "classic", "seats": 4},
    "prev_hash": "0000000000000000000000000000000000000000000000000000000000000000",
    "hash": "5a1f0e0c9b7d3e2a4f6b8c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f"
}))]
pub struct StoredEvent {
    pub seq: i64,
    #[serde(rename = "type")]
    pub kind: String,
    pub v: i32,
    /// RFC 3339 UTC with exactly six fractional digits.
    #[serde(serialize_with = "serialize_at")]
    #[schema(value_type = String, format = DateTime)]
    pub at: DateTime<Utc>,
    #[schema(value_type = Object)]
    pub data: Value,
    pub prev_hash: String,
    pub hash: String,
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
/// none), chaining their hashes, moving `game_tables.version` and sending
/// `pg_notify('table_events', table_id)`, all on `conn`: call it inside a
/// transaction, and commit after.
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
    let conflict = || ApiError::VersionConflict {
        expected: expected_version,
    };
    if expected_version < 0 {
        return Err(conflict());
    }
    if events.is_empty() {
        return Ok(Vec::new());
    }
    let mut prev_hash = if expected_version == 0 {
        GENESIS_PREV_HASH.to_owned()
    } else {
        sqlx::query_scalar!(
            "SELECT hash FROM events WHERE table_id = $1 AND seq = $2",
            table_id,
            expected_version,
        )
        .fetch_optional(&mut *conn)
        .await?
        .ok_or_else(conflict)?
    };

    let at = chain::truncate_at(Utc::now());
    let at_text = chain::format_at(at);
    let mut stored = Vec::with_capacity(events.len());
    for (i, e) in events.iter().enumerate() {
        let seq = expected_version + 1 + i as i64;
        let hash = chain::event_hash(&prev_hash, seq, &e.kind, e.v, &at_text, &e.data);
        let inserted = sqlx::query!(
            r#"INSERT INTO events (table_id, seq, type, v, at, data, prev_hash, hash)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"#,
            table_id,
            seq,
            e.kind,
            e.v,
            at,
            e.data,
            prev_hash,
            hash,
        )
        .execute(&mut *conn)
        .await;
        match inserted {
            Ok(_) => {}
            Err(sqlx::Error::Database(db)) if db.constraint() == Some("events_pkey") => {
                return Err(conflict());
            }
            Err(other) => return Err(other.into()),
        }
        stored.push(StoredEvent {
            seq,
            kind: e.kind.clone(),
            v: e.v,
            at,
            data: e.data.clone(),
            prev_hash: std::mem::replace(&mut prev_hash, hash.clone()),
            hash,
        });
    }

    let new_version = expected_version + events.len() as i64;
    let moved = sqlx::query!(
        r#"UPDATE game_tables SET version = $3, updated_at = now()
           WHERE id = $1 AND version = $2"#,
        table_id,
        expected_version,
        new_version,
    )
    .execute(&mut *conn)
    .await?;
    if moved.rows_affected() != 1 {
        return Err(conflict());
    }

    sqlx::query!(
        "SELECT pg_notify($1, $2) AS notified",
        CHANNEL,
        table_id.to_string(),
    )
    .fetch_one(&mut *conn)
    .await?;
    Ok(stored)
}

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

/// An event's seq, type and data as JSON text: what folding a log needs,
/// without decoding the data into a `serde_json::Value` first.
#[derive(Debug, Clone, PartialEq)]
pub struct EventData {
    pub seq: i64,
    pub kind: String,
    pub data: String,
}

/// Like [`read_after`], for folding: seq, type and data text only.
#[tracing::instrument(skip(executor))]
pub async fn read_data_after(
    executor: impl PgExecutor<'_>,
    table_id: Uuid,
    after: i64,
    limit: i64,
) -> Result<Vec<EventData>, sqlx::Error> {
    sqlx::query_as!(
        EventData,
        r#"SELECT seq, type AS kind, data::text AS "data!"
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
