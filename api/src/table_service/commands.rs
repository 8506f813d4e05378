//! Creating a table and acting on one: the write path (see the parent
//! module's "How a move travels" and "Acting").

use domain::bots::Level;
use domain::table::ResultCorrected;
use domain::{Clock, Event, GameEnded, Lobby, Table, TableCommand, TableEvent};
use serde_json::{Map, Value};
use sqlx::PgConnection;
use uuid::Uuid;

use super::cache::Entry;
use super::{
    corrupt, new_events, not_found, player_id, Acted, CachedTable, Idempotency, Person,
    TableService, MAX_ATTEMPTS,
};
use crate::dealer::{self, Dealer};
use crate::invites;
use crate::log::Durability;
use crate::metric_names;
use crate::rates::Rates;
use crate::ratings;
use crate::searches::Searched;
use crate::service_error::ServiceError;
use store::chain::GENESIS_PREV_HASH;
use store::idempotency::StoredResponse;
use store::{self, StoreError};
use store::{ChainedAppend, StoredEvent};

/// What a new table is opened with.
#[derive(Debug, Clone, Copy)]
pub struct Opening<'a> {
    pub ruleset: &'a str,
    pub options: &'a Map<String, Value>,
    pub seats: usize,
    pub clock: Option<Clock>,
    /// Bots that take the seats after the creator's, in order.
    pub bots: &'a [Level],
    /// Its visibility, whether it starts by itself, quick play's bots.
    pub lobby: &'a Lobby,
}

impl Opening<'_> {
    /// The first events of the table `creator` opens, committed to
    /// `dealer`'s seed: created, the creator at seat 0, then the bots; or
    /// why it cannot be.
    pub(super) fn events(
        &self,
        creator: &Person,
        dealer: &Dealer,
    ) -> Result<Vec<TableEvent>, ServiceError> {
        let mut events = Table::open(
            self.ruleset,
            self.options,
            self.seats,
            self.clock,
            self.lobby,
            &creator.newcomer(),
            Some(dealer.seed_hash()),
        )?;
        let mut table = Table::from_events(&events).ok_or_else(|| corrupt("no table_created"))?;
        for level in self.bots {
            let seat_bot = TableCommand::SeatBot {
                account_id: player_id(creator.id),
                level: *level,
                client_seed: Some(dealer::client_seed()),
            };
            events.extend(dealer::execute(Some(dealer), &mut table, &seat_bot)?);
        }
        Ok(events)
    }
}

/// A table about to be opened: its id, and its dealer (a new server seed).
#[derive(Debug, Clone)]
pub(super) struct NewTable {
    pub(super) id: Uuid,
    pub(super) dealer: Dealer,
}

impl NewTable {
    pub(super) fn draw() -> NewTable {
        let id = Uuid::new_v4();
        NewTable {
            id,
            dealer: Dealer::draw(id),
        }
    }
}

/// A table written in a transaction not committed yet: what
/// [`TableService::opened`] makes known once it is.
#[derive(Debug)]
pub(super) struct Unannounced {
    pub(super) id: Uuid,
    dealer: Dealer,
    table: Table,
    stored: Vec<StoredEvent>,
    events: Vec<TableEvent>,
}

impl TableService {
    /// Opens a table: its projection row, `table_created`, the creator's
    /// `player_joined` at seat 0 and its bots, in one transaction. A valid
    /// request counts against `creator`'s table rate (an invalid one is
    /// refused first and costs nothing).
    #[tracing::instrument(skip(self, rates, opening), fields(ruleset = opening.ruleset))]
    pub async fn create(
        &self,
        rates: &Rates,
        creator: Person,
        opening: Opening<'_>,
    ) -> Result<(Uuid, CachedTable), ServiceError> {
        let new = NewTable::draw();
        let events = opening.events(&creator, &new.dealer)?;
        rates.table(creator.id)?;
        self.open(creator.id, new, events, None).await
    }

