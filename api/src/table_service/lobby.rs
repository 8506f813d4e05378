//! Finding a game (docs/API.md "Finding a game and coming back"): quick
//! play, joining through an invitation, renewing one, and the rematch.
//! The engine decides who may sit where and when a table starts
//! (`Table::join`, `Table::rematch`); this is where those decisions meet
//! the other tables and the other processes.
//!
//! # Quick play across processes
//! A quick-play table is open (`game_tables.quickplay_open` holds its
//! settings' key) while it waits with a person seated; a unique index
//! keeps one open table per key. A caller (1) gets back the waiting table
//! of these settings it sits at, else (2) joins the open one, else (3)
//! opens one. The callers of one settings take turns in a process (one
//! queue per key), so that a crowd arriving at once is seated one after
//! the other instead of racing for the same seat; between processes, a
//! join is decided again when another process appended first, and whoever
//! finds the table full or started, or meets another's open table when
//! opening one (the index refuses it, and its transaction writes nothing),
//! tries again from (1) after a short random pause. So no seat is taken
//! twice (the log's append is the lock on a table) and there are never two
//! open tables of one setting (the index is the lock on the setting),
//! whichever processes the callers reach.
//!
//! A caller waits at one quick-play table of a ruleset: a call with other
//! settings of it first leaves the table the caller waited at (one left
//! alone closes, `domain::Lobby::is_quick_play`). One caller's calls take
//! turns in a process, before their settings' queue.

use sha2::{Digest, Sha256};
use uuid::Uuid;

use domain::{Joining, Table, TableCommand, TableError, TableEvent, Visibility};
use store::StoreError;

use super::commands::{NewTable, Opening};
use super::{corrupt, player_id, CachedTable, Person, TableService, MAX_ATTEMPTS};
use crate::codes::ProblemCode;
use crate::dealer;
use crate::invites;
use crate::rates::Rates;
use crate::service_error::ServiceError;

/// The key of a quick-play table's settings: the SHA-256 (hex) of its rule
/// set, its rules as the options made them (so that options spelled
/// differently but meaning the same match), its seats, clock and
/// `bots_after`, from its `table_created`.
pub fn quickplay_key(events: &[TableEvent]) -> Result<String, ServiceError> {
    let Some(TableEvent::TableCreated(c)) = events.first() else {
        return Err(corrupt("no table_created"));
    };
    let settings = serde_json::json!({
        "ruleset": c.ruleset,
        "rules": c.rules,
        "seats": c.seats,
        "clock": c.clock,
        "bots_after": c.bots_after,
    });
    let text = serde_json::to_vec(&settings).map_err(ServiceError::internal)?;
    Ok(hex::encode(Sha256::digest(text)))
}

/// Whether a quick-play call lost a race it should run again: the table
/// moved on, filled or started meanwhile, the caller sat down there
/// through another request, or another caller opened the setting's table
/// first.
fn lost_race(err: &ServiceError) -> bool {
    match err {
        ServiceError::VersionConflict { .. } => true,
        ServiceError::Rules(refusal) => matches!(
            refusal,
            TableError::Full
                | TableError::NotWaiting
                | TableError::AlreadySeated
                | TableError::Closed
        ),
        ServiceError::Store(StoreError::QuickPlayOpen) => true,
        _ => false,
    }
}

/// Past this many settings keys, the queues of quick play's callers that
/// nobody holds are dropped.
pub(super) const TURNS_SOFT_LIMIT: usize = 1024;

/// How many times quick play tries again after losing a race.
const QUICKPLAY_ATTEMPTS: usize = 32;

/// A short random pause before trying again, so that the losers of one
/// race do not meet again at once.
async fn pause() {
    let ms = rand::Rng::gen_range(&mut rand::thread_rng(), 1..=8);
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
}

/// A race lost every time (409 `version_conflict`): the client may try
/// again.
fn too_busy() -> ServiceError {
    ServiceError::VersionConflict { expected: 0 }
}

