//! The projections a table's lobby events keep in step, on the appending
//! transaction: who sits where (`table_players`), whom a rematch keeps
//! seats for (`table_reservations`), whether a quick-play table is open,
//! the bots a table seats, and the bot caps they count against.

use std::time::Duration;

use domain::bots::Level;
use domain::{Status, Table, TableEvent};
use sqlx::PgConnection;
use uuid::Uuid;

use super::{account_uuid, TableService};
use crate::codes::ProblemCode;
use crate::service_error::ServiceError;

/// The most bots one account runs at once (docs/API.md "Keeping tables
/// moving"): tables with a `strong` bot, and bots in all, over the tables
/// it sits at as a person that are playing (and the one the events seat
/// bots at or start), counting the empty seats of the quick-play tables it
/// waits at with `bots_after` (the bots they will seat). Bots seated by
/// hand, by quick play and by a rematch count alike, against every person
/// at their table.
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
pub const BOTS_RETRY_AFTER: Duration = Duration::from_secs(60);

/// Whether `event` changes what [`TableService::project`] keeps (so that
/// its append commits in a transaction with those writes, not in the log
/// writer's shared statement). A timeout, a seat going away or coming back,
/// a bot's move, a resignation, an abort or a rematch's offer changes no
/// projection: those are appended like the game's moves (deadlines fire
/// them by the thousand, BENCHMARKS.md twenty-seventh pass).
pub(super) fn projected(event: &TableEvent) -> bool {
    match event {
        TableEvent::TableCreated(_)
        | TableEvent::PlayerJoined(_)
        | TableEvent::PlayerLeft { .. }
        | TableEvent::GameStarted { .. }
        | TableEvent::BotSeated { .. } => true,
        TableEvent::TurnTimedOut { .. }
        | TableEvent::SeatAway { .. }
        | TableEvent::SeatBack { .. }
        | TableEvent::PlayerResigned { .. }
        | TableEvent::GameAborted { .. }
        | TableEvent::BotMoved { .. }
        | TableEvent::RematchOffered { .. }
        | TableEvent::RematchDeclined { .. }
        | TableEvent::SeedRevealed { .. }
        | TableEvent::ResultCorrected(_)
        | TableEvent::Game(_) => false,
    }
}

impl TableService {
    /// Keeps the projections in step with lobby events, on the appending
    /// transaction: `table_players` (the accounts seated, for listings),
    /// whether a quick-play table is open, and the bots a table seats
    /// (`table` is the table after the events). The bots are counted
    /// against [`BotCaps`]: of every person at the table when the events
    /// seat a bot or start a game with bots; of the persons who join a
    /// quick-play table that waits for its bots (its empty seats are bots
    /// to come).
    pub(super) async fn project(
        &self,
        conn: &mut PgConnection,
        table_id: Uuid,
        table: &Table,
        events: &[TableEvent],
    ) -> Result<(), ServiceError> {
        let mut bots_running = false;
        let mut joined = Vec::new();
        let seated = events.iter().any(|e| {
            matches!(
                e,
                TableEvent::PlayerJoined(_)
                    | TableEvent::PlayerLeft { .. }
                    | TableEvent::GameStarted { .. }
            )
        });
        for e in events.iter().filter(|e| projected(e)) {
            match e {
                TableEvent::TableCreated(created) => {
                    if let Some(of) = &created.rematch_of {
                        let kept = of
                            .reserved
                            .iter()
                            .map(|r| account_uuid(&r.account_id))
                            .collect::<Result<Vec<_>, _>>()?;
                        store::lobby::reserve(conn, table_id, &kept).await?;
                    }
                }
                TableEvent::PlayerJoined(s) => {
                    let account = account_uuid(&s.account_id)?;
                    store::players::insert(conn, table_id, account, s.seat as i32).await?;
                    joined.push(account);
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
        if seated {
            store::lobby::reopen_or_close(conn, table_id).await?;
        }
        let waits_for_bots = table.status() == Status::Waiting && table.lobby.bots_after.is_some();
        let counted = match (bots_running, waits_for_bots && !joined.is_empty()) {
            (true, _) => None,
            (false, true) => Some(&joined[..]),
            (false, false) => return Ok(()),
        };
        self.check_bot_caps(conn, table_id, counted).await
    }

    /// Refuses the events (429 `too_many_bots`) when a person at the table
    /// (of `counted` only, when given) would run more bots than
    /// [`BotCaps`] allow.
    async fn check_bot_caps(
        &self,
        conn: &mut PgConnection,
        table_id: Uuid,
        counted: Option<&[Uuid]>,
    ) -> Result<(), ServiceError> {
        let caps = self.bot_caps;
        let runs = store::tables::bots_run_by(conn, table_id, counted).await?;
        let Some(over) = runs
            .iter()
            .find(|r| r.strong_tables > caps.strong_tables || r.bots > caps.bots)
        else {
            return Ok(());
        };
        Err(ServiceError::Limited {
            code: ProblemCode::TooManyBots,
            detail: format!(
                "an account runs at most {} bots, and {} tables with a strong bot, at once, \
                 counting the bots at every table it plays at and the empty seats of the \
                 quick-play tables it waits at for bots (a player at this table would run \
                 {} bots, {} tables with a strong bot)",
                caps.bots, caps.strong_tables, over.bots, over.strong_tables
            ),
            retry_after: BOTS_RETRY_AFTER,
        })
    }
}
