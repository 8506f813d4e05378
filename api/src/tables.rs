//! The table service, between the handlers and the store: it loads tables,
//! decides commands with the engine, appends their events and keeps the
//! projections in step.
//!
//! # The cache
//! Each process keeps the folded [`Table`] of every table it served, behind a
//! per-table `tokio::sync::Mutex`, so commands on one table are serialized in
//! this process, with the hash of its last event and its last events
//! (parsed). Only the first use of a table in a process folds its whole log
//! (one streamed query).
//!
//! Before a use the cache must be current: another process may have
//! appended. Without a [`TableEvents`] hub (`read`, `act`), the events after
//! the cached version are read (one small query). With one (`read_with`,
//! `act_with`, `poll_events`: the views, moves and long polls), nothing is
//! read when the hub has heard of no version above the cached one since the
//! log was last read, in the same listener epoch, and the caller has seen no
//! newer version (`min_version`: an `expected_version`, an `after`, an
//! `ETag`). Every commit notifies `'<table>:<version>'`, so a long poll
//! served this way lags a commit of another process by the notification's
//! delivery (milliseconds), never more: a lost listener connection moves the
//! epoch and the log is read again. A view ([`TableService::read_with`])
//! also reads the table's version (one indexed row), so it is never older
//! than the last commit of any process. Moves stay exact whatever the lag:
//! see below.
//!
//! # Acting
//! [`TableService::act_with`]: lock, refresh, check the client's expected
//! version (stale: 409 `version_conflict`, nothing appended), decide with a
//! fresh OS-seeded rng (every random draw is recorded in the events), then
//! append the events at the table's version, chained to the cached head
//! hash, in ONE statement that also moves `game_tables` (version, status)
//! ([`store::events::append_batch`]); once committed, the new version is
//! announced to every process ([`store::events::announce`], a NOTIFY of its
//! own so that moves of different tables still commit together, sent by a
//! task that nobody waits for). A plain move without an
//! `Idempotency-Key` is written by the [`LogWriter`]: a statement committed
//! by itself, shared with the plain moves of other tables queued meanwhile;
//! lobby events (seats to project) and idempotent answers go
//! with it in one transaction ([`store::events::append_chained`]). The
//! command is decided on the cached table, which takes its events at once
//! (`Table::execute`: no copy of the game; the status to project depends on
//! them) and is dropped, to be read again from the log, when they are not
//! committed; until they are, it is marked in doubt, so that a command
//! whose future is dropped half-way leaves a table the next use reads
//! again. The statement writes only when `game_tables.version` is the
//! version decided on, and the events' primary key `(table_id, seq)` refuses
//! any duplicate: when another process appended first (or the cache was
//! stale), the append fails with a conflict and nothing is written; without
//! a client version the log is read and the command decided again (a few
//! times), with one the client gets 409. A refused command appends nothing.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex as StdMutex};

use actix_web::http::StatusCode;
use chrono::{DateTime, Utc};
use domain::{Seen, Status, Table, TableCommand, TableError, TableEvent};
use futures_util::TryStreamExt;
use serde_json::{Map, Value};
use sqlx::{PgConnection, PgPool};
use tokio::sync::Mutex;
use tokio::time::Instant;
use uuid::Uuid;

use crate::chain::GENESIS_PREV_HASH;
use crate::error::ApiError;
use crate::log_writer::LogWriter;
use crate::notify::TableEvents;
use crate::rates::Rates;
use crate::store;
use crate::store::events::{Chained, CopyRows, EventData, NewEvent, StoredEvent};
use crate::store::idempotency::StoredResponse;
use crate::versions::{self, Announcements, Announcing, Reads, VersionReads};

/// How many times a command without an expected version is decided again
/// after another process appended first.
pub const MAX_ATTEMPTS: usize = 5;

/// Events read per query when a cached table is brought up to date.
const REFRESH_PAGE: i64 = 500;

/// Rows handed at once to the parsing thread of a cold load.
const LOAD_BATCH: usize = 1024;

/// Recent events kept per cached table, for the long polls.
const TAIL_LEN: usize = 256;

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
    writer: LogWriter,
    versions: VersionReads,
    announcements: Announcements,
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
    events.iter().map(NewEvent::sealed).collect()
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

