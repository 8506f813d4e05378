//! The documents of the table routes: what a client sends and gets.

use chrono::{DateTime, Utc};
use domain::bots::Level;
use domain::rules::TableOptions;
use domain::{
    Clock, GameEnded, Lobby, Move, PlayerId, PlayerView, Rules, SeatView, Status, TableEvent,
    Visibility,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::headers::IfMatch;
use crate::error::{ApiError, ProblemCode};
use crate::log::StoredEvent;
use crate::routes::shared::cursor_after;
use crate::store::tables::{ListedTable, SeatRow};
use crate::table_service::{redact_parsed, CachedTable, TableService};

/// The rules of `classique`, for the examples.
fn classique_rules() -> Value {
    serde_json::to_value(domain::Preset::Classique.rules()).expect("rules serialise")
}

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

/// A seated player in a table's summary.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "bot": null, "username": "alice", "hand_size": 5, "total": 12, "away": false, "resigned": false}))]
pub struct SummaryPlayer {
    pub seat: usize,
    #[serde(flatten)]
    pub holder: Holder,
    pub username: String,
    /// Cards in hand (0 before the deal).
    pub hand_size: usize,
    /// Points so far.
    pub total: i32,
    #[serde(flatten)]
    pub presence: SeatPresence,
}

/// Who holds a seat: an account (its id), or a bot (its level).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({"account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "bot": null}))]
pub struct Holder {
    /// The account; null for a bot.
    #[schema(value_type = Option<Uuid>, required = true)]
    pub account_id: Option<PlayerId>,
    /// The bot's level; null for a person.
    #[schema(required = true)]
    pub bot: Option<Level>,
}

impl Holder {
    pub fn of(seated: &domain::Seated) -> Self {
        Self {
            account_id: seated.bot.is_none().then(|| seated.account_id.clone()),
            bot: seated.bot,
        }
    }
}

/// Whether a seat's player is there (docs/RULES.md D39, D40): the server
/// plays an away or resigned seat.
#[derive(Debug, Clone, Copy, Default, Serialize, ToSchema)]
#[schema(example = json!({"away": false, "resigned": false}))]
pub struct SeatPresence {
    /// Marked away after timeouts in a row, until its player comes back.
    pub away: bool,
    pub resigned: bool,
}

impl SeatPresence {
    /// The presence of `seat`'s player (nobody is away before the game).
    pub fn of(table: &domain::Table, seat: usize) -> Self {
        table
            .presence
            .get(seat)
            .map(|p| Self {
                away: p.away,
                resigned: p.resigned,
            })
            .unwrap_or_default()
    }
}

/// What names a table and where it stands: the fields its summary and its
/// entry in a list share.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11",
    "ruleset": "classique",
    "status": "waiting",
    "version": 2,
    "created_by": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10",
    "created_at": "2025-01-31T18:04:05.123456Z"
}))]
pub struct TableHead {
    pub id: Uuid,
    pub ruleset: String,
    pub status: Status,
    /// The seq of the table's last event (its ETag).
    pub version: i64,
    pub created_by: Uuid,
    pub created_at: DateTime<Utc>,
}

