//! Creating a table and acting on one: the write path (see the parent
//! module's "How a move travels" and "Acting").

use std::time::Duration;

use domain::bots::Level;
use domain::{Clock, Table, TableCommand, TableEvent};
use serde_json::{Map, Value};
use sqlx::PgConnection;
use uuid::Uuid;

use super::cache::Entry;
use super::{
    account_uuid, corrupt, new_events, not_found, player_id, Acted, CachedTable, Idempotency,
    TableService, MAX_ATTEMPTS,
};
use crate::chain::GENESIS_PREV_HASH;
use crate::error::{ApiError, ProblemCode};
use crate::metrics;
use crate::rates::Rates;
use crate::searches::Searched;
use crate::store;
use crate::store::events::{ChainedAppend, StoredEvent};
use crate::store::idempotency::StoredResponse;

/// The most bots one account runs at once (docs/API.md "Keeping tables
/// moving"): tables with a `strong` bot, and bots in all, over its tables
/// that are playing (and the one it fills or starts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BotCaps {
    pub strong_tables: i64,
    pub bots: i64,
}

impl Default for BotCaps {
    fn default() -> Self {
        Self {
            strong_tables: 4,
            bots: 8,
        }
    }
}

/// What a client refused for its bots is told to wait: a game lasts minutes.
const BOTS_RETRY_AFTER: Duration = Duration::from_secs(60);

impl TableService {
    /// Keeps the projections in step with lobby events, on the appending
    /// transaction: `table_players` (the accounts seated, for listings) and
    /// the bots a table seats; when the events seat a bot or start a game
    /// with bots, the creator's bots are counted against [`BotCaps`].
    async fn project(
        &self,
        conn: &mut PgConnection,
        table_id: Uuid,
        created_by: Uuid,
        events: &[TableEvent],
    ) -> Result<(), ApiError> {
        let mut bots_running = false;
        for e in events {
            match e {
                TableEvent::PlayerJoined(s) => {
                    let account = account_uuid(&s.account_id)?;
                    store::players::insert(conn, table_id, account, s.seat as i32).await?;
                }
                TableEvent::PlayerLeft { seat } => {
                    store::players::remove_seat(conn, table_id, *seat as i32).await?;
                }
                TableEvent::GameStarted { players } => {
                    store::players::clear(conn, table_id).await?;
                    // The projection lists accounts; a bot seat has none.
                    for s in players.iter().filter(|s| s.bot.is_none()) {
                        let account = account_uuid(&s.account_id)?;
                        store::players::insert(conn, table_id, account, s.seat as i32).await?;
                    }
                    bots_running |= players.iter().any(|s| s.bot.is_some());
                }
                TableEvent::BotSeated { level, .. } => {
                    store::tables::add_bot(conn, table_id, *level == Level::Strong).await?;
                    bots_running = true;
                }
                _ => {}
            }
        }
        if !bots_running {
            return Ok(());
        }
        let caps = self.bot_caps;
        let (strong_tables, bots) = store::tables::running_bots(conn, created_by, table_id).await?;
        if strong_tables > caps.strong_tables || bots > caps.bots {
            return Err(ApiError::TooManyRequests {
                code: ProblemCode::TooManyBots,
                detail: format!(
                    "an account runs at most {} bots, and {} tables with a strong bot, at once \
                     (this would make {bots} bots, {strong_tables} tables with a strong bot)",
                    caps.bots, caps.strong_tables
                ),
                retry_after_secs: BOTS_RETRY_AFTER.as_secs(),
            });
        }
        Ok(())
    }
}

/// What a new table is opened with.
#[derive(Debug, Clone, Copy)]
pub struct Opening<'a> {
    pub ruleset: &'a str,
    pub options: &'a Map<String, Value>,
    pub seats: usize,
    pub clock: Option<Clock>,
    /// Bots that take the seats after the creator's, in order.
    pub bots: &'a [Level],
}

