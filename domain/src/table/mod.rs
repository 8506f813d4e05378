//! A table: the lobby (create, join, leave, start) around one game. Its log
//! is the one the API stores: lobby events, then the game's events.

use rand::Rng;
use serde::{Deserialize, Serialize};

mod log;

pub use log::{apply, apply_guarded, Fold, FoldError, ReadError};

use crate::engine::{Command, RuleError};
use crate::event::{Event, Move, Seat};
use crate::game::{Game, Status};
use crate::rules::{Preset, Rules, RulesError};

/// Who a player is, as the server names its accounts: opaque to the engine,
/// which only compares ids (the API's are UUIDs, written as text).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(value_type = String, format = Uuid, example = "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10"))]
#[serde(transparent)]
pub struct PlayerId(String);

impl PlayerId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for PlayerId {
    fn from(id: &str) -> Self {
        Self(id.to_owned())
    }
}

impl From<String> for PlayerId {
    fn from(id: String) -> Self {
        Self(id)
    }
}

impl std::fmt::Display for PlayerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Who sits where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"seat": 1, "account_id": "6f1c2a8e-3b7d-4c59-9e21-0d4f5a6b7c8d", "username": "alice"})))]
pub struct Seated {
    #[cfg_attr(feature = "openapi", schema(value_type = usize))]
    pub seat: Seat,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub account_id: PlayerId,
    pub username: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TableCreated {
    pub ruleset: String,
    pub rules: Rules,
    /// The most players the table takes.
    pub seats: usize,
    pub creator: PlayerId,
}

/// Every event of a table's log.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)]
pub enum TableEvent {
    TableCreated(TableCreated),
    PlayerJoined(Seated),
    PlayerLeft {
        seat: Seat,
    },
    /// The game starts with these players, seated 0..n-1 in seat order.
    GameStarted {
        players: Vec<Seated>,
    },
    Game(Event),
}

/// The lobby events' serde shape (short-lived: only built to (de)serialise).
#[derive(Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Lobby {
    TableCreated(TableCreated),
    PlayerJoined(Seated),
    PlayerLeft {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
    },
    /// The game starts with these players, seated 0..n-1 in seat order.
    GameStarted {
        players: Vec<Seated>,
    },
}

impl TableEvent {
    /// The `type` of the public log.
    pub fn kind(&self) -> &'static str {
        match self {
            TableEvent::TableCreated(_) => "table_created",
            TableEvent::PlayerJoined(_) => "player_joined",
            TableEvent::PlayerLeft { .. } => "player_left",
            TableEvent::GameStarted { .. } => "game_started",
            TableEvent::Game(e) => e.kind(),
        }
    }

    /// The event's `data` as JSON, complete (for the log and replays).
    pub fn data(&self) -> serde_json::Value {
        self.to_json()["data"].take()
    }

    /// `{type, data}`.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            TableEvent::Game(e) => serde_json::to_value(e),
            TableEvent::TableCreated(c) => serde_json::to_value(Lobby::TableCreated(c.clone())),
            TableEvent::PlayerJoined(s) => serde_json::to_value(Lobby::PlayerJoined(s.clone())),
            TableEvent::PlayerLeft { seat } => {
                serde_json::to_value(Lobby::PlayerLeft { seat: *seat })
            }
            TableEvent::GameStarted { players } => serde_json::to_value(Lobby::GameStarted {
                players: players.clone(),
            }),
        }
        .expect("events serialise")
    }

    /// Rebuilds an event from its `type` and `data` (tests; a stored event
    /// is read through its format, [`TableEvent::read`]).
    #[cfg(test)]
    pub(crate) fn from_parts(
        kind: &str,
        data: serde_json::Value,
    ) -> Result<TableEvent, serde_json::Error> {
        // Through text: maps keyed by seat have string keys in JSON, which
        // serde_json reads back as numbers only from text.
        TableEvent::parse(kind, &data.to_string())
    }

    /// Rebuilds an event of the current shape from its `type` and its
    /// `data` as JSON text (a stored event goes through
    /// [`TableEvent::read`], which knows its format).
    pub(crate) fn parse(kind: &str, data: &str) -> Result<TableEvent, serde_json::Error> {
        Ok(match kind {
            "table_created" | "player_joined" | "player_left" | "game_started" => {
                match Tagged::read(kind, data)? {
                    Lobby::TableCreated(c) => TableEvent::TableCreated(c),
                    Lobby::PlayerJoined(s) => TableEvent::PlayerJoined(s),
                    Lobby::PlayerLeft { seat } => TableEvent::PlayerLeft { seat },
                    Lobby::GameStarted { players } => TableEvent::GameStarted { players },
                }
            }
            _ => TableEvent::Game(Tagged::read(kind, data)?),
        })
    }
}

