//! The table service, between the handlers and the store: it loads tables,
//! decides commands with the engine, appends their events and keeps the
//! projections in step. One per process, shared by every worker; it owns
//! the process's [`CommitHub`], so every read and every command follows one
//! freshness rule.
//!
//! - `cache`: the folded tables of this process, their cold load, and how a
//!   cached table is brought up to date;
//! - `commands`: creating a table and acting on one (the write path), a
//!   game's end rated with it ([`crate::ratings`]);
//! - `projections`: what lobby events keep in step in their transaction
//!   (who sits where, quick play's open tables, bots and their caps);
//! - `lobby`: finding a game (quick play, invitations, the rematch), and
//!   what holds across processes there;
//! - `reads`: reads, listing, and the one loop of long polls and streams
//!   (subscribe, read, wait for a commit: [`TableService::wait_for`]).
//!
//! How a move travels from the handler to every process: the map of
//! [`crate`].
//!
//! # The cache
//! Each process keeps the folded [`Table`] of every table it served, behind a
//! per-table `tokio::sync::Mutex`, so commands on one table are serialized in
//! this process, with the hash of its last event and its last events
//! (parsed). Only the first use of a table in a process folds its whole log
//! (one streamed query).
//!
//! Before a use the cache must be current: another process may have
//! appended. Nothing is read when the hub has heard of no version above the
//! cached one since the log was last read, in the same listener epoch, and
//! the caller has seen no newer version (`min_version`: an
//! `expected_version`, an `after`, an `ETag`); else the events after the
//! cached version are read (one small query). A hub without a listener
//! hears nothing: its service reads the log before every use. Every commit
//! notifies `'<table>:<version>'`, so a long poll served this way lags a
//! commit of another process by the notification's delivery
//! (milliseconds), never more: a lost listener connection moves the epoch
//! and the log is read again. A read ([`TableService::read`]) also reads the
//! table's version (one indexed row), so it is never older than the last
//! commit of any process. Commands stay exact whatever the lag: see below.
//!
//! # Acting
//! [`TableService::act`]: lock, refresh, check the client's expected version
//! (stale: 409 `version_conflict`, nothing appended), decide with a fresh
//! OS-seeded rng (every random draw is recorded in the events), then append
//! the events at the table's version, chained to the cached head hash, in
//! ONE statement that also moves `game_tables` (version, status)
//! ([`Log::append`]); once committed, the new version is announced to every
//! process ([`Log::committed`], a NOTIFY of its own so that moves of
//! different tables still commit together, sent by a task that nobody
//! waits for). A plain move without an `Idempotency-Key` is
//! [`Durability::Batched`](crate::log::Durability): a statement committed
//! by itself, shared with the plain moves of other tables queued meanwhile;
//! lobby events (seats to project) and idempotent answers go with it in one
//! transaction. The command is
//! decided on the cached table, which takes its events at once
//! (`Table::execute`: no copy of the game; the status to project depends on
//! them) and is dropped, to be read again from the log, when they are not
//! committed: until they are, it is held by an `Uncommitted` guard whose
//! `Drop` evicts it, so that a command that fails, or whose future is
//! dropped half-way, leaves a table the next use reads again. The statement
//! writes only when `game_tables.version` is the version decided on, and the
//! events' primary key `(table_id, seq)` refuses any duplicate: when another
//! process appended first (or the cache was stale), the append fails with a
//! conflict and nothing is written; without a client version the log is read
//! and the command decided again (a few times), with one the client gets
//! 409. A refused command appends nothing.
//!
//! The server's move for a seat ([`TableService::play_for`]) is decided
//! first, on a copy of the table outside its lock and within the search
//! budget ([`crate::searches`]), then appended the same way at the version
//! it was decided on.

mod cache;
mod commands;
mod feeds;
mod lobby;
mod names;
mod projections;
mod reads;