    /// Writes the new table `new` of these first events, committed, and
    /// makes it known (see [`Self::open_in`]).
    pub(super) async fn open(
        &self,
        creator: Uuid,
        new: NewTable,
        events: Vec<TableEvent>,
        quickplay_key: Option<&str>,
    ) -> Result<(Uuid, CachedTable), ServiceError> {
        let mut tx = self.pool.begin().await?;
        let opened = self
            .open_in(&mut tx, creator, new, events, quickplay_key)
            .await?;
        tx.commit().await?;
        self.opened(opened).await
    }

    /// Writes the new table `new` of these first events in `tx`: its
    /// projection row (a private one with an invitation; a quick-play one
    /// open for its settings, 409 `quickplay_table_open` when one is
    /// already), its server seed, its events and their projections. Known
    /// to nobody until [`Self::opened`], once `tx` commits.
    pub(super) async fn open_in(
        &self,
        tx: &mut PgConnection,
        creator: Uuid,
        new: NewTable,
        events: Vec<TableEvent>,
        quickplay_key: Option<&str>,
    ) -> Result<Unannounced, ServiceError> {
        let table = Table::from_events(&events).ok_or_else(|| corrupt("no table_created"))?;
        let NewTable { id, dealer } = new;
        let seats = i32::try_from(table.seats).map_err(ServiceError::internal)?;
        let code = (!table.lobby.visibility.is_public()).then(invites::new_code);
        let digest = code.as_deref().map(invites::digest);
        let lobby = store::lobby::LobbyRow {
            visibility: table.lobby.visibility.as_str(),
            invite: code.as_deref().zip(digest.as_ref().map(|d| &d[..])),
            quickplay_key,
        };
        store::lobby::insert(&mut *tx, id, &table.ruleset, seats, creator, lobby).await?;
        store::seeds::insert(&mut *tx, id, dealer.seed_bytes()).await?;
        let due = table.due_after(domain::Turn::default(), &events, self.bot_delay);
        let chained = ChainedAppend::new(
            id,
            0,
            GENESIS_PREV_HASH,
            new_events(&events),
            Some(table.status().as_str()),
        )
        .with_due(due)
        .with_turn(waits_for(&table));
        let stored = self
            .log
            .append(chained, Durability::InTransaction(&mut *tx))
            .await?;
        self.project(&mut *tx, id, &table, &events).await?;
        Ok(Unannounced {
            id,
            dealer,
            table,
            stored,
            events,
        })
    }

    /// A new table, committed: announced to every process and cached here.
    pub(super) async fn opened(
        &self,
        new: Unannounced,
    ) -> Result<(Uuid, CachedTable), ServiceError> {
        let Unannounced {
            id,
            dealer,
            table,
            stored,
            events,
        } = new;
        self.log.committed(id, stored.len() as i64, []);
        let row = store::tables::get(&self.pool, id)
            .await?
            .ok_or_else(not_found)?;
        let mut loaded = CachedTable::new(table, row.created_by, row.created_at, row.due_at);
        self.name(&mut loaded, self.log.hub().accounts_epoch())
            .await?;
        let mut entry = Entry::new(loaded.clone(), Some(dealer));
        for (s, e) in stored.into_iter().zip(events) {
            entry.push(s, e);
        }
        *self.slot(id).lock().await = Some(entry);
        tracing::info!(table_id = %id, "table opened");
        Ok((id, loaded))
    }

    /// The stored answer of an earlier request with this key, if any (422
    /// when the key came with another request).
    pub async fn replay(
        &self,
        table_id: Uuid,
        account_id: Uuid,
        idempotency: &Idempotency,
    ) -> Result<Option<StoredResponse>, ServiceError> {
        match store::idempotency::find(&self.pool, table_id, account_id, &idempotency.key).await? {
            Some(stored) if stored.request_hash != idempotency.request_hash => {
                Err(ServiceError::IdempotencyKeyReused)
            }
            stored => Ok(stored),
        }
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
        answer: impl Fn(&CachedTable, &[StoredEvent], &[TableEvent]) -> Result<R, ServiceError>,
    ) -> Result<Acted<R>, ServiceError> {
        let writes = Writes {
            idempotency,
            tx: None,
        };
        self.act_decided(table_id, command, None, expected_version, writes, answer)
            .await
    }