/// The example of a [`TableSummary`], alone and in a page.
pub fn table_summary_example() -> Value {
    serde_json::json!({
        "id": "6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11",
        "ruleset": "classique",
        "rules": classique_rules(),
        "status": "playing",
        "seats": 4,
        "players": [
            {"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "bot": null, "username": "alice", "hand_size": 5, "total": 0, "away": false, "resigned": false},
            {"seat": 1, "account_id": "7d1e0c8a-3b9f-4e2d-8c6a-5f4b3a2e1d00", "bot": null, "username": "bob", "hand_size": 7, "total": 0, "away": false, "resigned": false}
        ],
        "round": 1,
        "version": 9,
        "created_by": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10",
        "created_at": "2025-01-31T18:04:05.123456Z",
        "result": null,
        "clock": {"turn_seconds": 60, "away_after": 2, "deadline": "2025-01-31T18:05:05.123456Z"},
        "visibility": "public",
        "invite_code": null,
        "starts_when_full": false,
        "bots_after": null,
        "rematch_of": null,
        "rematch": null
    })
}

/// A table's public summary.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = table_summary_example)]
pub struct TableSummary {
    #[serde(flatten)]
    pub table: TableHead,
    /// The table's rules, every knob.
    pub rules: Rules,
    /// The most players the table takes.
    pub seats: usize,
    /// Seated players by seat (renumbered 0..n-1 at the start).
    pub players: Vec<SummaryPlayer>,
    /// The current (or last) round; null before the deal.
    #[schema(required = true)]
    pub round: Option<u32>,
    /// The final ranking once `finished` (null before).
    #[schema(required = true)]
    pub result: Option<GameEnded>,
    /// The turn clock (docs/RULES.md D37); null: no time limit.
    #[schema(required = true)]
    pub clock: Option<ClockDto>,
    /// `private`: listed to its players only, joined through its
    /// invitation.
    pub visibility: Visibility,
    /// A private table's invitation (`POST /v1/invites/{code}`), shown to
    /// its creator only; null for everyone else.
    #[schema(required = true, example = "7k2m9q4xtv")]
    pub invite_code: Option<String>,
    /// The game starts by itself once every seat is taken (quick play, a
    /// rematch).
    pub starts_when_full: bool,
    /// Quick play: seconds after the table opened when `basic` bots take
    /// its empty seats; null: none.
    #[schema(required = true)]
    pub bots_after: Option<u32>,
    /// The table whose rematch this one is; null: none.
    #[schema(required = true)]
    pub rematch_of: Option<Uuid>,
    /// This table's rematch, once a player opened it; null: none yet.
    #[schema(required = true)]
    pub rematch: Option<Uuid>,
}

/// A table's clock (docs/RULES.md D37-D39) and its running deadline.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"turn_seconds": 60, "away_after": 2, "deadline": "2025-01-31T18:05:05.123456Z"}))]
pub struct ClockDto {
    /// Seconds a seat has to act.
    pub turn_seconds: u32,
    /// Timeouts in a row before a seat is away.
    pub away_after: u32,
    /// When the seat on turn times out; null when no seat must act, or the
    /// server plays it (away, resigned).
    #[schema(required = true)]
    pub deadline: Option<DateTime<Utc>>,
}

impl ClockDto {
    /// The table's clock with its deadline, if it has a clock.
    pub fn of(l: &CachedTable) -> Option<Self> {
        let clock = l.table.clock?;
        let running = l.table.must_act().is_some() && l.table.automatic().is_none();
        Some(Self {
            turn_seconds: clock.turn_seconds,
            away_after: clock.away_after,
            deadline: l.due_at.filter(|_| running),
        })
    }
}

impl TableSummary {
    pub fn of(id: Uuid, l: &CachedTable) -> Self {
        let t = &l.table;
        let game = t.game.as_ref();
        let view = game.map(|g| g.view(None));
        let players = t
            .seated()
            .map(|s| {
                let p = view.as_ref().and_then(|v| v.players.get(s.seat));
                SummaryPlayer {
                    seat: s.seat,
                    holder: Holder::of(s),
                    username: s.username.clone(),
                    hand_size: p.map_or(0, |p| p.hand_size),
                    total: p.map_or(0, |p| p.total),
                    presence: SeatPresence::of(t, s.seat),
                }
            })
            .collect();
        Self {
            table: TableHead {
                id,
                ruleset: t.ruleset.clone(),
                status: t.status(),
                version: l.version(),
                created_by: l.created_by,
                created_at: l.created_at,
            },
            rules: t.rules.clone(),
            seats: t.seats,
            players,
            round: game.and_then(|g| g.round()).map(|r| r.number),
            result: game.and_then(|g| g.result()).cloned(),
            clock: ClockDto::of(l),
            visibility: t.lobby.visibility,
            invite_code: None,
            starts_when_full: t.lobby.starts_when_full,
            bots_after: t.lobby.bots_after,
            rematch_of: t.lobby.rematch_of.as_ref().map(|of| table_id(&of.table_id)),
            rematch: t.lobby.rematch.as_deref().map(table_id),
        }
    }

    /// The summary as `caller` is shown it: with the invitation when they
    /// created this private table.
    pub async fn shown_to(mut self, tables: &TableService, caller: Uuid) -> Result<Self, ApiError> {
        let TableHead { id, created_by, .. } = self.table;
        self.invite_code = tables
            .invite_code_for(id, self.visibility, created_by, caller)
            .await?;
        Ok(self)
    }
}

/// A table's id as its log holds it (the nil id if it were not one, which
/// the server never writes).
fn table_id(id: &str) -> Uuid {
    id.parse().unwrap_or_default()
}

/// A seated player in a list.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "username": "alice"}))]
pub struct ListedPlayer {
    pub seat: i32,
    pub account_id: Uuid,
    pub username: String,
}

/// The example of a [`ListedTableDto`], alone and in a page.
fn listed_table_example() -> Value {
    serde_json::json!({
        "id": "6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11",
        "ruleset": "classique",
        "status": "waiting",
        "seats": 4,
        "players": [{"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "username": "alice"}],
        "version": 2,
        "created_by": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10",
        "created_at": "2025-01-31T18:04:05.123456Z",
        "visibility": "public"
    })
}

/// A table in a list.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = listed_table_example)]
pub struct ListedTableDto {
    #[serde(flatten)]
    pub table: TableHead,
    /// The most players the table takes.
    #[schema(required = true)]
    pub seats: Option<i32>,
    pub players: Vec<ListedPlayer>,
    /// `private` tables are listed to their creator and players only.
    pub visibility: Visibility,
}

impl ListedTableDto {
    pub fn of(t: ListedTable, seats: Vec<SeatRow>) -> Self {
        Self {
            table: TableHead {
                id: t.id,
                ruleset: t.ruleset,
                status: t.status,
                version: t.version,
                created_by: t.created_by,
                created_at: t.created_at,
            },
            seats: t.seats,
            visibility: t.visibility,
            players: seats
                .into_iter()
                .map(|s| ListedPlayer {
                    seat: s.seat,
                    account_id: s.account_id,
                    username: s.username,
                })
                .collect(),
        }
    }
}

/// A page of tables, oldest first; pass `next` as `after` for the next page
/// (null: no more).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "tables": [listed_table_example()],
    "next": "1738346645123456.6f1c2a5e2b7d4c1e9a530d4f8b2e7c11"
}))]
pub struct TablePage {
    pub tables: Vec<ListedTableDto>,
    #[schema(required = true)]
    pub next: Option<String>,
}

