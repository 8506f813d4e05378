//! The knobs of docs/RULES.md §3, the five presets of §5 and their options, and the
//! validation that refuses impossible combinations.
//!
//! `Rules` is the one description of a game (here); presets are
//! constructors of it (`presets`); `Book` is the same rules compiled into
//! per-face tables for the engine, refusing what cannot work (`book`).

mod book;
mod presets;

pub use book::{Book, MAX_SEATS};
pub use presets::Preset;
#[cfg(feature = "openapi")]
pub use presets::TableOptions;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::deck::DeckKind;

/// Every knob of docs/RULES.md §3.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Rules {
    pub deck: DeckKind,
    pub decks: Decks,
    pub players: Players,
    pub deal: Deal,
    pub starter: Starter,
    pub draw: DrawRule,
    pub voluntary_draw: bool,
    /// Face (`8`, `A`, `JK`, `X`, `STAR`, …) → effect.
    pub effects: BTreeMap<String, Effect>,
    /// Faces on which a `wild_suit` card may not be played (S0: an 8 not on a 2).
    pub wild_not_on: Vec<String>,
    pub stacking: Stacking,
    pub joker_counter: bool,
    pub special_finish: bool,
    pub two_player_reverse: TwoPlayerReverse,
    pub announce: Announce,
    pub points: Points,
    pub scoring: Scoring,
    pub end: End,
    /// A fixed number of rounds instead of the end threshold.
    pub rounds: Option<u32>,
}

/// How many decks are shuffled together.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Decks {
    Fixed(u32),
    /// One deck per this many players, rounded up (S4: ceil(players/6)).
    PerPlayers(u32),
}

impl Decks {
    pub fn count(&self, players: usize) -> u32 {
        match *self {
            Decks::Fixed(n) => n,
            Decks::PerPlayers(k) => (players as u32).div_ceil(k.max(1)),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Players {
    pub min: usize,
    pub max: usize,
}

/// The number of cards dealt to each seat.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Deal {
    Fixed(usize),
    /// `[from_players, cards]` pairs: the last pair whose `from_players` is at
    /// most the number of players applies (S2: `[[2,10],[3,8],[4,6]]`).
    /// Each pair is a plain array of two numbers in the schema (a tuple's
    /// `prefixItems` and `items: false` are more than some generators read).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Vec<usize>>))]
    ByPlayers(Vec<(usize, usize)>),
}

impl Deal {
    pub fn cards(&self, players: usize) -> usize {
        match self {
            Deal::Fixed(n) => *n,
            Deal::ByPlayers(steps) => steps
                .iter()
                .rev()
                .find(|(from, _)| *from <= players)
                .map(|(_, n)| *n)
                .unwrap_or(0),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Starter {
    /// S0, S1, D9: a special starter goes back into the stock.
    RedrawSpecial,
    /// S4 §5, D10: the starter acts as if the dealer had played it.
    ApplyEffect,
    /// S3, D20: a pétard starter penalises the first player and is covered.
    Letters,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DrawRule {
    /// Draw one; play it now if legal, else keep it and the turn ends (D27).
    DrawThenMayPlay,
    /// S2: drawing ends the turn.
    DrawEndsTurn,
}

/// The catalogue of effects (docs/RULES.md §3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    WildSuit,
    DrawSkip(u32),
    AttackChain(u32),
    Freeze,
    Skip,
    Reverse,
    PassAcross,
    MustReplay(u32),
    MayReplay,
    Substitute,
    WildLetter,
    Firecracker(u32),
}

impl Effect {
    /// §3.5: making others draw or changing the suit (or letter) is strong.
    pub fn is_strong(self) -> bool {
        matches!(
            self,
            Effect::WildSuit
                | Effect::WildLetter
                | Effect::DrawSkip(_)
                | Effect::AttackChain(_)
                | Effect::Freeze
                | Effect::Firecracker(_)
                | Effect::Substitute
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Stacking {
    None,
    /// D25: a 2 or joker answers a pending 2 or joker and passes the sum on.
    DrawCards,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TwoPlayerReverse {
    /// With two players a reversal does nothing (S0 jacks, D6).
    None,
    /// With two players the one who reversed plays again (S1 aces D7, S3 X).
    Skip,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Announce {
    pub word: String,
    pub penalty: u32,
    pub penalty_skips_turn: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Points {
    /// S2 negative: strong effect 50, other effect 20, face card 10, else face value, ace 1.
    ByEffect,
    /// Face → points; every face of the deck must be listed.
    Table(PointsTable),
}

/// Face → points; every face of the deck must be listed. A type of its own
/// so that the schema names it (a generator, openapi-python-client, cannot
/// take an object inside a union's object unnamed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(transparent)]
pub struct PointsTable(pub BTreeMap<String, i32>);

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Scoring {
    /// Everyone but the finisher scores the points in hand; the finisher
    /// scores the bonus (S4: −10).
    HandPoints(HandPoints),
    /// S2 positive: points by order of going out (D17).
    Placement(Placement),
}

/// [`Scoring::HandPoints`]: the finisher's bonus (a type of its own, like
/// [`PointsTable`], so that the schema names it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HandPoints {
    pub finisher_bonus: i32,
}

/// [`Scoring::Placement`]: the points by order of going out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Placement {
    pub awards: Vec<i32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// Ends when a total reaches T; lowest total wins (S1, S3).
    LowestWinsAt(i32),
    /// Ends when a total passes T; lowest total wins (S2 negative).
    LowestWinsAbove(i32),
    /// Ends when a total reaches T; those players lose (S4, D16).
    ReacherLosesAt(i32),
    /// Ends when a total passes T; highest total wins (S2 positive, D17).
    HighestWinsAbove(i32),
}

impl End {
    pub fn threshold(self) -> i32 {
        match self {
            End::LowestWinsAt(t)
            | End::LowestWinsAbove(t)
            | End::ReacherLosesAt(t)
            | End::HighestWinsAbove(t) => t,
        }
    }

    fn with_threshold(self, t: i32) -> End {
        match self {
            End::LowestWinsAt(_) => End::LowestWinsAt(t),
            End::LowestWinsAbove(_) => End::LowestWinsAbove(t),
            End::ReacherLosesAt(_) => End::ReacherLosesAt(t),
            End::HighestWinsAbove(_) => End::HighestWinsAbove(t),
        }
    }

    /// Does this total end the game?
    pub fn is_reached_by(self, total: i32) -> bool {
        match self {
            End::LowestWinsAt(t) | End::ReacherLosesAt(t) => total >= t,
            End::LowestWinsAbove(t) | End::HighestWinsAbove(t) => total > t,
        }
    }

    pub fn highest_wins(self) -> bool {
        matches!(self, End::HighestWinsAbove(_))
    }
}

/// Why a set of rules or options is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RulesError {
    #[error("unknown ruleset {0:?}: expected one of classique, moderne, base, amerix, 757")]
    UnknownPreset(String),
    #[error("unknown option {option:?} for ruleset {preset}")]
    UnknownOption { preset: String, option: String },
    #[error("option {option:?}: {reason}")]
    BadOption { option: String, reason: String },
    #[error("{0}")]
    Invalid(String),
}

pub(crate) fn invalid<T>(reason: impl Into<String>) -> Result<T, RulesError> {
    Err(RulesError::Invalid(reason.into()))
}