    /// [`Self::act`] at `expected_version`, its events joining `tx`, which
    /// holds writes of the caller's own, and committing it: all of it, or
    /// nothing (409 `version_conflict` when the table moved on).
    pub(super) async fn act_with<R: serde::Serialize>(
        &self,
        tx: store::Tx<'static>,
        table_id: Uuid,
        command: &TableCommand,
        expected_version: i64,
        answer: impl Fn(&CachedTable, &[StoredEvent], &[TableEvent]) -> Result<R, ServiceError>,
    ) -> Result<Acted<R>, ServiceError> {
        let writes = Writes {
            idempotency: None,
            tx: Some(tx),
        };
        let version = Some(expected_version);
        self.act_decided(table_id, command, None, version, writes, answer)
            .await
    }

    /// An admin's correction of the finished game of `table_id`
    /// (`TableCommand::CorrectResult`, see `Table::correct`), appended in
    /// `tx` (the dispute's resolution, whose writes commit with it) and
    /// committed; 409 `version_conflict` when the table moved on meanwhile.
    pub async fn correct(
        &self,
        tx: store::Tx<'static>,
        table_id: Uuid,
        command: &TableCommand,
    ) -> Result<(), ServiceError> {
        let version = self.read(table_id, 0, |l| l.version()).await?;
        self.act_with(tx, table_id, command, version, |_, _, _| Ok(()))
            .await?;
        Ok(())
    }

    /// The server's move for the seat it plays on `table` (a copy of a due
    /// table, read by the caller: a bot's seat, an away or resigned
    /// player's): decided on it, outside the table's lock and within the
    /// search budget (see [`crate::searches`]), then appended at its
    /// version; nothing when the table moved on meanwhile (409
    /// `version_conflict`).
    pub async fn play_for(
        &self,
        table_id: Uuid,
        table: Table,
        seed: u32,
    ) -> Result<(), ServiceError> {
        let version = table.version as i64;
        let dealer = {
            let slot = self.slot(table_id);
            let mut guard = slot.lock().await;
            let entry = self.refresh(table_id, &mut guard, 0).await?;
            entry.dealer.clone()
        };
        let (command, searched) = self.searches.decide(table, dealer, seed).await?;
        self.act_decided(
            table_id,
            &command,
            Some(searched),
            Some(version),
            Writes::default(),
            |_, _, _| Ok(()),
        )
        .await?;
        Ok(())
    }

