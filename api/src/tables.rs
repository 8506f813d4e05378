//! The table service, between the handlers and the store: it loads tables,
//! decides commands with the engine, appends their events and keeps the
//! projections in step.
//!
//! # The cache
//! Each process keeps the folded [`Table`] of every table it served, behind a
//! per-table `tokio::sync::Mutex`, so commands on one table are serialized in
//! this process. Before every use the cached table is brought up to date by
//! reading only the events after its version (`read_after`): another process
//! may have appended. A move therefore costs one small read, one append and
//! one projection update, whatever the length of the log; only the first use
//! of a table in a process folds its whole log.
//!
//! # Acting
//! [`TableService::act`]: lock, refresh, check the client's expected version
//! (stale: 409 `version_conflict`, nothing appended), decide with a fresh
//! OS-seeded rng (every random draw is recorded in the events), then in ONE
//! transaction append the events at the table's version, update the
//! projections (status, seats) and save the idempotent answer, commit, and
//! only then let the cached table keep the new events. The events' primary
//! key `(table_id, seq)` is the lock between processes: when another process
//! appended first, the append fails with a conflict; without a client
//! version the decision is refreshed and retried (a few times), with one the
//! client gets 409. A refused command appends nothing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex as StdMutex};

use actix_web::http::StatusCode;
use chrono::{DateTime, Utc};
use domain::{Status, Table, TableCommand, TableError, TableEvent, EVENT_VERSION};
use rand::SeedableRng;
use serde_json::{Map, Value};
use sqlx::{PgConnection, PgPool};
use tokio::sync::Mutex;
use tokio::time::Instant;
use uuid::Uuid;

use crate::error::ApiError;
use crate::notify::TableEvents;
use crate::store;
use crate::store::events::{NewEvent, StoredEvent};
use crate::store::idempotency::StoredResponse;

/// How many times a command without an expected version is decided again
/// after another process appended first.
pub const MAX_ATTEMPTS: usize = 5;

/// Events read per query when a table is brought up to date.
const REFRESH_PAGE: i64 = 5000;

/// Above this many cached tables, idle entries are dropped (they are
/// reloaded from their log on their next use).
const CACHE_SOFT_LIMIT: usize = 4096;

/// A table as this process knows it.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub table: Table,
    pub created_by: Uuid,
    pub created_at: DateTime<Utc>,
}

impl Loaded {
    pub fn version(&self) -> i64 {
        self.table.version as i64
    }

    /// The seat of an account in this table (in the game once started).
    pub fn seat_of(&self, account_id: Uuid) -> Option<usize> {
        self.table.seat_of(&account_id.to_string())
    }
}

type Slot = Arc<Mutex<Option<Loaded>>>;

/// An `Idempotency-Key` and the hash of the request it came with.
#[derive(Debug, Clone)]
pub struct Idempotency {
    pub key: String,
    pub request_hash: String,
}

/// What a command did.
#[derive(Debug)]
pub struct Acted<R> {
    /// The events appended, as stored (full data).
    pub stored: Vec<StoredEvent>,
    /// The answer built by the caller from the table after the events.
    pub answer: R,
}

/// The table service; one per process, shared by every worker.
#[derive(Debug, Clone)]
pub struct TableService {
    pool: PgPool,
    cache: Arc<StdMutex<HashMap<Uuid, Slot>>>,
}

/// `waiting`, `playing` or `finished`.
pub fn status_str(status: Status) -> &'static str {
    match status {
        Status::Waiting => "waiting",
        Status::Playing => "playing",
        Status::Finished => "finished",
    }
}

/// A refusal of the engine as an answer: state conflicts are 409, callers
/// who may not do this 403, bad rules and illegal moves 422.
pub fn table_error(err: TableError) -> ApiError {
    let code = err.code();
    let status = match code {
        "table_full"
        | "already_seated"
        | "table_not_waiting"
        | "not_enough_players"
        | "game_over"
        | "game_not_started"
        | "game_already_started" => StatusCode::CONFLICT,
        "not_seated" | "not_creator" => StatusCode::FORBIDDEN,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    };
    ApiError::Problem {
        status,
        code,
        detail: err.to_string(),
    }
}