/// A stored event as a seat (or a spectator) may see it, as the public
/// `{seq, type, v, at, data, prev_hash, hash}`: whole, or with its hidden
/// fields and its salt left out (the engine decides, see
/// `domain::redaction`); the hashes stay those of the stored data.
pub fn redact(e: &StoredEvent, viewer: Option<usize>) -> Result<StoredEvent, ApiError> {
    Ok(redact_parsed(e, &parse_event(e)?, viewer))
}

/// [`redact`] of an event already parsed.
pub fn redact_parsed(e: &StoredEvent, event: &TableEvent, viewer: Option<usize>) -> StoredEvent {
    StoredEvent {
        seq: e.seq,
        kind: e.kind.clone(),
        v: e.v,
        at: e.at,
        data: match event.seen_by(viewer) {
            Seen::Whole => e.data.clone(),
            Seen::Part(data) => data,
        },
        prev_hash: e.prev_hash.clone(),
        hash: e.hash.clone(),
    }
}

/// A recent event as stored, with its parsed form (to redact it without
/// parsing it again).
#[derive(Debug)]
struct Recent {
    stored: StoredEvent,
    event: TableEvent,
}

/// A cached table and what this process knows of the end of its log.
#[derive(Debug)]
struct Entry {
    loaded: Loaded,
    /// The hash of the event at the table's version, when known (the chain
    /// head the next append links to).
    head_hash: Option<String>,
    /// The last events (at most [`TAIL_LEN`]) up to the table's version,
    /// in order and without gaps: the long polls are answered from here.
    tail: VecDeque<Arc<Recent>>,
    /// The [`TableEvents`] epoch in which the log was last read; `None`
    /// when the next use must read it.
    synced: Option<u64>,
    /// Set while a command's events are in the table but not yet known to
    /// be stored. Should the command's future be dropped meanwhile (its
    /// request cancelled, its worker stopping), the entry stays so, and
    /// the next use reads the table from the log again instead of serving
    /// events that may never have been written.
    in_doubt: bool,
}

impl Entry {
    /// A table just folded from its log, or just created.
    fn new(loaded: Loaded) -> Self {
        Self {
            loaded,
            head_hash: None,
            tail: VecDeque::new(),
            synced: None,
            in_doubt: false,
        }
    }

    fn version(&self) -> i64 {
        self.loaded.version()
    }

    fn push(&mut self, stored: StoredEvent, event: TableEvent) {
        if self.tail.len() == TAIL_LEN {
            self.tail.pop_front();
        }
        self.head_hash = Some(stored.hash.clone());
        self.tail.push_back(Arc::new(Recent { stored, event }));
    }
}

type Slot = Arc<Mutex<Option<Entry>>>;

/// Parses and folds a log's rows, batch after batch (see
/// [`TableService::load`]); `None` for no event at all.
fn fold_batches(
    batches: &mut tokio::sync::mpsc::Receiver<Vec<EventData>>,
) -> Result<Option<Table>, ApiError> {
    let mut table: Option<Table> = None;
    let mut expected = 1;
    while let Some(batch) = batches.blocking_recv() {
        for e in batch {
            if e.seq != expected {
                return Err(corrupt(format!("seq {} after {}", e.seq, expected - 1)));
            }
            expected += 1;
            let event = TableEvent::parse(&e.kind, &e.data)
                .map_err(|err| corrupt(format!("event {} ({}): {err}", e.seq, e.kind)))?;
            match table.as_mut() {
                Some(t) => t.evolve(&event),
                None => {
                    table = Some(
                        Table::from_events([&event])
                            .ok_or_else(|| corrupt("the log does not begin with table_created"))?,
                    )
                }
            }
        }
    }
    Ok(table)
}

impl TableService {
    pub fn new(pool: PgPool) -> Self {
        Self {
            writer: LogWriter::new(&pool),
            versions: Reads::batcher(&pool),
            announcements: Announcing::batcher(&pool),
            pool,
            cache: Arc::default(),
        }
    }