impl TablePage {
    /// The first `limit` of `rows` (one more was asked for, to know
    /// whether a next page exists), with the cursor of the last.
    pub fn of(rows: Vec<(ListedTable, Vec<SeatRow>)>, limit: usize) -> Self {
        let more = rows.len() > limit;
        let page: Vec<_> = rows.into_iter().take(limit).collect();
        // The cursor: the last table's creation (µs) and id.
        let next = page
            .last()
            .filter(|_| more)
            .map(|(t, _)| cursor_after(t.created_at, t.id));
        Self {
            tables: page
                .into_iter()
                .map(|(t, s)| ListedTableDto::of(t, s))
                .collect(),
            next,
        }
    }
}

/// A player in a view: the engine's, and who sits there.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"seat": 1, "account_id": "7d1e0c8a-3b9f-4e2d-8c6a-5f4b3a2e1d00", "bot": null, "username": "bob", "hand_size": 7, "total": 0, "announced": false, "out": false, "away": false, "resigned": false}))]
pub struct ViewPlayer {
    #[serde(flatten)]
    pub player: PlayerView,
    #[serde(flatten)]
    pub holder: Holder,
    pub username: String,
    #[serde(flatten)]
    pub presence: SeatPresence,
}

/// The example of a [`TableView`], alone and in a move's answer.
fn table_view_example() -> Value {
    serde_json::json!({
        "table_id": "6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11",
        "version": 9,
        "status": "playing",
        "clock": null,
        "deadline": null,
        "round": 1,
        "my_seat": 0,
        "hand": ["8H", "10S", "QC"],
        "top_card": "7H",
        "active_suit": null,
        "active_letter": null,
        "active_rank": null,
        "direction": "clockwise",
        "current_seat": 0,
        "stock_size": 30,
        "discard_size": 1,
        "players": [
            {"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "bot": null, "username": "alice", "hand_size": 3, "total": 0, "announced": false, "out": false, "away": false, "resigned": false},
            {"seat": 1, "account_id": "7d1e0c8a-3b9f-4e2d-8c6a-5f4b3a2e1d00", "bot": null, "username": "bob", "hand_size": 7, "total": 0, "announced": false, "out": false, "away": false, "resigned": false}
        ],
        "pending": {"kind": "none", "seat": null, "draw": null, "count": null, "card": null, "frozen": false, "challengeable": null},
        "legal_moves": [{"type": "play", "card": "8H", "suit": "S", "announce": false}, {"type": "draw"}],
        "result": null
    })
}

/// The caller's view (docs/API.md "The player view"): the engine's seat view,
/// with the table id, version, status and the players' names. A caller who
/// does not sit at the table gets the spectator view: no hand, no moves.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = table_view_example)]
pub struct TableView {
    pub table_id: Uuid,
    pub version: i64,
    pub status: Status,
    /// The turn clock and the running deadline; null: no time limit.
    #[schema(required = true)]
    pub clock: Option<ClockDto>,
    /// The caller's deadline when it is theirs to act on a clocked table
    /// (null otherwise).
    #[schema(required = true)]
    pub deadline: Option<DateTime<Utc>>,
    #[serde(flatten)]
    pub seat: SeatView<ViewPlayer>,
}

impl TableView {
    /// `account_id`'s view: the engine's seat view (a spectator's when not
    /// seated; before the first deal, the lobby's, nothing dealt), with the
    /// table's id, version and status, and who sits at each seat.
    pub fn of(id: Uuid, l: &CachedTable, account_id: Uuid) -> Self {
        let t = &l.table;
        let seat = l.seat_of(account_id);
        // Every seat of a started game, or listed before it, is taken.
        let who = |player: PlayerView| {
            let seated = t.players.get(player.seat).and_then(Option::as_ref)?;
            Some(ViewPlayer {
                presence: SeatPresence::of(t, player.seat),
                player,
                holder: Holder::of(seated),
                username: seated.username.clone(),
            })
        };
        let view = t.view_with(seat, who);
        Self {
            table_id: id,
            version: l.version(),
            status: t.status(),
            clock: ClockDto::of(l),
            deadline: ClockDto::of(l)
                .and_then(|c| c.deadline)
                .filter(|_| seat.is_some() && t.must_act() == seat),
            seat: view,
        }
    }
}

/// A move.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"move": {"type": "play", "card": "8H", "suit": "S", "announce": false}, "expected_version": 9}))]
pub struct MoveRequest {
    /// One of the caller's `legal_moves`: `{"type":"play","card":"8H",
    /// "suit":"S","announce":false}` (`suit` for a suit-naming card,
    /// `letter` for a star, `as` for a 757 joker), `{"type":"draw"}`,
    /// `{"type":"pass"}`, `{"type":"challenge","seat":2}`.
    #[serde(rename = "move")]
    #[schema(value_type = Move)]
    pub mv: Value,
    /// The version the move is based on (as `If-Match`); stale: 409.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::routes::integer::option_i64"
    )]
    pub expected_version: Option<i64>,
}