impl TableService {
    /// Quick play (see the module documentation): the table of these
    /// settings (`opening.lobby` starts by itself, with quick play's bots)
    /// the caller now sits at. Every call counts against the caller's
    /// table rate, once its settings are valid.
    #[tracing::instrument(skip(self, rates, opening), fields(ruleset = opening.ruleset))]
    pub async fn quickplay(
        &self,
        rates: &Rates,
        person: Person,
        opening: Opening<'_>,
    ) -> Result<(Uuid, CachedTable), ServiceError> {
        let new = NewTable::draw();
        let events = opening.events(&person, &new.dealer)?;
        let caller = person.id;
        let key = quickplay_key(&events)?;
        let ruleset = Table::from_events(&events)
            .ok_or_else(|| corrupt("no table_created"))?
            .ruleset;
        rates.table(caller)?;
        // One caller's calls take turns, then one settings' callers: a
        // caller waits at one quick-play table of a ruleset, the one of the
        // settings asked for last.
        let mine = self.quickplay_turns.of(format!("account {caller}"));
        let _mine = mine.lock().await;
        self.leave_other_quickplay(caller, &ruleset, &key).await?;
        let queue = self.quickplay_turns.of(key.clone());
        let _turn = queue.lock().await;
        for _ in 0..QUICKPLAY_ATTEMPTS {
            if let Some(id) = store::lobby::waiting_at(&self.pool, caller, &key).await? {
                return Ok((id, self.read(id, 0, CachedTable::clone).await?));
            }
            let tried = match store::lobby::open_table(&self.pool, &key).await? {
                Some(id) => self.join(id, &person).await.map(|table| (id, table)),
                // A race lost rolls its transaction back: the next
                // attempt opens the same table again.
                None => {
                    let (new, events) = (new.clone(), events.clone());
                    self.open(caller, new, events, Some(&key)).await
                }
            };
            match tried {
                Err(e) if lost_race(&e) => pause().await,
                seated => return seated,
            }
        }
        Err(too_busy())
    }