pub use commands::Opening;
pub use lobby::quickplay_key;
pub use names::{Names, Shown};
pub use projections::BotCaps;
pub use reads::{Mine, Subscription};

use std::sync::{Arc, Mutex as StdMutex};

use crate::pruned::Pruned;

use chrono::{DateTime, Utc};
use domain::table::Newcomer;
use domain::{ClientSeed, PlayerId, Seen, Table, TableEvent};
use sqlx::PgPool;
use tokio::sync::Mutex;
use uuid::Uuid;

use crate::dealer;
use crate::log::hub::CommitHub;
use crate::log::versions::{Reads, VersionReads};
use crate::log::Log;
use crate::metric_names::TABLES_CACHED;
use crate::searches::SearchBudget;
use crate::service_error::ServiceError;
use store::feed::Outbox;
use store::{NewEvent, StoredEvent};

use cache::{Slot, CACHE_SOFT_LIMIT};

/// How many times a command without an expected version is decided again
/// after another process appended first.
pub const MAX_ATTEMPTS: usize = 5;

/// A table as this process knows it.
#[derive(Debug, Clone)]
pub struct CachedTable {
    pub table: Table,
    pub created_by: Uuid,
    pub created_at: DateTime<Utc>,
    /// When the server must next act on the table by itself (a turn's
    /// deadline, an away seat's move): `game_tables.due_at`.
    pub due_at: Option<DateTime<Utc>>,
    /// Who its persons are called now (see `names`).
    pub names: Names,
    /// The view frames of this version already made (see
    /// [`CachedTable::shared_frame`]).
    pub frames: SharedFrames,
}

/// A view's stream frame depends on the table and the seat it is seen from
/// alone: made once per version and seat (a spectator's once for every
/// spectator), the same bytes go to every stream that shows it. A copy of
/// the table starts with none.
#[derive(Default)]
pub struct SharedFrames(StdMutex<Frames>);

#[derive(Default)]
struct Frames {
    /// What the frames below are of: the version, and its `due_at`.
    of: Option<(i64, Option<DateTime<Utc>>)>,
    by_seat: Vec<(Option<usize>, bytes::Bytes)>,
}

impl Clone for SharedFrames {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for SharedFrames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedFrames")
    }
}

impl CachedTable {
    /// The table as first cached.
    pub fn new(
        table: Table,
        created_by: Uuid,
        created_at: DateTime<Utc>,
        due_at: Option<DateTime<Utc>>,
    ) -> Self {
        Self {
            table,
            created_by,
            created_at,
            due_at,
            names: Names::default(),
            frames: SharedFrames::default(),
        }
    }

    /// Shows the table with `names` from now on (the frames made with
    /// other names are made again).
    pub fn set_names(&mut self, names: Names) {
        if names != self.names {
            self.names = names;
            self.frames = SharedFrames::default();
        }
    }

    /// How `seated` is shown now.
    pub fn shown<'a>(&'a self, seated: &'a domain::Seated) -> Shown<'a> {
        self.names.of(seated)
    }

    /// The frame of the view from `seat` (`None`: a spectator's) at this
    /// version: `make`'s the first time it is asked for, the same bytes
    /// after that.
    pub fn shared_frame(
        &self,
        seat: Option<usize>,
        make: impl FnOnce() -> bytes::Bytes,
    ) -> bytes::Bytes {
        let mut frames = self.frames.0.lock().unwrap_or_else(|e| e.into_inner());
        let of = Some((self.version(), self.due_at));
        if frames.of != of {
            frames.of = of;
            frames.by_seat.clear();
        }
        if let Some((_, frame)) = frames.by_seat.iter().find(|(s, _)| *s == seat) {
            return frame.clone();
        }
        let frame = make();
        frames.by_seat.push((seat, frame.clone()));
        frame
    }

    pub fn version(&self) -> i64 {
        self.table.version as i64
    }