    /// [`Self::act`] of a command, or of a move `searched` already decided
    /// at `expected_version`: lock and refresh the cached table, then three
    /// steps, decide (the cached table takes the events), append (durably,
    /// with what must commit with them), publish (the cache's tail, the
    /// long polls of this process, the other processes). Until the append
    /// is known to have committed, the cached table is [`Uncommitted`].
    #[tracing::instrument(skip(self, command, searched, writes, answer), fields(command = ?command))]
    async fn act_decided<R: serde::Serialize>(
        &self,
        table_id: Uuid,
        command: &TableCommand,
        mut searched: Option<Searched>,
        expected_version: Option<i64>,
        mut writes: Writes<'_>,
        answer: impl Fn(&CachedTable, &[StoredEvent], &[TableEvent]) -> Result<R, ServiceError>,
    ) -> Result<Acted<R>, ServiceError> {
        // A transaction of the caller's is appended to once: never decided
        // again without a version to hold to.
        debug_assert!(writes.tx.is_none() || expected_version.is_some());
        let slot = self.slot(table_id);
        let mut guard = slot.lock().await;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (version, prev_hash) = self.current(table_id, &mut guard, expected_version).await?;
            let mut pending = Uncommitted::new(&mut guard);
            let decided = match self.decide(pending.entry(), command, searched.take()) {
                Ok(decided) => decided,
                Err(refused) => {
                    // A refused command changed nothing.
                    pending.keep();
                    return Err(refused.into());
                }
            };
            let with_writes = writes.tx.is_some()
                || writes.idempotency.is_some()
                || decided.projected()
                || decided.ended().is_some()
                || decided.corrected().is_some();
            let appended = self
                .append(
                    table_id,
                    version,
                    prev_hash.as_deref(),
                    &decided,
                    with_writes.then(|| writes.tx.take()),
                )
                .await;
            let (stored, mut tx, due_at) = match appended {
                Ok(appended) => appended,
                // Another process appended first: read the log again (the
                // pending table is dropped) and decide again.
                Err(StoreError::Conflict { .. })
                    if expected_version.is_none() && attempt < MAX_ATTEMPTS =>
                {
                    tracing::info!(attempt, "another writer appended first; deciding again");
                    continue;
                }
                Err(StoreError::Conflict { .. }) => {
                    return Err(ServiceError::VersionConflict {
                        expected: expected_version.unwrap_or(version),
                    });
                }
                Err(e) => return Err(e.into()),
            };
            // The answer is the table as a read of its new version shows
            // it, its `due_at` included.
            let loaded = &mut pending.entry().loaded;
            if let Some(due_at) = due_at {
                loaded.due_at = due_at;
            }
            // A person just seated is named before the answer shows them.
            let accounts = self.log.hub().accounts_epoch();
            self.name_in(tx.as_deref_mut(), loaded, accounts).await?;
            let answer = answer(loaded, &stored, &decided.events)?;
            if let Some(tx) = tx {
                let project = (&loaded.table, &decided.events[..]);
                let rated = decided.rated(table_id, &loaded.table, &stored);
                self.commit_with(tx, table_id, project, rated, writes.idempotency, &answer)
                    .await?;
            }
            count_appended(command, decided.events.len());
            self.publish(table_id, pending.keep(), &stored, decided);
            return Ok(Acted { stored, answer });
        }
    }

    /// The command on the cached table, which takes its events at once (a
    /// refused command changes nothing), without a copy of the whole game;
    /// a bot's move was decided on a copy at this version, which takes the
    /// cached table's place. Its shuffles are its dealer's (see
    /// [`dealer`]).
    fn decide(
        &self,
        entry: &mut Entry,
        command: &TableCommand,
        searched: Option<Searched>,
    ) -> Result<Decided, domain::TableError> {
        let table = &mut entry.loaded.table;
        let (before, turn_before) = (table.status(), table.turn());
        let waited = table.to_act().cloned();
        let events = match searched {
            Some(Searched {
                table: after,
                events,
            }) => {
                *table = after;
                events?
            }
            None => dealer::execute(entry.dealer.as_ref(), table, command)?,
        };
        let after = table.status();
        let due = table.due_after(turn_before, &events, self.bot_delay);
        Ok(Decided {
            status: (after != before).then(|| after.as_str()),
            due,
            turn: waits_for(table),
            notices: table.notices(waited.as_ref(), &events),
            turn_ending: table.turn_ending_after(due),
            events,
        })
    }

    /// The table brought up to date in its slot, at the client's version if
    /// it sent one (409 otherwise): its version, and the hash of its last
    /// event, which the next is chained to (`None`: the log has no event at
    /// the cached version, which another writer's append will explain).
    async fn current(
        &self,
        table_id: Uuid,
        slot: &mut Option<Entry>,
        expected_version: Option<i64>,
    ) -> Result<(i64, Option<String>), ServiceError> {
        let entry = self
            .refresh(table_id, slot, expected_version.unwrap_or(0))
            .await?;
        let version = entry.version();
        if let Some(expected) = expected_version.filter(|e| *e != version) {
            return Err(ServiceError::VersionConflict { expected });
        }
        let prev_hash = match &entry.head_hash {
            Some(hash) => Some(hash.clone()),
            None if version == 0 => Some(GENESIS_PREV_HASH.to_owned()),
            None => store::events::head_hash(&self.pool, table_id, version).await?,
        };
        Ok((version, prev_hash))
    }

    /// Appends the decided events after `version`, chained to `prev_hash`:
    /// batched with other tables' moves, committed on their own, or
    /// (`with_writes`) in a transaction left open for what must commit with
    /// them (the caller's own, when it holds one). The stored events, that
    /// transaction, and the new `due_at` if it changed. Without a
    /// `prev_hash` (no event stored at `version`, another writer's doing)
    /// it is a conflict, and nothing is written.
    async fn append(
        &self,
        table_id: Uuid,
        version: i64,
        prev_hash: Option<&str>,
        decided: &Decided,
        with_writes: Option<Option<store::Tx<'static>>>,
    ) -> Result<Appended, StoreError> {
        let prev_hash = prev_hash.ok_or(StoreError::Conflict { expected: version })?;
        let new = new_events(&decided.events);
        let chained = ChainedAppend::new(table_id, version, prev_hash, new, decided.status)
            .with_due(decided.due)
            .with_turn(decided.turn)
            .with_notices(decided.notices.clone(), decided.turn_ending);
        let due_at = chained.due_at();
        let Some(tx) = with_writes else {
            let stored = self.log.append(chained, Durability::Batched).await?;
            return Ok((stored, None, due_at));
        };
        let mut tx = match tx {
            Some(tx) => tx,
            None => self.pool.begin().await?,
        };
        let stored = self
            .log
            .append(chained, Durability::InTransaction(&mut tx))
            .await?;
        Ok((stored, Some(tx), due_at))
    }

    /// What commits with the events in their transaction: the projections
    /// of lobby events (the table after them, and them), the ratings of a
    /// game that ended between people, and the answer of a request with an
    /// idempotency key.
    async fn commit_with<R: serde::Serialize>(
        &self,
        mut tx: store::Tx<'static>,
        table_id: Uuid,
        (table, events): (&Table, &[TableEvent]),
        rated: Option<ratings::Rerate>,
        idempotency: Option<(Uuid, &Idempotency)>,
        answer: &R,
    ) -> Result<(), ServiceError> {
        self.project(&mut tx, table_id, table, events).await?;
        if let Some(change) = rated {
            ratings::record(&mut tx, &change).await?;
        }
        if let Some((account_id, idem)) = idempotency {
            let body = serde_json::to_value(answer).map_err(ServiceError::internal)?;
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
        Ok(())
    }

    /// Committed: the events join the cached table's tail, then the log
    /// tells it (this process's followers of the table and of the feeds
    /// its notices wrote to, and every process).
    fn publish(&self, table_id: Uuid, entry: &mut Entry, stored: &[StoredEvent], decided: Decided) {
        for (s, e) in stored.iter().cloned().zip(decided.events) {
            entry.push(s, e);
        }
        let fed = decided
            .notices
            .iter()
            .filter_map(|n| n.player.as_str().parse().ok());
        self.log.committed(table_id, entry.version(), fed);
    }
}