    /// `caller` leaves the quick-play tables of `ruleset` they wait at
    /// with other settings than `key`'s (one left alone closes). A table
    /// that started or closed meanwhile is left as it is.
    async fn leave_other_quickplay(
        &self,
        caller: Uuid,
        ruleset: &str,
        key: &str,
    ) -> Result<(), ServiceError> {
        let leave = TableCommand::Leave {
            account_id: player_id(caller),
        };
        for id in store::lobby::waiting_elsewhere(&self.pool, caller, ruleset, key).await? {
            match self.act(id, &leave, None, None, |_, _, _| Ok(())).await {
                Ok(_) => tracing::info!(table_id = %id, "left for other quick-play settings"),
                Err(ServiceError::Rules(TableError::NotWaiting | TableError::NotSeated)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Seats `caller` at a table the server sent them to (an invitation, a
    /// rematch): the table after it, or as it is when they sit there
    /// already.
    pub async fn seat(
        &self,
        id: Uuid,
        person: &Person,
    ) -> Result<(Uuid, CachedTable), ServiceError> {
        let caller = person.id;
        let (seated, table) = self
            .read(id, 0, |l| (l.seat_of(caller).is_some(), l.clone()))
            .await?;
        if seated {
            return Ok((id, table));
        }
        match self.join(id, person).await {
            Err(ServiceError::Rules(TableError::AlreadySeated)) => {
                Ok((id, self.read(id, 0, CachedTable::clone).await?))
            }
            joined => joined.map(|table| (id, table)),
        }
    }

    /// `caller` joins `id` as the server's guest.
    async fn join(&self, id: Uuid, person: &Person) -> Result<CachedTable, ServiceError> {
        let newcomer = person.newcomer();
        let join = TableCommand::Join {
            account_id: newcomer.account_id,
            joining: Joining::Invited,
            guest: newcomer.guest,
            client_seed: newcomer.client_seed,
        };
        let acted = self
            .act(id, &join, None, None, |l, _, _| Ok(l.version()))
            .await?;
        // Committed here: the cache holds that version, nothing to ask.
        self.read_cached(id, acted.answer, CachedTable::clone).await
    }

    /// The table whose invitation `code` is, if any (the code compared in
    /// constant time).
    pub async fn invited_to(&self, code: &str) -> Result<Option<Uuid>, ServiceError> {
        let Some(code) = invites::normal(code) else {
            return Ok(None);
        };
        let found = store::lobby::invited_to(&self.pool, &invites::digest(&code)).await?;
        Ok(found
            .filter(|(_, stored)| invites::same(stored, &code))
            .map(|(id, _)| id))
    }

    /// The creator of a private table replaces its invitation: the old
    /// code stops working at once, in every process (each join looks the
    /// code up). 403 `not_creator`, 409 `not_private` for a public table.
    pub async fn renew_invite(&self, id: Uuid, caller: Uuid) -> Result<CachedTable, ServiceError> {
        let table = self.read(id, 0, CachedTable::clone).await?;
        if table.created_by != caller {
            return Err(TableError::NotCreator.into());
        }
        let code = invites::new_code();
        if !store::lobby::renew_invite(&self.pool, id, &code, &invites::digest(&code)).await? {
            return Err(ServiceError::Conflict {
                code: ProblemCode::NotPrivate,
                detail: "this table is public: it has no invitation".into(),
            });
        }
        Ok(table)
    }

    /// The invitation code `caller` is shown for a table: its creator's,
    /// of a private table.
    pub async fn invite_code_for(
        &self,
        id: Uuid,
        visibility: Visibility,
        created_by: Uuid,
        caller: Uuid,
    ) -> Result<Option<String>, ServiceError> {
        if visibility.is_public() || created_by != caller {
            return Ok(None);
        }
        Ok(store::lobby::invite_code(&self.pool, id).await?)
    }

    /// A player of the finished table `old_id` asks for its rematch: the
    /// first call opens it (counted against the caller's table rate) and
    /// appends `rematch_offered` to the old table in the same transaction,
    /// so that there is one rematch whoever asks at once, in whichever
    /// process; later calls seat the caller there, or give it back.
    #[tracing::instrument(skip(self, rates))]
    pub async fn rematch(
        &self,
        rates: &Rates,
        old_id: Uuid,
        person: Person,
    ) -> Result<(Uuid, CachedTable), ServiceError> {
        let caller = person.id;
        for _ in 0..MAX_ATTEMPTS {
            let (version, old) = self
                .read(old_id, 0, |l| (l.version(), l.table.clone()))
                .await?;
            if old.seat_of(&player_id(caller)).is_none() {
                return Err(domain::TableError::NotSeated.into());
            }
            if let Some(next) = &old.lobby.rematch {
                let next = next.parse().map_err(corrupt)?;
                return self.seat(next, &person).await;
            }
            let new = NewTable::draw();
            let events = old.rematch(
                &old_id.to_string(),
                &person.newcomer(),
                Some(new.dealer.seed_hash()),
                &dealer::client_seeds(old.seats),
                &mut new.dealer.fair(),
            )?;
            rates.table(caller)?;
            let mut tx = self.pool.begin().await?;
            let new = self.open_in(&mut tx, caller, new, events, None).await?;
            let offer = TableCommand::OfferRematch {
                account_id: player_id(caller),
                table_id: new.id.to_string(),
            };
            match self
                .act_with(tx, old_id, &offer, version, |_, _, _| Ok(()))
                .await
            {
                Err(ServiceError::VersionConflict { .. }) => continue,
                Err(e) => return Err(e),
                Ok(_) => return self.opened(new).await,
            }
        }
        Err(too_busy())
    }
}