impl MoveRequest {
    /// The version the move is based on, from `If-Match` or the body (both:
    /// they must agree, else 409 as for a stale one).
    pub fn expected_version(&self, if_match: IfMatch) -> Result<Option<i64>, ApiError> {
        match (if_match.0, self.expected_version) {
            (Some(a), Some(b)) if a != b => Err(ApiError::VersionConflict { expected: b }),
            (a, b) => Ok(a.or(b)),
        }
    }
}

/// What a move did: the new version, the new events as the caller may see
/// them, and the caller's view after them.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "version": 10,
    "events": [{
        "seq": 10, "type": "card_played", "v": 1, "at": "2025-01-31T18:04:05.123456Z",
        "data": {"seat": 0, "card": "8H", "suit": "S", "announce": false},
        "prev_hash": "5a1f0e0c9b7d3e2a4f6b8c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f",
        "hash": "0c9d8e7f6a5b4c3d2e1f5a1f0e0c9b7d3e2a4f6b8c1d0e9f8a7b6c5d4e3f2a1b"
    }],
    "view": table_view_example()
}))]
pub struct MoveAnswer {
    pub version: i64,
    /// Redacted for the caller; `hash`/`prev_hash` are those of the full
    /// data (verify the chain with `GET /v1/tables/{id}/log` once finished).
    pub events: Vec<StoredEvent>,
    pub view: TableView,
}