/// `{"type": kind, "data": <data>}` handed to the derived, adjacently tagged
/// `Deserialize` of events without writing that text: the tag comes first,
/// so the derive reads the variant's content straight from `data` (a replay
/// parses every event of a log; the copy and the outer object cost a third
/// of it).
struct Tagged<'a, 'de> {
    kind: &'a str,
    data: &'a mut serde_json::Deserializer<serde_json::de::StrRead<'de>>,
    next: u8,
}

impl<'de> Tagged<'_, 'de> {
    fn read<T: Deserialize<'de>>(kind: &str, data: &'de str) -> Result<T, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(data);
        let value = T::deserialize(Tagged {
            kind,
            data: &mut de,
            next: 0,
        })?;
        de.end()?;
        Ok(value)
    }
}

impl<'de> serde::Deserializer<'de> for Tagged<'_, 'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_map(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de> serde::de::MapAccess<'de> for Tagged<'_, 'de> {
    type Error = serde_json::Error;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        use serde::de::IntoDeserializer;
        let key = match self.next {
            0 => "type",
            1 => "data",
            _ => return Ok(None),
        };
        seed.deserialize(key.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        use serde::de::IntoDeserializer;
        self.next += 1;
        match self.next {
            1 => seed.deserialize(self.kind.into_deserializer()),
            _ => seed.deserialize(&mut *self.data),
        }
    }
}

/// Why a table command is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    #[error("the table is full")]
    Full,
    #[error("you already sit at this table")]
    AlreadySeated,
    #[error("you do not sit at this table")]
    NotSeated,
    #[error("only the creator of the table can start it")]
    NotCreator,
    #[error("the table has {have} player(s); these rules need at least {need}")]
    NotEnoughPlayers { have: usize, need: usize },
    #[error("the game has already started")]
    NotWaiting,
    #[error("{0}")]
    Rules(#[from] RulesError),
    #[error("{0}")]
    Rule(#[from] RuleError),
}

impl TableError {
    /// A stable machine code for clients.
    pub fn code(&self) -> &'static str {
        match self {
            TableError::Full => "table_full",
            TableError::AlreadySeated => "already_seated",
            TableError::NotSeated => "not_seated",
            TableError::NotCreator => "not_creator",
            TableError::NotEnoughPlayers { .. } => "not_enough_players",
            TableError::NotWaiting => "table_not_waiting",
            TableError::Rules(_) => "invalid_rules",
            TableError::Rule(e) => e.code(),
        }
    }
}

/// What can be asked of a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableCommand {
    Join {
        account_id: PlayerId,
        username: String,
    },
    Leave {
        account_id: PlayerId,
    },
    Start {
        account_id: PlayerId,
    },
    Move {
        account_id: PlayerId,
        mv: Move,
    },
}

/// A table: its rules, who sits, and the game once started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub ruleset: String,
    pub rules: Rules,
    pub seats: usize,
    pub creator: PlayerId,
    /// Seated players by seat (before the start, seats may have gaps).
    pub players: Vec<Option<Seated>>,
    pub game: Option<Game>,
    /// Number of events folded.
    pub version: u64,
}

impl Table {
    /// The first events of a new table: created, and its creator at seat 0.
    pub fn create(
        ruleset: &str,
        options: &serde_json::Map<String, serde_json::Value>,
        seats: usize,
        creator: &PlayerId,
        username: &str,
    ) -> Result<Vec<TableEvent>, TableError> {
        let preset = Preset::from_id(ruleset)?;
        let rules = preset.with_options(options)?;
        if seats < rules.players.min || seats > rules.players.max {
            return Err(RulesError::Invalid(format!(
                "{} takes {} to {} players, not {seats}",
                preset.id(),
                rules.players.min,
                rules.players.max
            ))
            .into());
        }
        Ok(vec![
            TableEvent::TableCreated(TableCreated {
                ruleset: preset.id().to_owned(),
                rules,
                seats,
                creator: creator.clone(),
            }),
            TableEvent::PlayerJoined(Seated {
                seat: 0,
                account_id: creator.clone(),
                username: username.to_owned(),
            }),
        ])
    }

