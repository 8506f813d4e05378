//! Huit's rules engine: the whole 8 américain family (docs/RULES.md) as one
//! parameterised game.
//!
//! - [`Rules`] holds every knob; [`Preset`] builds the five rule sets of the
//!   source documents, with their options.
//! - [`Game::decide`] turns a [`Command`] into [`Event`]s or a [`RuleError`];
//!   [`Game::evolve`] applies an event and cannot fail. A game is the fold of
//!   its events. Randomness comes in as an argument and is recorded in the
//!   events, so replays never shuffle. Every shuffle is derived from the
//!   table's secret seed and the seats' own seeds ([`fair`]), so that a
//!   finished game's log proves its deals.
//! - [`Game::view`] is what one seat may see, with its legal moves;
//!   [`Game::full_view`] is the omniscient view of replays.
//!
//! No I/O, no async, no clock.

pub mod bots;
pub mod card;
pub mod deck;
mod engine;
pub mod event;
pub mod fair;
mod game;
pub mod rating;
pub mod redaction;
pub mod rules;
#[cfg(feature = "openapi")]
pub mod schema;
pub mod score;
pub mod table;
mod view;

pub use card::{Card, CardError, Face, Letter, Rank, Suit};
pub use deck::{DeckId, DeckKind};
pub use engine::{Command, RuleError};
pub use event::{
    CardPlayed, Choice, Direction, DrawReason, EndReason, Event, GameEnded, Move, Pending,
    PendingKind, Placing, RoundEnded, RoundStarted, Seat, SkipReason, Target, EVENT_VERSION,
};
pub use fair::{
    Chance, ClientSeed, ClientSeedError, Fair, RngWords, SeedHash, ServerSeed, ShuffleStream, Words,
};
pub use game::{Game, Round, Status};
pub use rating::{Finish, RatedGame, Rating, Standing, Standings, Stats};
pub use redaction::{Salt, Seen};
pub use rules::{Effect, Preset, Rules, RulesError};
pub use table::{
    BotReason, Clock, Due, Fold, FoldError, Joining, Lobby, Notice, NoticeKind, PlayerId,
    ReadError, RematchOf, Reserved, Seated, Table, TableCommand, TableCreated, TableError,
    TableEvent, Turn, Visibility,
};
pub use view::{FullView, PendingView, PlayerView, SeatView};