    /// Has [`store::events::announce`] tell every process that `table_id`
    /// is at `version`, once committed (with the versions committed
    /// meanwhile, see [`crate::versions`]); nobody waits for it.
    fn announce(&self, table_id: Uuid, version: i64) {
        self.announcements.tell((table_id, version));
    }

    fn slot(&self, table_id: Uuid) -> Slot {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() > CACHE_SOFT_LIMIT {
            cache.retain(|_, slot| Arc::strong_count(slot) > 1);
        }
        cache.entry(table_id).or_default().clone()
    }

    /// Brings a cached table up to date (see the module documentation):
    /// nothing to read when `hub` has heard of no newer version since the
    /// last read and the cache is at `min_version` at least (a version the
    /// caller has seen elsewhere); else the events after the cached version
    /// (all of them on the table's first use in this process).
    async fn refresh<'s>(
        &self,
        table_id: Uuid,
        slot: &'s mut Option<Entry>,
        hub: Option<&TableEvents>,
        min_version: i64,
    ) -> Result<&'s mut Entry, ApiError> {
        if slot.as_ref().is_some_and(|e| e.in_doubt) {
            tracing::info!(%table_id, "a command was dropped while its events were written; reading the log again");
            *slot = None;
        }
        // Taken before reading: a commit heard after this moves `heard`.
        let heard = hub.and_then(|h| h.heard(table_id));
        let current = match (slot.as_ref(), heard) {
            (Some(entry), Some((epoch, version))) => {
                entry.synced == Some(epoch)
                    && version <= entry.version()
                    && min_version <= entry.version()
            }
            _ => false,
        };
        if !current {
            match slot.as_mut() {
                None => *slot = Some(self.load(table_id).await?),
                Some(entry) => self.catch_up(table_id, entry).await?,
            }
        }
        let entry = slot.as_mut().expect("loaded above");
        if !current {
            entry.synced = heard.map(|(epoch, _)| epoch);
        }
        Ok(entry)
    }

    /// Folds a table's whole log (its first use in this process): one
    /// binary `COPY` of seq, type and data text, its rows handed in batches
    /// to a blocking thread that parses and folds them, so that PostgreSQL
    /// producing the rows, this task receiving them and the parsing overlap.
    async fn load(&self, table_id: Uuid) -> Result<Entry, ApiError> {
        let row = store::tables::get(&self.pool, table_id)
            .await?
            .ok_or_else(not_found)?;
        let (batches, mut received) = tokio::sync::mpsc::channel::<Vec<EventData>>(4);
        let folder = tokio::task::spawn_blocking(move || fold_batches(&mut received));
        let read = async {
            let mut conn = self.pool.acquire().await?;
            let mut chunks = store::events::copy_data_after(&mut conn, table_id, 0).await?;
            let mut rows = CopyRows::default();
            let mut batch = Vec::with_capacity(LOAD_BATCH);
            let mut folding = true;
            while let Some(chunk) = chunks.try_next().await? {
                rows.feed(&chunk, &mut batch).map_err(corrupt)?;
                if batch.len() >= LOAD_BATCH && folding {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(LOAD_BATCH));
                    // Once the folder stopped on a bad event (its error
                    // tells), the copy is read to its end all the same.
                    folding = batches.send(full).await.is_ok();
                }
                if !folding {
                    batch.clear();
                }
            }
            if !rows.ended() {
                return Err(corrupt("the copied log is cut short"));
            }
            if !batch.is_empty() && folding {
                let _ = batches.send(batch).await;
            }
            Ok::<_, ApiError>(())
        }
        .await;
        drop(batches);
        let folded = folder.await.map_err(ApiError::internal)?;
        read?;
        let table = folded?.ok_or_else(not_found)?;
        Ok(Entry::new(Loaded {
            table,
            created_by: row.created_by,
            created_at: row.created_at,
        }))
    }

    /// Reads and folds the events after the cached version (whole, with
    /// their hashes: they join the tail).
    async fn catch_up(&self, table_id: Uuid, entry: &mut Entry) -> Result<(), ApiError> {
        loop {
            let after = entry.version();
            let page = store::events::read_after(&self.pool, table_id, after, REFRESH_PAGE).await?;
            let count = page.len() as i64;
            for (i, e) in page.into_iter().enumerate() {
                if e.seq != after + 1 + i as i64 {
                    return Err(corrupt(format!("seq {} after {}", e.seq, after + i as i64)));
                }
                let event = parse_event(&e)?;
                entry.loaded.table.evolve(&event);
                entry.push(e, event);
            }
            if count < REFRESH_PAGE {
                return Ok(());
            }
        }
    }

    /// Runs `f` on the up-to-date table (404 when there is none), read from
    /// the log.
    pub async fn read<R>(
        &self,
        table_id: Uuid,
        f: impl FnOnce(&Loaded) -> R,
    ) -> Result<R, ApiError> {
        self.read_with(None, table_id, 0, f).await
    }

    /// Like [`TableService::read`]; with `hub`, without reading the log when
    /// nothing newer than the cache was heard of and the cache is at
    /// `min_version` and at the table's stored version at least.
    pub async fn read_with<R>(
        &self,
        hub: Option<&TableEvents>,
        table_id: Uuid,
        min_version: i64,
        f: impl FnOnce(&Loaded) -> R,
    ) -> Result<R, ApiError> {
        // A read is never older than the last commit, whichever process made
        // it (a client moving through one process and reading through
        // another sees its move): one indexed read of the table's version
        // (with the reads asked for meanwhile, see `crate::versions`), and
        // the log only when the cache is behind it.
        let min_version = match hub {
            Some(_) => versions::stored_version(&self.versions, table_id)
                .await?
                .map_or(min_version, |v| v.max(min_version)),
            None => min_version,
        };
        let slot = self.slot(table_id);
        let mut guard = slot.lock().await;
        let entry = self.refresh(table_id, &mut guard, hub, min_version).await?;
        Ok(f(&entry.loaded))
    }

    /// Opens a table: its projection row, `table_created` and the creator's
    /// `player_joined` at seat 0, in one transaction.
    #[tracing::instrument(skip(self, options))]
    /// Creates a table; a valid request counts against `creator`'s table
    /// rate (an invalid one is refused first and costs nothing).
    pub async fn create(
        &self,
        rates: &Rates,
        creator: Uuid,
        username: &str,
        ruleset: &str,
        options: &Map<String, Value>,
        seats: usize,
    ) -> Result<(Uuid, Loaded), ApiError> {
        let events = Table::create(ruleset, options, seats, &creator.to_string(), username)
            .map_err(table_error)?;
        rates.table(creator)?;
        let table = Table::from_events(&events).ok_or_else(|| corrupt("no table_created"))?;
        let id = Uuid::new_v4();
        let seats = i32::try_from(seats).map_err(ApiError::internal)?;
        let mut tx = self.pool.begin().await?;
        store::tables::insert_with_seats(&mut *tx, id, &table.ruleset, seats, creator).await?;
        let stored = store::events::append_chained(
            &mut tx,
            id,
            0,
            GENESIS_PREV_HASH,
            &new_events(&events),
            Some(status_str(table.status())),
        )
        .await?;
        project_players(&mut tx, id, &events).await?;
        tx.commit().await?;
        self.announce(id, stored.len() as i64);
        let row = store::tables::get(&self.pool, id)
            .await?
            .ok_or_else(not_found)?;
        let loaded = Loaded {
            table,
            created_by: row.created_by,
            created_at: row.created_at,
        };
        let mut entry = Entry::new(loaded.clone());
        for (s, e) in stored.into_iter().zip(events) {
            entry.push(s, e);
        }
        *self.slot(id).lock().await = Some(entry);
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

    /// [`TableService::act_with`] without a hub: the log is read before
    /// deciding.
    pub async fn act<R: serde::Serialize>(
        &self,
        table_id: Uuid,
        command: &TableCommand,
        expected_version: Option<i64>,
        idempotency: Option<(Uuid, &Idempotency)>,
        answer: impl Fn(&Loaded, &[StoredEvent], &[TableEvent]) -> Result<R, ApiError>,
    ) -> Result<Acted<R>, ApiError> {
        self.act_with(
            None,
            table_id,
            command,
            expected_version,
            idempotency,
            answer,
        )
        .await
    }

    /// Decides `command` on the up-to-date table and appends its events (see
    /// the module documentation). `answer` builds the response from the table
    /// after the events, the stored events and the same events parsed (to
    /// redact them without parsing them again); with an idempotency key, it is
    /// saved (as a 200) in the same transaction. With `hub`, the log is not
    /// read first when nothing newer than the cache was heard of (a stale
    /// cache then fails the append, which reads the log and decides again),
    /// and the long polls of this process are woken at once.
    #[tracing::instrument(skip(self, hub, command, idempotency, answer), fields(command = ?command))]
    pub async fn act_with<R: serde::Serialize>(
        &self,
        hub: Option<&TableEvents>,
        table_id: Uuid,
        command: &TableCommand,
        expected_version: Option<i64>,
        idempotency: Option<(Uuid, &Idempotency)>,
        answer: impl Fn(&Loaded, &[StoredEvent], &[TableEvent]) -> Result<R, ApiError>,
    ) -> Result<Acted<R>, ApiError> {
        let slot = self.slot(table_id);
        let mut guard = slot.lock().await;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let entry = self
                .refresh(table_id, &mut guard, hub, expected_version.unwrap_or(0))
                .await?;
            let version = entry.version();
            if let Some(expected) = expected_version {
                if expected != version {
                    return Err(ApiError::VersionConflict { expected });
                }
            }
            let prev_hash = match (&entry.head_hash, version) {
                (Some(hash), _) => Some(hash.clone()),
                (None, 0) => Some(GENESIS_PREV_HASH.to_owned()),
                (None, _) => store::events::head_hash(&self.pool, table_id, version).await?,
            };
            // The cached table decides and takes the events at once (a
            // refused command changes nothing), without a copy of the whole
            // game, its past rounds included; should the events not be
            // stored, the table is read again from the log.
            let before = entry.loaded.table.status();
            // In doubt from before `execute`: a panic inside leaves it so.
            entry.in_doubt = true;
            // The thread's generator: a CSPRNG seeded from the OS (as
            // `StdRng::from_entropy` was), without a system call per move.
            let events = entry
                .loaded
                .table
                .execute(command, &mut rand::thread_rng())
                .map_err(|refused| {
                    entry.in_doubt = false;
                    table_error(refused)
                })?;
            let after = entry.loaded.table.status();
            let status = (after != before).then(|| status_str(after));
            // Plain moves without a key are one statement, committed on its
            // own, by the log writer with the moves of other tables; the
            // lobby's seats and the idempotent answers go with the events in
            // one transaction. Every failure (even to get a connection) goes
            // through the match below, which drops the cache that took the
            // events.
            let lobby = events.iter().any(|e| !matches!(e, TableEvent::Game(_)));
            let mut tx = None;
            let appended = async {
                let prev = prev_hash.ok_or(ApiError::VersionConflict { expected: version })?;
                let new = new_events(&events);
                if idempotency.is_none() && !lobby {
                    let chained = Chained::new(table_id, version, &prev, new, status);
                    return self.writer.append(chained).await;
                }
                let tx = tx.insert(self.pool.begin().await?);
                store::events::append_chained(tx, table_id, version, &prev, &new, status).await
            }
            .await;
            let stored = match appended {
                Ok(stored) => stored,
                Err(ApiError::VersionConflict { .. }) => {
                    // Another process appended first: read the log again.
                    *guard = None;
                    if expected_version.is_none() && attempt < MAX_ATTEMPTS {
                        tracing::info!(attempt, "another writer appended first; deciding again");
                        continue;
                    }
                    return Err(ApiError::VersionConflict {
                        expected: expected_version.unwrap_or(version),
                    });
                }
                Err(e) => {
                    // Perhaps stored, perhaps not: read the log next time.
                    *guard = None;
                    return Err(e);
                }
            };
            let result = async {
                let answer = answer(&entry.loaded, &stored, &events)?;
                if let Some(mut tx) = tx {
                    project_players(&mut tx, table_id, &events).await?;
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
                }
                Ok(answer)
            }
            .await;
            return match result {
                Ok(answer) => {
                    for (s, e) in stored.iter().cloned().zip(events) {
                        entry.push(s, e);
                    }
                    entry.in_doubt = false;
                    // Noted before it is announced, so that hearing the
                    // announcement back wakes nobody again.
                    if let Some(hub) = hub {
                        hub.committed(table_id, entry.version());
                    }
                    self.announce(table_id, entry.version());
                    Ok(Acted { stored, answer })
                }
                Err(e) => {
                    // Not committed (or unknown): read the log next time.
                    *guard = None;
                    Err(e)
                }
            };
        }
    }

    /// Runs `f` on the table once `unchanged` is false of it (a long poll of
    /// the view): at once when the cache is past it, else as soon as a
    /// commit is heard (from any process, as in [`Self::poll_events`]) that
    /// makes it so, until `deadline`. `seen` is a version the caller has
    /// seen: the table is never read older. `None` when nothing changed by
    /// the deadline; the caller then reads the table as usual, which checks
    /// its stored version (a notification can be lost).
    pub async fn read_when<R>(
        &self,
        hub: &TableEvents,
        table_id: Uuid,
        seen: i64,
        deadline: Instant,
        unchanged: impl Fn(&Loaded) -> bool,
        f: impl FnOnce(&Loaded) -> R,
    ) -> Result<Option<R>, ApiError> {
        // Subscribe before reading, so a commit in between is not missed.
        let mut rx = hub.subscribe(table_id);
        loop {
            {
                let slot = self.slot(table_id);
                let mut guard = slot.lock().await;
                let entry = self.refresh(table_id, &mut guard, Some(hub), seen).await?;
                if !unchanged(&entry.loaded) {
                    return Ok(Some(f(&entry.loaded)));
                }
            }
            if !hub.wait(&mut rx, deadline).await {
                return Ok(None);
            }
        }
    }

    /// The events after `after` (at most `limit`) as `account_id` may see
    /// them. With none yet, waits until `deadline` for one to be committed
    /// (by any process: `hub` hears PostgreSQL's notifications), without
    /// polling the database in between. 404 when the table does not exist.
    /// Recent events come from the cache, older ones from the log.
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
        loop {
            let page = self
                .events_after(hub, table_id, account_id, after, limit, false)
                .await?;
            let Some(deadline) = deadline.filter(|_| page.is_empty()) else {
                return Ok(page);
            };
            if !hub.wait(&mut rx, deadline).await {
                // Nothing heard: check the log's version all the same (a
                // notification can be lost).
                return self
                    .events_after(hub, table_id, account_id, after, limit, true)
                    .await;
            }
        }
    }

    /// The events after `after` (at most `limit`) as `account_id` may see
    /// them now, without waiting: from the cache when it holds them and is
    /// current (by what `hub` heard; with `verify`, also by the table's
    /// stored version, one indexed read), else from the log.
    pub async fn events_after(
        &self,
        hub: &TableEvents,
        table_id: Uuid,
        account_id: Uuid,
        after: i64,
        limit: i64,
        verify: bool,
    ) -> Result<Vec<StoredEvent>, ApiError> {
        let min_version = if verify {
            versions::stored_version(&self.versions, table_id)
                .await?
                .map_or(after, |v| v.max(after))
        } else {
            after
        };
        let slot = self.slot(table_id);
        let mut guard = slot.lock().await;
        let entry = self
            .refresh(table_id, &mut guard, Some(hub), min_version)
            .await?;
        // The cache is at least as recent as the page: the caller's seat is
        // the one the page's game events use.
        let seat = entry.loaded.seat_of(account_id);
        let version = entry.version();
        let cached_from = version - entry.tail.len() as i64;
        if after >= version {
            return Ok(Vec::new());
        }
        if after >= cached_from {
            return Ok(entry
                .tail
                .iter()
                .skip((after - cached_from) as usize)
                .take(usize::try_from(limit).unwrap_or(0))
                .map(|r| redact_parsed(&r.stored, &r.event, seat))
                .collect());
        }
        drop(guard);
        let page = store::events::read_after(&self.pool, table_id, after, limit).await?;
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