/// What commits with a command's events besides its projections.
#[derive(Debug, Default)]
struct Writes<'a> {
    /// The answer of a request with an `Idempotency-Key`, saved with them.
    idempotency: Option<(Uuid, &'a Idempotency)>,
    /// A transaction of the caller's, with writes of its own, which they
    /// join and commit.
    tx: Option<store::Tx<'static>>,
}

/// What a command decided: its events, the table's new status if it
/// changed, and what is due after them.
#[derive(Debug)]
struct Decided {
    events: Vec<TableEvent>,
    status: Option<&'static str>,
    due: domain::Due,
    /// The account the table waits for after them.
    turn: Option<Uuid>,
    /// Who the events tell what, away from the table (their feeds).
    notices: Vec<domain::Notice>,
    /// When the turn's alarm rings after them.
    turn_ending: domain::Due,
}

impl Decided {
    /// Whether the events change a projection (seats, bots, a rematch's
    /// reservations: [`super::projections::projected`]).
    fn projected(&self) -> bool {
        self.events.iter().any(super::projections::projected)
    }

    /// The game's end, when the events end it.
    fn ended(&self) -> Option<&GameEnded> {
        self.events.iter().find_map(|e| match e {
            TableEvent::Game(Event::GameEnded(end)) => Some(&**end),
            _ => None,
        })
    }