    /// Rebuilds a table from its log; None when the log does not begin with
    /// `table_created`.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a TableEvent>) -> Option<Table> {
        let mut it = events.into_iter();
        let TableEvent::TableCreated(c) = it.next()? else {
            return None;
        };
        let mut t = Table {
            ruleset: c.ruleset.clone(),
            rules: c.rules.clone(),
            seats: c.seats,
            creator: c.creator.clone(),
            players: vec![None; c.seats],
            game: None,
            version: 1,
        };
        for e in it {
            t.evolve(e);
        }
        Some(t)
    }

    /// Applies one event. Never fails.
    pub fn evolve(&mut self, event: &TableEvent) {
        self.version += 1;
        match event {
            TableEvent::TableCreated(_) => {}
            TableEvent::PlayerJoined(s) => {
                if let Some(slot) = self.players.get_mut(s.seat) {
                    *slot = Some(s.clone());
                }
            }
            TableEvent::PlayerLeft { seat } => {
                if let Some(slot) = self.players.get_mut(*seat) {
                    *slot = None;
                }
            }
            TableEvent::GameStarted { players } => {
                self.players = players.iter().cloned().map(Some).collect();
                self.game = Game::new(self.rules.clone(), players.len()).ok();
            }
            TableEvent::Game(e) => {
                if let Some(g) = self.game.as_mut() {
                    g.evolve(e);
                }
            }
        }
    }

    pub fn status(&self) -> Status {
        self.game.as_ref().map_or(Status::Waiting, Game::status)
    }

    /// The seat of an account, if it sits here.
    pub fn seat_of(&self, account_id: &PlayerId) -> Option<Seat> {
        self.players
            .iter()
            .flatten()
            .find(|p| &p.account_id == account_id)
            .map(|p| p.seat)
    }

    pub fn seated(&self) -> impl Iterator<Item = &Seated> {
        self.players.iter().flatten()
    }

    /// The events a command produces, or why it is refused. Pure.
    pub fn decide<R: Rng + ?Sized>(
        &self,
        command: &TableCommand,
        rng: &mut R,
    ) -> Result<Vec<TableEvent>, TableError> {
        let waiting = self.game.is_none();
        match command {
            TableCommand::Join {
                account_id,
                username,
            } => {
                if !waiting {
                    return Err(TableError::NotWaiting);
                }
                if self.seat_of(account_id).is_some() {
                    return Err(TableError::AlreadySeated);
                }
                let seat = self
                    .players
                    .iter()
                    .position(Option::is_none)
                    .ok_or(TableError::Full)?;
                Ok(vec![TableEvent::PlayerJoined(Seated {
                    seat,
                    account_id: account_id.clone(),
                    username: username.clone(),
                })])
            }
            TableCommand::Leave { account_id } => {
                if !waiting {
                    return Err(TableError::NotWaiting);
                }
                let seat = self.seat_of(account_id).ok_or(TableError::NotSeated)?;
                Ok(vec![TableEvent::PlayerLeft { seat }])
            }
            TableCommand::Start { account_id } => {
                if *account_id != self.creator {
                    return Err(TableError::NotCreator);
                }
                if !waiting {
                    return Err(TableError::NotWaiting);
                }
                let players: Vec<Seated> = self
                    .seated()
                    .enumerate()
                    .map(|(seat, p)| Seated { seat, ..p.clone() })
                    .collect();
                let need = self.rules.players.min;
                if players.len() < need {
                    return Err(TableError::NotEnoughPlayers {
                        have: players.len(),
                        need,
                    });
                }
                let mut game = Game::new(self.rules.clone(), players.len())?;
                let mut events = vec![TableEvent::GameStarted { players }];
                let mut out = Vec::new();
                game.execute(&Command::Start, rng, &mut out)?;
                events.extend(out.into_iter().map(TableEvent::Game));
                Ok(events)
            }
            TableCommand::Move { account_id, mv } => {
                let game = self.game.as_ref().ok_or(RuleError::NotStarted)?;
                let seat = self.seat_of(account_id).ok_or(TableError::NotSeated)?;
                let events = game.decide(
                    &Command::Move {
                        seat,
                        mv: mv.clone(),
                    },
                    rng,
                )?;
                Ok(events.into_iter().map(TableEvent::Game).collect())
            }
        }
    }

    /// `decide` then `evolve` in place, without copying the game for a move.
    pub fn execute<R: Rng + ?Sized>(
        &mut self,
        command: &TableCommand,
        rng: &mut R,
    ) -> Result<Vec<TableEvent>, TableError> {
        if let TableCommand::Move { account_id, mv } = command {
            let seat = self.seat_of(account_id);
            let game = self.game.as_mut().ok_or(RuleError::NotStarted)?;
            let seat = seat.ok_or(TableError::NotSeated)?;
            let mut out = Vec::new();
            game.execute(
                &Command::Move {
                    seat,
                    mv: mv.clone(),
                },
                rng,
                &mut out,
            )?;
            self.version += out.len() as u64;
            return Ok(out.into_iter().map(TableEvent::Game).collect());
        }
        let events = self.decide(command, rng)?;
        for e in &events {
            self.evolve(e);
        }
        Ok(events)
    }
}

#[cfg(test)]
mod tests;
