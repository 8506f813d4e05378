//! Who sits where: a player's id as the server names its accounts, and a
//! seat as the log records it.

use serde::{Deserialize, Serialize};

use crate::bots::Level;
use crate::event::Seat;
use crate::fair::ClientSeed;

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

/// Who sits where. In the log, as everywhere a client reads it, a bot's
/// seat has no account (`account_id: null`, its `bot` level says what holds
/// it); within the engine its id is `bot:<seat>` (older logs wrote it so,
/// and still read). A person is named by their account's random id only:
/// their name is the account's, read when shown, so that erasing the
/// account forgets it without touching a hash (event format 3; the
/// `username` that formats 1 and 2 wrote is not read).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "SeatedData", try_from = "SeatedData")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"seat": 1, "account_id": "6f1c2a8e-3b7d-4c59-9e21-0d4f5a6b7c8d"})))]
pub struct Seated {
    #[cfg_attr(feature = "openapi", schema(value_type = usize))]
    pub seat: Seat,
    /// The account; null for a bot.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, required = true))]
    pub account_id: PlayerId,
    /// The level of the bot that holds the seat (D42); absent: a person.
    #[cfg_attr(feature = "openapi", schema(required = false))]
    pub bot: Option<Level>,
    /// A guest's seat (an account without a password): a game with one is
    /// not rated (D43), whatever the account becomes; absent: false.
    #[cfg_attr(feature = "openapi", schema(required = false))]
    pub guest: bool,
    /// The seat's own seed, mixed into every shuffle of the game (docs/API.md
    /// "Fair deals"): the player's, or drawn by the server for a player who
    /// gave none and for a bot; absent in logs older than fair deals.
    #[cfg_attr(feature = "openapi", schema(required = false))]
    pub client_seed: Option<ClientSeed>,
}

/// [`Seated`] as its data is written and read.
#[derive(Serialize, Deserialize)]
struct SeatedData {
    seat: Seat,
    account_id: Option<PlayerId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bot: Option<Level>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    guest: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_seed: Option<ClientSeed>,
}

impl From<Seated> for SeatedData {
    fn from(s: Seated) -> Self {
        SeatedData {
            seat: s.seat,
            account_id: s.bot.is_none().then_some(s.account_id),
            bot: s.bot,
            guest: s.guest,
            client_seed: s.client_seed,
        }
    }
}

impl TryFrom<SeatedData> for Seated {
    type Error = String;

    fn try_from(d: SeatedData) -> Result<Self, String> {
        let account_id = match (d.account_id, d.bot) {
            (Some(id), _) => id,
            (None, Some(_)) => Seated::bot_id(d.seat),
            (None, None) => {
                return Err(format!("seat {}: a person's account_id is missing", d.seat))
            }
        };
        Ok(Seated {
            seat: d.seat,
            account_id,
            bot: d.bot,
            guest: d.guest,
            client_seed: d.client_seed,
        })
    }
}

impl Seated {
    /// A bot of `level` at `seat`, with the seed the server drew for it:
    /// its id is not an account's (`bot:<seat>`).
    pub fn bot(seat: Seat, level: Level, client_seed: Option<ClientSeed>) -> Seated {
        Seated {
            seat,
            account_id: Seated::bot_id(seat),
            bot: Some(level),
            guest: false,
            client_seed,
        }
    }

    /// The engine's id of the bot at `seat`.
    pub(crate) fn bot_id(seat: Seat) -> PlayerId {
        PlayerId::from(format!("bot:{seat}"))
    }
}

/// A person coming to a table: who, whether a guest (see
/// [`Seated::guest`]), and the seed they bring (see [`Seated::client_seed`];
/// the server draws one for whoever sent none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Newcomer {
    pub account_id: PlayerId,
    pub guest: bool,
    pub client_seed: Option<ClientSeed>,
}

impl Newcomer {
    /// Seated at `seat`.
    pub(crate) fn at(&self, seat: Seat) -> Seated {
        Seated {
            seat,
            account_id: self.account_id.clone(),
            bot: None,
            guest: self.guest,
            client_seed: self.client_seed.clone(),
        }
    }
}