impl TableService {
    /// Opens a table: its projection row, `table_created` and the creator's
    /// `player_joined` at seat 0, in one transaction. A valid request counts
    /// against `creator`'s table rate (an invalid one is refused first and
    /// costs nothing).
    #[tracing::instrument(skip(self, rates, opening), fields(ruleset = opening.ruleset))]
    pub async fn create(
        &self,
        rates: &Rates,
        creator: Uuid,
        username: &str,
        opening: Opening<'_>,
    ) -> Result<(Uuid, CachedTable), ApiError> {
        let Opening {
            ruleset,
            options,
            seats,
            clock,
            bots,
        } = opening;
        let mut events = Table::create(
            ruleset,
            options,
            seats,
            clock,
            &player_id(creator),
            username,
        )?;
        let mut table = Table::from_events(&events).ok_or_else(|| corrupt("no table_created"))?;
        for level in bots {
            let seat_bot = TableCommand::SeatBot {
                account_id: player_id(creator),
                level: *level,
            };
            events.extend(table.execute(&seat_bot, &mut rand::thread_rng())?);
        }
        rates.table(creator)?;
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
            Some(table.status().as_str()),
        )
        .await?;
        self.project(&mut tx, id, creator, &events).await?;
        tx.commit().await?;
        self.announce(id, stored.len() as i64);
        let row = store::tables::get(&self.pool, id)
            .await?
            .ok_or_else(not_found)?;
        let loaded = CachedTable {
            table,
            created_by: row.created_by,
            created_at: row.created_at,
            due_at: row.due_at,
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

    /// Decides `command` on the up-to-date table and appends its events (see
    /// the module documentation). `answer` builds the response from the table
    /// after the events, the stored events and the same events parsed (to
    /// redact them without parsing them again); with an idempotency key, it is
    /// saved (as a 200) in the same transaction. The log is not read first
    /// when nothing newer than the cache was heard of (a stale cache then
    /// fails the append, which reads the log and decides again); the long
    /// polls of this process are woken at once.
    pub async fn act<R: serde::Serialize>(
        &self,
        table_id: Uuid,
        command: &TableCommand,
        expected_version: Option<i64>,
        idempotency: Option<(Uuid, &Idempotency)>,
        answer: impl Fn(&CachedTable, &[StoredEvent], &[TableEvent]) -> Result<R, ApiError>,
    ) -> Result<Acted<R>, ApiError> {
        self.act_decided(
            table_id,
            command,
            None,
            expected_version,
            idempotency,
            answer,
        )
        .await
    }

    /// The server's move for the seat it plays on a due table at `version`
    /// (a bot's, an away or resigned player's): decided on a copy of the
    /// table, outside its lock and within the search budget (see
    /// [`crate::searches`]), then appended at that version; nothing when the
    /// table moved on meanwhile (409 `version_conflict`).
    pub async fn play_for(&self, table_id: Uuid, version: i64, seed: u32) -> Result<(), ApiError> {
        let table = self
            .read(table_id, version, |l| {
                (l.version() == version).then(|| l.table.clone())
            })
            .await?
            .ok_or(ApiError::VersionConflict { expected: version })?;
        let (command, searched) = self.searches.decide(table, seed).await?;
        self.act_decided(
            table_id,
            &command,
            Some(searched),
            Some(version),
            None,
            |_, _, _| Ok(()),
        )
        .await?;
        Ok(())
    }

    /// [`Self::act`] of a command, or of a move `searched` already decided
    /// at `expected_version`.
    #[tracing::instrument(skip(self, command, searched, idempotency, answer), fields(command = ?command))]
    async fn act_decided<R: serde::Serialize>(
        &self,
        table_id: Uuid,
        command: &TableCommand,
        mut searched: Option<Searched>,
        expected_version: Option<i64>,
        idempotency: Option<(Uuid, &Idempotency)>,
        answer: impl Fn(&CachedTable, &[StoredEvent], &[TableEvent]) -> Result<R, ApiError>,
    ) -> Result<Acted<R>, ApiError> {
        let slot = self.slot(table_id);
        let mut guard = slot.lock().await;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let entry = self
                .refresh(table_id, &mut guard, expected_version.unwrap_or(0))
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
            let turn_before = entry.loaded.table.turn();
            // In doubt from before `execute`: a panic inside leaves it so.
            entry.in_doubt = true;
            // The thread's generator: a CSPRNG seeded from the OS (as
            // `StdRng::from_entropy` was), without a system call per move.
            // A bot's move was decided on a copy of the table at this
            // version (the expected one), which takes the cached one's place.
            let decided = match searched.take() {
                Some(Searched { table, events }) => {
                    entry.loaded.table = table;
                    events
                }
                None => entry.loaded.table.execute(command, &mut rand::thread_rng()),
            };
            let events = decided.map_err(|refused| {
                entry.in_doubt = false;
                ApiError::from(refused)
            })?;
            let after = entry.loaded.table.status();
            let status = (after != before).then(|| after.as_str());
            let due = entry
                .loaded
                .table
                .due_after(turn_before, &events, self.bot_delay);
            // Plain moves without a key are one statement, committed on its
            // own, by the log writer with the moves of other tables; the
            // lobby's seats and the idempotent answers go with the events in
            // one transaction. Every failure (even to get a connection) goes
            // through the match below, which drops the cache that took the
            // events.
            let lobby = events.iter().any(|e| !matches!(e, TableEvent::Game(_)));
            let mut tx = None;
            let mut due_at = None;
            let appended = async {
                let prev = prev_hash.ok_or(ApiError::VersionConflict { expected: version })?;
                let new = new_events(&events);
                let chained =
                    ChainedAppend::new(table_id, version, &prev, new, status).with_due(due);
                due_at = chained.due_at();
                if idempotency.is_none() && !lobby {
                    return self.writer.append(chained).await;
                }
                let tx = tx.insert(self.pool.begin().await?);
                store::events::append_one(tx, chained).await
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
                    let created_by = entry.loaded.created_by;
                    self.project(&mut tx, table_id, created_by, &events).await?;
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
                    count_appended(command, events.len());
                    for (s, e) in stored.iter().cloned().zip(events) {
                        entry.push(s, e);
                    }
                    if let Some(due_at) = due_at {
                        entry.loaded.due_at = due_at;
                    }
                    entry.in_doubt = false;
                    // Noted before it is announced, so that hearing the
                    // announcement back wakes nobody again.
                    self.hub.committed(table_id, entry.version());
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
}

/// Counts a command's appended events, and its move, by who made it.
fn count_appended(command: &TableCommand, events: usize) {
    ::metrics::counter!(metrics::EVENTS).increment(events as u64);
    let by = match command {
        TableCommand::Move { .. } => "player",
        TableCommand::TimeOut { .. } | TableCommand::PlayFor { .. } => "server",
        _ => return,
    };
    ::metrics::counter!(metrics::MOVES, "by" => by).increment(1);
}
