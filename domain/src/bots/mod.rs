//! Bots (docs/RULES.md D42): pure functions of what one seat's player has
//! seen (its [`SeatView`](crate::view::SeatView), legal moves included) and a seeded random source,
//! never of the hidden cards. Each level must beat the one below it
//! (`examples/arena.rs` measures it).
//!
//! - [`Level::Random`]: uniform over the legal moves.
//! - [`Level::Basic`]: a fixed heuristic, a decent casual player (the `basic` module).
//! - [`Level::Strong`]: a search over the games the seat cannot tell apart
//!   ([`strong`], [`Sight`]).

use std::fmt;
use std::str::FromStr;

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::event::Move;

mod basic;
mod sight;
pub mod strong;

pub use sight::Sight;
pub use strong::Playouts;

/// How strong a bot plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Random,
    Basic,
    Strong,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Random, Level::Basic, Level::Strong];

    pub fn id(self) -> &'static str {
        match self {
            Level::Random => "random",
            Level::Basic => "basic",
            Level::Strong => "strong",
        }
    }

    /// The version of the level's decisions: recorded with each bot move
    /// (`bot_moved {bot: "basic@1"}`), so that a replay of an old log asks
    /// the same bot. A change in what a level decides is a new version.
    pub fn version(self) -> u32 {
        match self {
            Level::Random | Level::Basic | Level::Strong => 1,
        }
    }

    /// What a bot move records: `level@version`.
    pub fn tag(self) -> String {
        format!("{}@{}", self.id(), self.version())
    }

    /// Whether the level searches, so that how much it may search
    /// ([`Playouts`]) changes its choice and is recorded with it.
    pub fn searches(self) -> bool {
        match self {
            Level::Random | Level::Basic => false,
            Level::Strong => true,
        }
    }

    /// The seat's move, from what it has seen (its view, legal moves
    /// included), `rng` and, for a level that searches, `playouts`; `None`
    /// when the view offers no move.
    pub fn decide<R: Rng + ?Sized>(
        self,
        sight: &Sight,
        playouts: Playouts,
        rng: &mut R,
    ) -> Option<Move> {
        let moves = &sight.view.legal_moves;
        if moves.is_empty() {
            return None;
        }
        match self {
            Level::Random => Some(moves[rng.gen_range(0..moves.len())].clone()),
            Level::Basic => Some(basic::decide(&sight.view, sight.book()).clone()),
            Level::Strong => Some(strong::decide(sight, playouts, rng).clone()),
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// Not a level's id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown bot level {0:?}: expected random, basic or strong")]
pub struct UnknownLevel(pub String);

impl FromStr for Level {
    type Err = UnknownLevel;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Level::ALL
            .into_iter()
            .find(|l| l.id() == s)
            .ok_or_else(|| UnknownLevel(s.chars().take(32).collect()))
    }
}

#[cfg(test)]
mod tests;