    /// The correction of the game's result among the events.
    fn corrected(&self) -> Option<&ResultCorrected> {
        self.events.iter().find_map(|e| match e {
            TableEvent::ResultCorrected(c) => Some(&**c),
            _ => None,
        })
    }

    /// What the events do to the ratings (`table` after them): the rated
    /// game they end, at its `game_ended`'s time as `stored`; or the game
    /// whose result they correct, rated as corrected (a voided one not).
    fn rated(
        &self,
        table_id: Uuid,
        table: &Table,
        stored: &[StoredEvent],
    ) -> Option<ratings::Rerate> {
        if self.corrected().is_some() {
            return Some(ratings::Rerate::Corrected {
                table_id,
                ruleset: table.ruleset.clone(),
                game: table.rated_now(),
            });
        }
        let end = self.ended()?;
        let at = stored.iter().find(|s| s.kind == "game_ended")?.at;
        let game = table.rated_game(end)?;
        Some(ratings::Rerate::Ended(ratings::Ended {
            table_id,
            at,
            game,
        }))
    }
}

/// The stored events, the transaction they are in (when not committed
/// yet), and the table's new `due_at` when it changed.
type Appended = (
    Vec<StoredEvent>,
    Option<store::Tx<'static>>,
    Option<Option<chrono::DateTime<chrono::Utc>>>,
);

/// A cached table that has taken a command's events before they are known
/// to be stored. Dropped (the command failed, its request was cancelled,
/// its worker stopped, a panic) it evicts the table, so that the next use
/// reads the log again instead of serving events that may never have been
/// written; [`Uncommitted::keep`] keeps it.
struct Uncommitted<'g> {
    slot: Option<&'g mut Option<Entry>>,
}

impl<'g> Uncommitted<'g> {
    fn new(slot: &'g mut Option<Entry>) -> Self {
        Self { slot: Some(slot) }
    }

    fn entry(&mut self) -> &mut Entry {
        self.slot
            .as_deref_mut()
            .and_then(Option::as_mut)
            .expect("a refreshed table")
    }

    /// Keeps the table as it is now: committed, or unchanged.
    fn keep(mut self) -> &'g mut Entry {
        self.slot
            .take()
            .and_then(Option::as_mut)
            .expect("a refreshed table")
    }
}

impl Drop for Uncommitted<'_> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            *slot = None;
        }
    }
}

/// The account `table` waits for (see `domain::Table::to_act`).
fn waits_for(table: &Table) -> Option<Uuid> {
    table.to_act().and_then(|id| id.as_str().parse().ok())
}

/// Counts a command's appended events, and its move, by who made it.
fn count_appended(command: &TableCommand, events: usize) {
    ::metrics::counter!(metric_names::EVENTS).increment(events as u64);
    let by = match command {
        TableCommand::Move { .. } => "player",
        TableCommand::TimeOut { .. } | TableCommand::PlayFor { .. } => "server",
        _ => return,
    };
    ::metrics::counter!(metric_names::MOVES, "by" => by).increment(1);
}
