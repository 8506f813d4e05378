//! The projections a table's lobby events keep in step, on the appending
//! transaction: who sits where (`table_players`), whether a quick-play
//! table is open, the bots a table seats, and the bot caps they count
//! against.

use std::time::Duration;

use domain::bots::Level;
use domain::TableEvent;
use sqlx::PgConnection;
use uuid::Uuid;

use super::{account_uuid, TableService};
use crate::error::{ApiError, ProblemCode};
use crate::store;

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
    /// transaction: `table_players` (the accounts seated, for listings),
    /// whether a quick-play table is open, and the bots a table seats; when
    /// the events seat a bot or start a game with bots, the creator's bots
    /// are counted against [`BotCaps`] (`capped`: not the `basic` bots
    /// the server seats at quick play, which its rate bounds).
    pub(super) async fn project(
        &self,
        conn: &mut PgConnection,
        table_id: Uuid,
        created_by: Uuid,
        events: &[TableEvent],
        capped: bool,
    ) -> Result<(), ApiError> {
        let mut bots_running = false;
        let seated = events.iter().any(|e| {
            matches!(
                e,
                TableEvent::PlayerJoined(_)
                    | TableEvent::PlayerLeft { .. }
                    | TableEvent::GameStarted { .. }
            )
        });
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
        if seated {
            store::lobby::reopen_or_close(conn, table_id).await?;
        }
        if !(bots_running && capped) {
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
