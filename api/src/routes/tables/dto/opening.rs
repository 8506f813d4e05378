//! The rule sets, and what opens or fills a table: a new table, quick
//! play, a bot.

use domain::bots::Level;
use domain::rules::TableOptions;
use domain::{ClientSeed, Clock, Lobby, Rules, Visibility};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::classique_rules;
use crate::codes::ProblemCode;
use crate::error::ApiError;

/// A preset rule set.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "classique",
    "name": "8 américain classique",
    "description": "Classic rules (S0): 8 wild but not on a 2, ...",
    "rules": classique_rules()
}))]
pub struct RulesetDto {
    /// What `POST /v1/tables` takes as `ruleset`.
    pub id: String,
    pub name: String,
    pub description: String,
    /// Every knob of docs/RULES.md §3 at its default for this preset.
    pub rules: Rules,
}

/// Opening a table.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"ruleset": "classique", "options": {"jokers": true, "target": 300}, "seats": 4}))]
pub struct NewTable {
    /// A preset id from `GET /v1/rulesets`.
    pub ruleset: String,
    /// Options of docs/RULES.md §5 (`target`, `rounds`, `decks`, the preset's
    /// own, or any knob by name).
    #[serde(default)]
    #[schema(value_type = Option<TableOptions>)]
    pub options: Option<Map<String, Value>>,
    /// The most players the table takes (within the rules' bounds).
    #[serde(deserialize_with = "crate::routes::integer::u32")]
    pub seats: u32,
    /// A turn clock (docs/RULES.md D37-D39); absent: no time limit.
    #[serde(default)]
    pub clock: Option<Clock>,
    /// Bots that take the seats after the caller's, in order (D42).
    #[serde(default)]
    #[schema(max_items = 17)]
    pub bots: Vec<BotRequest>,
    /// `private`: listed to its players only, joined through the
    /// invitation its creator is shown (`invite_code`); default `public`.
    #[serde(default)]
    pub visibility: Visibility,
    /// The caller's seed, mixed into every shuffle (docs/API.md "Fair
    /// deals"): 1 to 64 ASCII characters from `!` to `~`; absent: the
    /// server draws one.
    #[serde(default)]
    pub client_seed: Option<ClientSeed>,
}

/// The longest wait for quick play's bots, in seconds.
pub const MAX_BOTS_AFTER: u32 = 3600;

/// Asking quick play for a table.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"ruleset": "classique", "seats": 2, "bots_after": 30}))]
pub struct QuickPlay {
    /// A preset id from `GET /v1/rulesets`.
    pub ruleset: String,
    /// Options, as when opening a table: tables match on the rules they
    /// make, however spelled.
    #[serde(default)]
    #[schema(value_type = Option<TableOptions>)]
    pub options: Option<Map<String, Value>>,
    /// The number of players (within the rules' bounds).
    #[serde(deserialize_with = "crate::routes::integer::u32")]
    pub seats: u32,
    /// A turn clock; absent: no time limit.
    #[serde(default)]
    pub clock: Option<Clock>,
    /// Seconds (1 to 3600) after the table opened when `basic` bots take
    /// its empty seats and it starts; absent: it waits for people.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 3600)]
    pub bots_after: Option<u32>,
    /// The caller's seed, as when opening a table.
    #[serde(default)]
    pub client_seed: Option<ClientSeed>,
}

/// Taking a seat (joining, through an invitation, at a rematch): a body
/// that may be left out.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"client_seed": "d4f1c7e2a9b05e38"}))]
pub struct SeatRequest {
    /// The caller's seed, mixed into every shuffle (docs/API.md "Fair
    /// deals"): 1 to 64 ASCII characters from `!` to `~`; absent: the
    /// server draws one.
    #[serde(default)]
    pub client_seed: Option<ClientSeed>,
}

impl QuickPlay {
    /// Quick play's lobby: the table starts by itself when full, with its
    /// bots after the wait (422 `invalid_body` for a wait out of range).
    pub fn lobby(&self) -> Result<Lobby, ApiError> {
        if let Some(s) = self
            .bots_after
            .filter(|s| !(1..=MAX_BOTS_AFTER).contains(s))
        {
            return Err(ApiError::InvalidBody(format!(
                "bots_after is {s}: it must be 1 to {MAX_BOTS_AFTER} seconds"
            )));
        }
        Ok(Lobby {
            starts_when_full: true,
            bots_after: self.bots_after,
            ..Lobby::default()
        })
    }
}

/// A bot to seat.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"level": "basic"}))]
pub struct BotRequest {
    /// `random`, `basic` or `strong` (else 422 `invalid_bot`).
    #[schema(example = "basic")]
    pub level: String,
}

impl BotRequest {
    /// The levels of the bots a new table of `seats` opens with: 422
    /// `invalid_bot` for an unknown level, or for as many bots as seats or
    /// more (the creator takes a seat): a request that cannot be met, not a
    /// table that filled up.
    pub fn levels(bots: &[BotRequest], seats: u32) -> Result<Vec<Level>, ApiError> {
        if !bots.is_empty() && bots.len() >= seats as usize {
            return Err(ApiError::Validation {
                code: ProblemCode::InvalidBot,
                detail: format!(
                    "{} bots for {seats} seats: the creator takes one, so at most {}",
                    bots.len(),
                    seats.saturating_sub(1)
                ),
            });
        }
        bots.iter().map(BotRequest::level).collect()
    }

    /// The level asked for, or 422 `invalid_bot`.
    pub fn level(&self) -> Result<Level, ApiError> {
        self.level
            .parse()
            .map_err(|e: domain::bots::UnknownLevel| ApiError::Validation {
                code: ProblemCode::InvalidBot,
                detail: e.to_string(),
            })
    }
}
