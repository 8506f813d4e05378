//! The events of a table's log: the lobby's and the server's own, and the
//! game's, with their JSON form and the fast read of a stored event's data.

use serde::{Deserialize, Serialize};

use super::correction::ResultCorrected;
use super::lobby::{RematchOf, Visibility};
use super::{BotReason, Clock, PlayerId, Seated};
use crate::bots::Level;
use crate::event::{Event, Seat};
use crate::fair::{ClientSeed, SeedHash, ServerSeed};
use crate::rules::Rules;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TableCreated {
    pub ruleset: String,
    pub rules: Rules,
    /// The most players the table takes.
    pub seats: usize,
    pub creator: PlayerId,
    /// The turn clock (D37); absent: no time limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<Clock>,
    /// `private`: never listed to others, joined through an invitation
    /// only; absent: `public`.
    #[serde(default, skip_serializing_if = "Visibility::is_public")]
    pub visibility: Visibility,
    /// The game starts by itself once every seat is taken, and nobody
    /// starts it or seats a bot by hand (quick play, a rematch); absent:
    /// false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub starts_when_full: bool,
    /// Quick play: this many seconds after the table opened, `basic` bots
    /// take its empty seats and the game starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bots_after: Option<u32>,
    /// A rematch: the table it follows, whose persons its seats are kept
    /// for, and its first dealer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rematch_of: Option<RematchOf>,
    /// The SHA-256 of the table's secret server seed (docs/API.md "Fair
    /// deals"), which `seed_revealed` logs once the game is over; absent in
    /// logs older than fair deals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_hash: Option<SeedHash>,
}

/// Every event of a table's log: the table's own, whose serde form (the
/// public `{type, data}`) is derived here, and the game's
/// ([`TableEvent::Game`], in the game's own form).
#[derive(
    Clone, Debug, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::VariantNames,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TableEvent {
    // The large, rare events are boxed, as the game's are: an event is
    // moved several times on its way from the engine or the log, and a
    // replay parses every one.
    TableCreated(Box<TableCreated>),
    PlayerJoined(Seated),
    PlayerLeft {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
    },
    /// The game starts with these players, seated 0..n-1 in seat order.
    GameStarted {
        players: Vec<Seated>,
    },
    /// D38: the seat's deadline (as recorded) passed; its timeout move follows.
    TurnTimedOut {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
        /// RFC 3339 UTC.
        deadline: String,
    },
    /// D39: the server plays for the seat until its player comes back.
    SeatAway {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
    },
    SeatBack {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
    },
    /// D40: the player resigned; a bot plays the seat to the end.
    PlayerResigned {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
    },
    /// D41: the game is aborted; no ranking.
    GameAborted {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        by: Seat,
    },
    /// D42: the move that follows is the server's for the seat, chosen by
    /// `bot` (`level@version`) from the seat's view and `seed` (hidden from
    /// the other seats while the round runs).
    BotMoved {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
        bot: String,
        reason: BotReason,
        seed: u32,
        /// How many playouts a level that searches (`strong`) was given;
        /// absent for the others, and in older logs (the full search).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        playouts: Option<u32>,
    },
    /// D42: a bot of `level` takes the seat while the table waits.
    BotSeated {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
        level: Level,
        /// The seed the server drew for the bot's seat (see
        /// [`Seated::client_seed`]); absent in logs older than fair deals.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_seed: Option<ClientSeed>,
    },
    /// A player of this finished table opened the next one, `table_id`
    /// (`POST /v1/tables/{id}/rematch`): the others may join it.
    RematchOffered {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
        #[cfg_attr(feature = "openapi", schema(value_type = String, format = Uuid))]
        table_id: String,
    },
    /// A waiting rematch kept `seat` for a person who will never come
    /// (their account was erased): it is closed, and never starts.
    RematchDeclined {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
    },
    /// The game is over (ended, aborted): the table's server seed, whose
    /// hash `table_created` logged. Every deal and reshuffle of the log can
    /// now be recomputed from it (docs/API.md "Fair deals").
    SeedRevealed {
        server_seed: ServerSeed,
    },
    /// An admin corrected the finished game's result (docs/API.md
    /// "Corrections and sanctions"); the last correction stands.
    ResultCorrected(Box<ResultCorrected>),
    /// The game's own events, in their own `{type, data}` form (not the
    /// table's: serialised and read apart, see [`TableEvent::to_json`]).
    #[serde(skip)]
    Game(Event),
}

impl TableEvent {
    /// The `type` of the public log (the table's own events' are their
    /// serde tags, named alike by strum).
    pub fn kind(&self) -> &'static str {
        match self {
            TableEvent::Game(e) => e.kind(),
            own => own.into(),
        }
    }

    /// Whether `kind` is one of the table's own events' types.
    pub(crate) fn is_own(kind: &str) -> bool {
        use strum::VariantNames;
        kind != "game" && Self::VARIANTS.contains(&kind)
    }

    /// The event's `data` as JSON, complete (for the log and replays).
    pub fn data(&self) -> serde_json::Value {
        self.to_json()["data"].take()
    }

    /// `{type, data}`.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            TableEvent::Game(e) => serde_json::to_value(e),
            own => serde_json::to_value(own),
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
        if !Self::is_own(kind) {
            return Ok(TableEvent::Game(Tagged::read(kind, data)?));
        }
        Tagged::read(kind, data)
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