fn not_found() -> ApiError {
    ApiError::NotFound("no such table".into())
}

fn corrupt(what: impl std::fmt::Display) -> ApiError {
    ApiError::internal(format!("unreadable event log: {what}"))
}

fn new_events(events: &[TableEvent]) -> Vec<NewEvent> {
    events
        .iter()
        .map(|e| NewEvent::new(e.kind(), EVENT_VERSION as i32, e.data()))
        .collect()
}

fn account_uuid(id: &str) -> Result<Uuid, ApiError> {
    id.parse()
        .map_err(|_| ApiError::internal(format!("account id {id:?} is not a UUID")))
}

/// Keeps `table_players` in step with lobby events, on the appending
/// transaction.
async fn project_players(
    conn: &mut PgConnection,
    table_id: Uuid,
    events: &[TableEvent],
) -> Result<(), ApiError> {
    for e in events {
        match e {
            TableEvent::PlayerJoined(s) => {
                store::players::insert(conn, table_id, account_uuid(&s.account_id)?, s.seat as i32)
                    .await?;
            }
            TableEvent::PlayerLeft { seat } => {
                store::players::remove_seat(conn, table_id, *seat as i32).await?;
            }
            TableEvent::GameStarted { players } => {
                store::players::clear(conn, table_id).await?;
                for s in players {
                    store::players::insert(
                        conn,
                        table_id,
                        account_uuid(&s.account_id)?,
                        s.seat as i32,
                    )
                    .await?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Parses a stored event back into the engine's.
pub fn parse_event(e: &StoredEvent) -> Result<TableEvent, ApiError> {
    TableEvent::from_parts(&e.kind, e.data.clone())
        .map_err(|err| corrupt(format!("event {} ({}): {err}", e.seq, e.kind)))
}

/// `{type, data}` of a stored event as a seat (or a spectator) may see it,
/// as the public `{seq, type, v, at, data, prev_hash, hash}`; the hashes stay
/// those of the full data.
pub fn redact(e: &StoredEvent, viewer: Option<usize>) -> Result<StoredEvent, ApiError> {
    let mut out = e.clone();
    out.data = parse_event(e)?.redacted_json(viewer)["data"].take();
    Ok(out)
}

impl TableService {
    pub fn new(pool: PgPool) -> Self {
        Self {
            pool,
            cache: Arc::default(),
        }
    }

    fn slot(&self, table_id: Uuid) -> Slot {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() > CACHE_SOFT_LIMIT {
            cache.retain(|_, slot| Arc::strong_count(slot) > 1);
        }
        cache.entry(table_id).or_default().clone()
    }

    /// Brings a cached table up to date: reads only the events after its
    /// version (all of them on its first use in this process).
    async fn refresh(&self, table_id: Uuid, slot: &mut Option<Loaded>) -> Result<(), ApiError> {
        if slot.is_none() {
            let row = store::tables::get(&self.pool, table_id)
                .await?
                .ok_or_else(not_found)?;
            let first = store::events::read_after(&self.pool, table_id, 0, 1).await?;
            let Some(first) = first.first() else {
                return Err(not_found());
            };
            let table = Table::from_events([&parse_event(first)?])
                .ok_or_else(|| corrupt("the log does not begin with table_created"))?;
            *slot = Some(Loaded {
                table,
                created_by: row.created_by,
                created_at: row.created_at,
            });
        }
        let loaded = slot.as_mut().expect("loaded above");
        loop {
            let after = loaded.version();
            let page =
                store::events::read_data_after(&self.pool, table_id, after, REFRESH_PAGE).await?;
            for (i, e) in page.iter().enumerate() {
                if e.seq != after + 1 + i as i64 {
                    return Err(corrupt(format!("seq {} after {}", e.seq, after + i as i64)));
                }
                let event = TableEvent::parse(&e.kind, &e.data)
                    .map_err(|err| corrupt(format!("event {} ({}): {err}", e.seq, e.kind)))?;
                loaded.table.evolve(&event);
            }
            if (page.len() as i64) < REFRESH_PAGE {
                return Ok(());
            }
        }
    }

    /// Runs `f` on the up-to-date table (404 when there is none).
    pub async fn read<R>(
        &self,
        table_id: Uuid,
        f: impl FnOnce(&Loaded) -> R,
    ) -> Result<R, ApiError> {
        let slot = self.slot(table_id);
        let mut guard = slot.lock().await;
        self.refresh(table_id, &mut guard).await?;
        Ok(f(guard.as_ref().expect("refreshed")))
    }

    /// Opens a table: its projection row, `table_created` and the creator's
    /// `player_joined` at seat 0, in one transaction.
    #[tracing::instrument(skip(self, options))]
    pub async fn create(
        &self,
        creator: Uuid,
        username: &str,
        ruleset: &str,
        options: &Map<String, Value>,
        seats: usize,
    ) -> Result<(Uuid, Loaded), ApiError> {
        let events = Table::create(ruleset, options, seats, &creator.to_string(), username)
            .map_err(table_error)?;
        let table = Table::from_events(&events).ok_or_else(|| corrupt("no table_created"))?;
        let id = Uuid::new_v4();
        let seats = i32::try_from(seats).map_err(ApiError::internal)?;
        let mut tx = self.pool.begin().await?;
        store::tables::insert_with_seats(&mut *tx, id, &table.ruleset, seats, creator).await?;
        store::events::append(&mut tx, id, 0, &new_events(&events)).await?;
        project_players(&mut tx, id, &events).await?;
        store::tables::update_projection(
            &mut *tx,
            id,
            table.version as i64,
            status_str(table.status()),
            None,
        )
        .await?;
        tx.commit().await?;
        let row = store::tables::get(&self.pool, id)
            .await?
            .ok_or_else(not_found)?;
        let loaded = Loaded {
            table,
            created_by: row.created_by,
            created_at: row.created_at,
        };
        *self.slot(id).lock().await = Some(loaded.clone());
        tracing::info!(table_id = %id, "table created");
        Ok((id, loaded))
    }

    /// The stored answer of an earlier request with this key, if any (422
    /// when the key came with another request).
    pub async fn replay(
        &self,
        table_id: Uuid,
        account_id: Uuid,
        idempotency: &Idempotency,
    ) -> Result<Option<StoredResponse>, ApiError> {
        store::idempotency::find(&self.pool, table_id, account_id, &idempotency.key)
            .await?
            .map(|stored| stored.replay_for(&idempotency.request_hash))
            .transpose()
    }

    /// Decides `command` on the up-to-date table and appends its events (see
    /// the module documentation). `answer` builds the response from the table
    /// after the events and the stored events; with an idempotency key, it is
    /// saved (as a 200) in the same transaction.
    #[tracing::instrument(skip(self, command, idempotency, answer), fields(command = ?command))]
    pub async fn act<R: serde::Serialize>(
        &self,
        table_id: Uuid,
        command: &TableCommand,
        expected_version: Option<i64>,
        idempotency: Option<(Uuid, &Idempotency)>,
        answer: impl Fn(&Loaded, &[StoredEvent]) -> Result<R, ApiError>,
    ) -> Result<Acted<R>, ApiError> {
        let slot = self.slot(table_id);
        let mut guard = slot.lock().await;
        let mut attempt = 0;
        loop {
            attempt += 1;
            self.refresh(table_id, &mut guard).await?;
            let loaded = guard.as_mut().expect("refreshed");
            let version = loaded.version();
            if let Some(expected) = expected_version {
                if expected != version {
                    return Err(ApiError::VersionConflict { expected });
                }
            }
            let mut rng = rand::rngs::StdRng::from_entropy();
            let events = loaded
                .table
                .decide(command, &mut rng)
                .map_err(table_error)?;

            let mut tx = self.pool.begin().await?;
            let stored =
                match store::events::append(&mut tx, table_id, version, &new_events(&events)).await
                {
                    Ok(stored) => stored,
                    Err(ApiError::VersionConflict { .. })
                        if expected_version.is_none() && attempt < MAX_ATTEMPTS =>
                    {
                        tracing::info!(attempt, "another writer appended first; deciding again");
                        continue;
                    }
                    Err(ApiError::VersionConflict { .. }) => {
                        return Err(ApiError::VersionConflict {
                            expected: expected_version.unwrap_or(version),
                        })
                    }
                    Err(e) => return Err(e),
                };
            // From here the cached table holds the new events; should the
            // transaction not commit, it is dropped and reloaded on next use.
            for e in &events {
                loaded.table.evolve(e);
            }
            let result = async {
                project_players(&mut tx, table_id, &events).await?;
                let new_version = loaded.version();
                let moved = store::tables::update_projection(
                    &mut *tx,
                    table_id,
                    new_version,
                    status_str(loaded.table.status()),
                    None,
                )
                .await?;
                if !moved {
                    return Err(ApiError::internal(
                        "the projection is not at the new version",
                    ));
                }
                let answer = answer(loaded, &stored)?;
                if let Some((account_id, idem)) = idempotency {
                    let body = serde_json::to_value(&answer).map_err(ApiError::internal)?;
                    store::idempotency::save(
                        &mut *tx,
                        table_id,
                        account_id,
                        &idem.key,
                        &idem.request_hash,
                        200,
                        &body,
                    )
                    .await?;
                }
                tx.commit().await?;
                Ok(answer)
            }
            .await;
            return match result {
                Ok(answer) => Ok(Acted { stored, answer }),
                Err(e) => {
                    *guard = None;
                    Err(e)
                }
            };
        }
    }

    /// The events after `after` (at most `limit`) as `account_id` may see
    /// them. With none yet, waits until `deadline` for one to be committed
    /// (by any process: `hub` hears PostgreSQL's notifications), without
    /// polling the database in between. 404 when the table does not exist.
    #[tracing::instrument(skip(self, hub))]
    pub async fn poll_events(
        &self,
        hub: &TableEvents,
        table_id: Uuid,
        account_id: Uuid,
        after: i64,
        limit: i64,
        deadline: Option<Instant>,
    ) -> Result<Vec<StoredEvent>, ApiError> {
        // Subscribe before reading, so a commit in between is not missed.
        let mut rx = hub.subscribe(table_id);
        self.read(table_id, |_| ()).await?;
        let mut page = store::events::read_after(&self.pool, table_id, after, limit).await?;
        if let Some(deadline) = deadline {
            while page.is_empty() {
                let woken = hub.wait(&mut rx, deadline).await;
                page = store::events::read_after(&self.pool, table_id, after, limit).await?;
                if !woken {
                    break;
                }
            }
        }
        // The cache is now at least as recent as the page: the caller's seat
        // is the one the page's game events use.
        let seat = self.read(table_id, |l| l.seat_of(account_id)).await?;
        page.iter().map(|e| redact(e, seat)).collect()
    }

    /// A page of tables and their seated players.
    pub async fn list(
        &self,
        status: Option<&str>,
        member: Option<Uuid>,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> Result<Vec<(store::tables::ListedTable, Vec<store::tables::SeatRow>)>, ApiError> {
        let tables = store::tables::list(&self.pool, status, member, after, limit).await?;
        let ids: Vec<Uuid> = tables.iter().map(|t| t.id).collect();
        let mut seats: HashMap<Uuid, Vec<store::tables::SeatRow>> = HashMap::new();
        for row in store::tables::players_of(&self.pool, &ids).await? {
            seats.entry(row.table_id).or_default().push(row);
        }
        Ok(tables
            .into_iter()
            .map(|t| {
                let players = seats.remove(&t.id).unwrap_or_default();
                (t, players)
            })
            .collect())
    }
}