    /// The seat of an account in this table (in the game once started).
    pub fn seat_of(&self, account_id: Uuid) -> Option<usize> {
        self.table.seat_of(&player_id(account_id))
    }
}

/// Who sits down: an account, whether it is a guest's (its seat says so in
/// the log: a game with a guest is not rated, D43), and the seed they bring
/// to the shuffles (docs/API.md "Fair deals").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub id: Uuid,
    pub guest: bool,
    pub client_seed: Option<ClientSeed>,
}

impl Person {
    /// The same person, bringing `client_seed` (if they sent one).
    pub fn bringing(self, client_seed: Option<ClientSeed>) -> Person {
        Person {
            client_seed,
            ..self
        }
    }

    /// As the engine seats them: with their seed, or one the server draws.
    pub(crate) fn newcomer(&self) -> Newcomer {
        Newcomer {
            account_id: player_id(self.id),
            guest: self.guest,
            client_seed: Some(self.client_seed.clone().unwrap_or_else(dealer::client_seed)),
        }
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
    cache: Held<Uuid, Mutex<Option<cache::Entry>>>,
    log: Log,
    versions: VersionReads,
    /// How long after the table moved the server plays an away, resigned
    /// or bot seat (`HUIT_BOT_DELAY_MS`), so that people can follow.
    bot_delay: std::time::Duration,
    /// The budget of bot searches (see [`crate::searches`]).
    searches: SearchBudget,
    /// The most bots one account runs at once.
    bot_caps: BotCaps,
    /// Quick play's callers of one settings take turns in this process,
    /// one queue per settings key (see `lobby`).
    quickplay_turns: Held<String, Mutex<()>>,
}

fn not_found() -> ServiceError {
    ServiceError::NotFound("no such table".into())
}

fn corrupt(what: impl std::fmt::Display) -> ServiceError {
    ServiceError::internal(format!("unreadable event log: {what}"))
}

fn new_events(events: &[TableEvent]) -> Vec<NewEvent> {
    events.iter().map(NewEvent::sealed).collect()
}

fn account_uuid(id: &PlayerId) -> Result<Uuid, ServiceError> {
    id.as_str()
        .parse()
        .map_err(|_| ServiceError::internal(format!("account id {id:?} is not a UUID")))
}

/// An account as the engine knows its players.
pub fn player_id(account_id: Uuid) -> PlayerId {
    PlayerId::from(account_id.to_string())
}

/// Parses a stored event back into the engine's.
pub fn parse_event(e: &StoredEvent) -> Result<TableEvent, ServiceError> {
    e.event().map_err(|err| corrupt_event(e.seq, &e.kind, err))
}

/// A stored event that does not read or fold.
fn corrupt_event(seq: i64, kind: &str, err: impl std::fmt::Display) -> ServiceError {
    corrupt(format!("event {seq} ({kind}): {err}"))
}

/// A stored event as a seat (or a spectator) may see it, as the public
/// `{seq, type, v, at, data, prev_hash, hash}`: whole, or with its hidden
/// fields and its salt left out (the engine decides, see
/// `domain::redaction`); the hashes stay those of the stored data.
pub fn redact(e: &StoredEvent, viewer: Option<usize>) -> Result<StoredEvent, ServiceError> {
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

impl TableService {
    /// Its gauge, at a scrape: the tables cached in this process now.
    pub fn gauge(&self) {
        metrics::gauge!(TABLES_CACHED).set(self.cache.len() as f64);
    }

    /// The service of a process whose commits `hub` hears (with a hub
    /// without a listener, [`CommitHub::new`], every use reads the log).
    pub fn new(pool: PgPool, hub: CommitHub) -> Self {
        Self {
            log: Log::new(&pool, hub, Outbox::OFF),
            versions: Reads::batcher(&pool),
            pool,
            cache: Held::new(CACHE_SOFT_LIMIT),
            bot_delay: std::time::Duration::ZERO,
            searches: SearchBudget::new(SearchBudget::default_threads()),
            bot_caps: BotCaps::default(),
            quickplay_turns: Held::new(lobby::TURNS_SOFT_LIMIT),
        }
    }

    /// The same service, its feed items written to the webhooks' outbox
    /// too as `outbox` says.
    pub fn with_outbox(self, outbox: Outbox) -> Self {
        Self {
            log: Log::new(&self.pool, self.log.hub().clone(), outbox),
            ..self
        }
    }

    /// The same service, playing the seats nobody present holds `delay`
    /// after the table moved.
    pub fn with_bot_delay(self, delay: std::time::Duration) -> Self {
        Self {
            bot_delay: delay,
            ..self
        }
    }

    /// The same service, letting one account run at most `caps` bots.
    pub fn with_bot_caps(self, caps: BotCaps) -> Self {
        Self {
            bot_caps: caps,
            ..self
        }
    }

    /// The same service, running at most `threads` bot searches at once.
    pub fn with_search_threads(self, threads: usize) -> Self {
        Self {
            searches: SearchBudget::new(threads),
            ..self
        }
    }

    /// The log this service appends to (and announces through).
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// The hub that wakes this process's long polls and streams.
    pub fn hub(&self) -> &CommitHub {
        self.log.hub()
    }

    fn slot(&self, table_id: Uuid) -> Slot {
        self.cache.of(table_id)
    }

    /// Keeps `table_id` in this process's cache for as long as the answer
    /// lives: what a stream following the table holds, so that the tables
    /// of idle streams are not dropped past the cache's soft limit and
    /// read again from their logs at each keep-alive.
    pub fn keep_cached(&self, table_id: Uuid) -> KeptCached {
        KeptCached {
            _slot: self.slot(table_id),
        }
    }
}

/// A table kept in the cache ([`TableService::keep_cached`]).
#[derive(Debug)]
pub struct KeptCached {
    _slot: Slot,
}

/// Entries shared by key (made when first asked for), for as long as
/// someone holds them: past `soft_limit` keys (then past twice those kept
/// by the last pruning), those nobody holds are dropped before the next is
/// made. The tables' cache slots, quick play's queues.
#[derive(Debug)]
struct Held<K, T> {
    entries: Arc<StdMutex<Pruned<K, Arc<T>>>>,
}

impl<K, T> Clone for Held<K, T> {
    fn clone(&self) -> Self {
        Self {
            entries: self.entries.clone(),
        }
    }
}

impl<K: std::hash::Hash + Eq, T: Default> Held<K, T> {
    fn new(soft_limit: usize) -> Self {
        Self {
            entries: Arc::new(StdMutex::new(Pruned::new(soft_limit))),
        }
    }

    /// The entry of `key`.
    fn of(&self, key: K) -> Arc<T> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.prune(|_, entry| Arc::strong_count(entry) > 1);
        entries.entry(key).or_default().clone()
    }

    fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

#[cfg(test)]
mod held_tests {
    use super::Held;
    use std::sync::Arc;

    #[test]
    fn entries_someone_holds_stay_and_the_others_go_only_when_the_keys_doubled() {
        let held: Held<u32, ()> = Held::new(4);
        // Four held (a stream follows each), one not.
        let kept: Vec<Arc<()>> = (0..4).map(|k| held.of(k)).collect();
        held.of(100);
        assert_eq!(held.len(), 5);
        // Past the soft limit: the one nobody holds goes, the held stay,
        // and the next pruning waits for twice the keys kept.
        held.of(101);
        assert_eq!(held.len(), 5, "100 dropped, 101 made");
        for k in 102..106 {
            held.of(k);
        }
        assert_eq!(held.len(), 9, "no pruning up to twice the 4 kept");
        held.of(106);
        assert_eq!(held.len(), 5, "the four held and the new one");
        assert!(kept.iter().all(|k| Arc::strong_count(k) == 2));
    }
}
