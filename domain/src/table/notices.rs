//! What a table tells its players away from it (docs/API.md "Finding a game
//! and coming back": the feed, and the webhooks that push it): whose turn
//! it now is, that a game started or is over, that a rematch is open, and
//! that a turn's time is almost up. Decided here, from the events a command
//! appended, so that every way a table moves tells the same people the
//! same things.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Due, PlayerId, Table, TableEvent};
use crate::event::Event;

/// What a notice says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    /// The table now waits for this player (it did not before).
    YourTurn,
    /// [`TURN_ENDING`] of the turn's clock is gone and the player has not
    /// moved.
    TurnEnding,
    GameStarted,
    /// The game ended or was aborted.
    GameOver,
    /// Another player of this finished table opened its rematch.
    RematchOffered,
    /// An admin corrected the finished game's result.
    ResultCorrected,
}

impl NoticeKind {
    /// Its name in the feed.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::YourTurn => "your_turn",
            Self::TurnEnding => "turn_ending",
            Self::GameStarted => "game_started",
            Self::GameOver => "game_over",
            Self::RematchOffered => "rematch_offered",
            Self::ResultCorrected => "result_corrected",
        }
    }
}

/// One player told one thing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    pub kind: NoticeKind,
    pub player: PlayerId,
}

/// How much of a turn's clock is gone when its player is told that time is
/// almost up, in percent (lichess's alarm, at 80 %).
pub const TURN_ENDING: u64 = 80;

impl Table {
    /// What `events` (just applied to this table, which waited for `waited`
    /// before them) tell its people, in this order: the game started, the
    /// rematch is open (everyone but its opener), the game is over, then
    /// whose turn it is now. Bots are told nothing.
    pub fn notices(&self, waited: Option<&PlayerId>, events: &[TableEvent]) -> Vec<Notice> {
        let mut notices = Vec::new();
        for event in events {
            let (kind, except) = match event {
                TableEvent::GameStarted { .. } => (NoticeKind::GameStarted, None),
                TableEvent::RematchOffered { seat, .. } => {
                    (NoticeKind::RematchOffered, Some(*seat))
                }
                TableEvent::GameAborted { .. }
                | TableEvent::RematchDeclined { .. }
                | TableEvent::Game(Event::GameEnded(_)) => (NoticeKind::GameOver, None),
                TableEvent::ResultCorrected(_) => (NoticeKind::ResultCorrected, None),
                _ => continue,
            };
            notices.extend(
                self.players
                    .iter()
                    .flatten()
                    .filter(|p| p.bot.is_none() && Some(p.seat) != except)
                    .map(|p| Notice {
                        kind,
                        player: p.account_id.clone(),
                    }),
            );
        }
        if let Some(now) = self.to_act().filter(|&now| Some(now) != waited) {
            notices.push(Notice {
                kind: NoticeKind::YourTurn,
                player: now.clone(),
            });
        }
        notices
    }

    /// When the person on turn is told their time is almost up
    /// ([`NoticeKind::TurnEnding`]), as `due` (what [`Table::due_after`]
    /// left due after the same events) says: [`TURN_ENDING`] of a new
    /// turn's clock after the events; kept while the turn goes on; nothing
    /// when the table waits for nobody's clock.
    pub fn turn_ending_after(&self, due: Due) -> Due {
        match (due, self.clock, self.to_act()) {
            (Due::Keep, ..) => Due::Keep,
            (Due::After(_), Some(clock), Some(_)) => Due::After(Duration::from_millis(
                u64::from(clock.turn_seconds) * TURN_ENDING * 10,
            )),
            (Due::After(_) | Due::Clear, ..) => Due::Clear,
        }
    }
}