impl MoveAnswer {
    /// The answer to `account_id`'s move: the table after it, the events
    /// it appended (stored, and parsed) as that account may see them.
    pub fn of(
        id: Uuid,
        l: &CachedTable,
        account_id: Uuid,
        stored: &[StoredEvent],
        events: &[TableEvent],
    ) -> Self {
        let seat = l.seat_of(account_id);
        Self {
            version: l.version(),
            events: stored
                .iter()
                .zip(events)
                .map(|(e, parsed)| redact_parsed(e, parsed, seat))
                .collect(),
            view: TableView::of(id, l, account_id),
        }
    }
}

/// A page of the caller's events.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "events": [{
        "seq": 3, "type": "player_joined", "v": 1, "at": "2025-01-31T18:04:05.123456Z",
        "data": {"seat": 1, "account_id": "7d1e0c8a-3b9f-4e2d-8c6a-5f4b3a2e1d00", "username": "bob"},
        "prev_hash": "5a1f0e0c9b7d3e2a4f6b8c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f",
        "hash": "0c9d8e7f6a5b4c3d2e1f5a1f0e0c9b7d3e2a4f6b8c1d0e9f8a7b6c5d4e3f2a1b"
    }],
    "next": 3
}))]
pub struct EventPage {
    /// In `seq` order, redacted for the caller (other hands, the stock and
    /// cards others drew removed while the round runs; hashes are those of
    /// the full data).
    pub events: Vec<StoredEvent>,
    /// The `after` of the next request: the last `seq` returned, or the
    /// `after` asked when none.
    pub next: i64,
}

/// `after`, `wait` and `limit` of `GET /v1/tables/{id}/events`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Only events with `seq` above this (default 0).
    #[param(minimum = 0)]
    pub after: Option<i64>,
    /// Seconds (0 to 30, default 0) to wait for an event when there is none
    /// yet after `after`.
    #[param(minimum = 0, maximum = 30)]
    pub wait: Option<u64>,
    /// 1 to 500 (default 200).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
}

/// `wait` of `GET /v1/tables/{id}/view`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ViewQuery {
    /// Seconds (0 to 30, default 0) to wait, while the view would be
    /// `304 Not Modified` for `If-None-Match`, for it to change.
    #[param(minimum = 0, maximum = 30)]
    pub wait: Option<u64>,
}
