//! Tables: the rule sets, opening, listing, joining, leaving and starting a
//! table, the caller's view, moves and the event feed. Handlers
//! authenticate, parse, then call [`crate::tables::TableService`], which
//! loads, decides, appends; they only shape the answer.

use std::time::Duration;

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{delete, get, post, web, HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use domain::{Direction, GameEnded, Move, PendingView, Preset, Seat, Status, TableCommand};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::auth::{self, AuthUser, CachedAuthUser};
use crate::chain::canonical_json;
use crate::config::Settings;
use crate::error::{ApiError, Problem};
use crate::notify::TableEvents;
use crate::rates::Rates;
use crate::routes::history::{event_stream, last_event_id, SseEvent};
use crate::sse;
use crate::store::events::StoredEvent;
use crate::store::idempotency::request_hash;
use crate::store::tables::{ListedTable, SeatRow};
use crate::tables::{redact_parsed, Idempotency, Loaded, TableService};
use crate::watchers::{Watch, Watchers};

// ----- DTOs ---------------------------------------------------------------

/// A preset rule set.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "classique",
    "name": "8 américain classique",
    "description": "Classic rules (S0): 8 wild but not on a 2, ...",
    "rules": {"deck": "french52", "players": {"min": 2, "max": 10}}
}))]
pub struct RulesetDto {
    /// What `POST /v1/tables` takes as `ruleset`.
    pub id: String,
    pub name: String,
    pub description: String,
    /// Every knob of docs/RULES.md §3 at its default for this preset.
    #[schema(value_type = Object)]
    pub rules: Value,
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
    #[schema(value_type = Option<Object>)]
    pub options: Option<Map<String, Value>>,
    /// The most players the table takes (within the rules' bounds).
    #[serde(deserialize_with = "crate::routes::integer::u32")]
    pub seats: u32,
}

/// `waiting`, `playing` or `finished`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[schema(example = "playing")]
pub enum TableStatus {
    Waiting,
    Playing,
    Finished,
}

impl From<Status> for TableStatus {
    fn from(s: Status) -> Self {
        match s {
            Status::Waiting => Self::Waiting,
            Status::Playing => Self::Playing,
            Status::Finished => Self::Finished,
        }
    }
}

/// A seated player in a table's summary.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "username": "alice", "hand_size": 5, "total": 12}))]
pub struct SummaryPlayer {
    pub seat: usize,
    pub account_id: Uuid,
    pub username: String,
    /// Cards in hand (0 before the deal).
    pub hand_size: usize,
    /// Points so far.
    pub total: i32,
}

/// A table's public summary.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11",
    "ruleset": "classique",
    "rules": {"deck": "french52"},
    "status": "playing",
    "seats": 4,
    "players": [
        {"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "username": "alice", "hand_size": 5, "total": 0},
        {"seat": 1, "account_id": "7d1e0c8a-3b9f-4e2d-8c6a-5f4b3a2e1d00", "username": "bob", "hand_size": 7, "total": 0}
    ],
    "round": 1,
    "version": 9,
    "created_by": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10",
    "created_at": "2025-01-31T18:04:05.123456Z",
    "result": null
}))]
pub struct TableSummary {
    pub id: Uuid,
    pub ruleset: String,
    /// The table's rules, every knob.
    #[schema(value_type = Object)]
    pub rules: Value,
    pub status: TableStatus,
    /// The most players the table takes.
    pub seats: usize,
    /// Seated players by seat (renumbered 0..n-1 at the start).
    pub players: Vec<SummaryPlayer>,
    /// The current (or last) round; null before the deal.
    pub round: Option<u32>,
    /// The seq of the table's last event.
    pub version: i64,
    pub created_by: Uuid,
    pub created_at: DateTime<Utc>,
    /// The final ranking once `finished` (the engine's `GameEnded`).
    #[schema(value_type = Option<Object>, example = json!({
        "ranking": [{"seat": 1, "total": 40, "place": 1}, {"seat": 0, "total": 230, "place": 2}],
        "winners": [1],
        "losers": [0]
    }))]
    pub result: Option<GameEnded>,
}

impl TableSummary {
    pub fn of(id: Uuid, l: &Loaded) -> Self {
        let t = &l.table;
        let game = t.game.as_ref();
        let view = game.map(|g| g.view(None));
        let players = t
            .seated()
            .map(|s| {
                let p = view.as_ref().and_then(|v| v.players.get(s.seat));
                SummaryPlayer {
                    seat: s.seat,
                    account_id: s.account_id.parse().unwrap_or_default(),
                    username: s.username.clone(),
                    hand_size: p.map_or(0, |p| p.hand_size),
                    total: p.map_or(0, |p| p.total),
                }
            })
            .collect();
        Self {
            id,
            ruleset: t.ruleset.clone(),
            rules: serde_json::to_value(&t.rules).unwrap_or(Value::Null),
            status: t.status().into(),
            seats: t.seats,
            players,
            round: game.and_then(|g| g.round()).map(|r| r.number),
            version: l.version(),
            created_by: l.created_by,
            created_at: l.created_at,
            result: game.and_then(|g| g.result()).cloned(),
        }
    }
}

/// A seated player in a list.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "username": "alice"}))]
pub struct ListedPlayer {
    pub seat: i32,
    pub account_id: Uuid,
    pub username: String,
}

/// A table in a list.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11",
    "ruleset": "classique",
    "status": "waiting",
    "seats": 4,
    "players": [{"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "username": "alice"}],
    "version": 2,
    "created_by": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10",
    "created_at": "2025-01-31T18:04:05.123456Z"
}))]
pub struct ListedTableDto {
    pub id: Uuid,
    pub ruleset: String,
    pub status: String,
    /// The most players the table takes.
    pub seats: Option<i32>,
    pub players: Vec<ListedPlayer>,
    pub version: i64,
    pub created_by: Uuid,
    pub created_at: DateTime<Utc>,
}

impl ListedTableDto {
    fn of(t: ListedTable, seats: Vec<SeatRow>) -> Self {
        Self {
            id: t.id,
            ruleset: t.ruleset,
            status: t.status,
            seats: t.seats,
            players: seats
                .into_iter()
                .map(|s| ListedPlayer {
                    seat: s.seat,
                    account_id: s.account_id,
                    username: s.username,
                })
                .collect(),
            version: t.version,
            created_by: t.created_by,
            created_at: t.created_at,
        }
    }
}

/// A page of tables, oldest first; pass `next` as `after` for the next page
/// (null: no more).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "tables": [{
        "id": "6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11",
        "ruleset": "classique",
        "status": "waiting",
        "seats": 4,
        "players": [{"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "username": "alice"}],
        "version": 2,
        "created_by": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10",
        "created_at": "2025-01-31T18:04:05.123456Z"
    }],
    "next": "1738346645123456.6f1c2a5e2b7d4c1e9a530d4f8b2e7c11"
}))]
pub struct TablePage {
    pub tables: Vec<ListedTableDto>,
    pub next: Option<String>,
}

/// Filters and cursor of `GET /v1/tables`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only tables with this status: `waiting`, `playing` or `finished`.
    #[param(value_type = Option<TableStatus>)]
    pub status: Option<String>,
    /// Only tables where the caller sits.
    pub mine: Option<bool>,
    /// The `next` of the previous page.
    #[param(pattern = r"^-?[0-9]{1,16}\.[0-9a-fA-F]{32}$")]
    pub after: Option<String>,
    /// 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// A player in a view.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"seat": 1, "account_id": "7d1e0c8a-3b9f-4e2d-8c6a-5f4b3a2e1d00", "username": "bob", "hand_size": 7, "total": 0, "announced": false, "out": false}))]
pub struct ViewPlayer {
    pub seat: usize,
    pub account_id: Uuid,
    pub username: String,
    pub hand_size: usize,
    pub total: i32,
    /// Announced their last card.
    pub announced: bool,
    /// Out of this round (placement scoring).
    pub out: bool,
}

/// The caller's view (docs/API.md "The player view"): the engine's seat view,
/// with the table id, version, status and the players' names. A caller who
/// does not sit at the table gets the spectator view: no hand, no moves.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "table_id": "6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11",
    "version": 9,
    "status": "playing",
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
        {"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "username": "alice", "hand_size": 3, "total": 0, "announced": false, "out": false},
        {"seat": 1, "account_id": "7d1e0c8a-3b9f-4e2d-8c6a-5f4b3a2e1d00", "username": "bob", "hand_size": 7, "total": 0, "announced": false, "out": false}
    ],
    "pending": {"kind": "none", "seat": null, "draw": null, "count": null, "card": null, "frozen": false, "challengeable": null},
    "legal_moves": [{"type": "play", "card": "8H", "suit": "S", "announce": false}, {"type": "draw"}],
    "result": null
}))]
pub struct TableView {
    pub table_id: Uuid,
    pub version: i64,
    pub status: TableStatus,
    pub round: u32,
    pub my_seat: Option<usize>,
    #[schema(value_type = Vec<String>)]
    pub hand: Vec<domain::Card>,
    #[schema(value_type = Option<String>)]
    pub top_card: Option<domain::Card>,
    #[schema(value_type = Option<String>)]
    pub active_suit: Option<domain::Suit>,
    #[schema(value_type = Option<String>)]
    pub active_letter: Option<domain::Letter>,
    pub active_rank: Option<String>,
    /// `clockwise` or `counterclockwise`.
    #[schema(value_type = String, example = "clockwise")]
    pub direction: Direction,
    pub current_seat: Option<usize>,
    pub stock_size: usize,
    pub discard_size: usize,
    pub players: Vec<ViewPlayer>,
    /// What constrains the seat on turn (the engine's `PendingView`):
    /// `kind` is `none`, `attack`, `draw`, `must_replay`, `may_replay` or
    /// `drawn`; `card` is the card just drawn, shown to its drawer only.
    #[schema(value_type = Object, example = json!({"kind": "none", "seat": null, "draw": null, "count": null, "card": null, "frozen": false, "challengeable": null}))]
    pub pending: PendingView,
    /// Every move the server would accept from the caller at this version,
    /// in the form to post back (see `MoveRequest.move`).
    #[schema(value_type = Vec<Object>, example = json!([{"type": "play", "card": "8H", "suit": "S", "announce": false}, {"type": "draw"}]))]
    pub legal_moves: Vec<Move>,
    /// The final ranking once `finished`.
    #[schema(value_type = Option<Object>, example = json!(null))]
    pub result: Option<GameEnded>,
}

impl TableView {
    pub fn of(id: Uuid, l: &Loaded, account_id: Uuid) -> Self {
        let t = &l.table;
        let seat = l.seat_of(account_id);
        let names = |s: Seat| {
            t.players
                .get(s)
                .and_then(Option::as_ref)
                .map(|p| (p.account_id.parse().unwrap_or_default(), p.username.clone()))
                .unwrap_or_default()
        };
        match t.game.as_ref() {
            Some(g) => {
                let v = g.view(seat);
                Self {
                    table_id: id,
                    version: l.version(),
                    status: t.status().into(),
                    round: v.round,
                    my_seat: v.my_seat,
                    hand: v.hand,
                    top_card: v.top_card,
                    active_suit: v.active_suit,
                    active_letter: v.active_letter,
                    active_rank: v.active_rank,
                    direction: v.direction,
                    current_seat: v.current_seat,
                    stock_size: v.stock_size,
                    discard_size: v.discard_size,
                    players: v
                        .players
                        .into_iter()
                        .map(|p| {
                            let (account_id, username) = names(p.seat);
                            ViewPlayer {
                                seat: p.seat,
                                account_id,
                                username,
                                hand_size: p.hand_size,
                                total: p.total,
                                announced: p.announced,
                                out: p.out,
                            }
                        })
                        .collect(),
                    pending: v.pending,
                    legal_moves: v.legal_moves,
                    result: v.result,
                }
            }
            // Before the start: who sits where, nothing dealt.
            None => Self {
                table_id: id,
                version: l.version(),
                status: TableStatus::Waiting,
                round: 0,
                my_seat: seat,
                hand: Vec::new(),
                top_card: None,
                active_suit: None,
                active_letter: None,
                active_rank: None,
                direction: Direction::Clockwise,
                current_seat: None,
                stock_size: 0,
                discard_size: 0,
                players: t
                    .seated()
                    .map(|p| ViewPlayer {
                        seat: p.seat,
                        account_id: p.account_id.parse().unwrap_or_default(),
                        username: p.username.clone(),
                        hand_size: 0,
                        total: 0,
                        announced: false,
                        out: false,
                    })
                    .collect(),
                pending: PendingView::none(),
                legal_moves: Vec::new(),
                result: None,
            },
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
    #[schema(value_type = Object, example = json!({"type": "play", "card": "8H", "suit": "S", "announce": false}))]
    pub mv: Value,
    /// The version the move is based on (as `If-Match`); stale: 409.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::routes::integer::option_i64"
    )]
    pub expected_version: Option<i64>,
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
    "view": {"table_id": "6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11", "version": 10, "status": "playing"}
}))]
pub struct MoveAnswer {
    pub version: i64,
    /// Redacted for the caller; `hash`/`prev_hash` are those of the full
    /// data (verify the chain with `GET /v1/tables/{id}/log` once finished).
    pub events: Vec<StoredEvent>,
    pub view: TableView,
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

// ----- helpers ------------------------------------------------------------

/// `wait` of `GET /v1/tables/{id}/view`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ViewQuery {
    /// Seconds (0 to 30, default 0) to wait, while the view would be
    /// `304 Not Modified` for `If-None-Match`, for it to change.
    #[param(minimum = 0, maximum = 30)]
    pub wait: Option<u64>,
}

/// Longest long poll, in seconds.
pub const MAX_WAIT_SECS: u64 = 30;

/// A long poll's `wait` (0 when absent), checked.
fn wait_secs(wait: Option<u64>) -> Result<u64, ApiError> {
    match wait.unwrap_or(0) {
        wait if wait > MAX_WAIT_SECS => Err(ApiError::InvalidQuery(format!(
            "wait: at most {MAX_WAIT_SECS} seconds"
        ))),
        wait => Ok(wait),
    }
}

/// When a long poll of `wait` seconds started now gives up; `None` for 0
/// (no waiting).
/// A long poll's or stream's place among the caller's open ones (429
/// `too_many_streams` past the limits, 503 when the process is full).
pub fn open_watch(
    req: &HttpRequest,
    watchers: &Watchers,
    settings: &Settings,
    user: &AuthUser,
) -> Result<Watch, ApiError> {
    watchers.open(user, auth::client_address(req, settings.trust_proxy))
}

fn long_poll_deadline(wait: u64) -> Option<tokio::time::Instant> {
    (wait > 0).then(|| tokio::time::Instant::now() + Duration::from_secs(wait))
}

fn etag(version: i64) -> (header::HeaderName, String) {
    (header::ETAG, format!("\"{version}\""))
}

fn bad_header(detail: String) -> ApiError {
    ApiError::Problem {
        status: StatusCode::BAD_REQUEST,
        code: "invalid_header",
        detail,
    }
}

/// `"N"` (or `W/"N"`) as a version; a bare `N` is read as `"N"`.
fn parse_etag(raw: &str) -> Option<i64> {
    let raw = raw.trim();
    if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) {
        return raw.parse().ok();
    }
    let raw = raw.strip_prefix("W/").unwrap_or(raw);
    raw.strip_prefix('"')?.strip_suffix('"')?.parse().ok()
}

fn header_str<'r>(req: &'r HttpRequest, name: &str) -> Result<Option<&'r str>, ApiError> {
    req.headers()
        .get(name)
        .map(|v| {
            v.to_str()
                .map_err(|_| bad_header(format!("{name} is not visible ASCII")))
        })
        .transpose()
}

fn cursor_of(t: &ListedTable) -> String {
    format!("{}.{}", t.created_at.timestamp_micros(), t.id.simple())
}

fn parse_cursor(raw: &str) -> Result<(DateTime<Utc>, Uuid), ApiError> {
    let bad = || ApiError::InvalidQuery(format!("after: not a cursor of this list: {raw:?}"));
    let (micros, id) = raw.split_once('.').ok_or_else(bad)?;
    // Within PostgreSQL's timestamptz range (4713 BC to 294276 AD), so that
    // no cursor becomes a database error.
    let at = micros
        .parse::<i64>()
        .ok()
        .and_then(DateTime::from_timestamp_micros)
        .filter(|at| (-4712..=294_275).contains(&chrono::Datelike::year(at)))
        .ok_or_else(bad)?;
    Ok((at, id.parse().map_err(|_| bad())?))
}

// ----- handlers -----------------------------------------------------------

/// The preset rule sets and every knob of each (no authentication needed).
#[utoipa::path(
    tag = "tables",
    responses(
        (status = 200, description = "The five presets of docs/RULES.md §5", body = Vec<RulesetDto>),
        (status = 500, description = "`internal_error`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/rulesets")]
#[tracing::instrument(skip_all)]
pub async fn list_rulesets() -> Result<HttpResponse, ApiError> {
    let presets: Vec<RulesetDto> = Preset::ALL
        .into_iter()
        .map(|p| RulesetDto {
            id: p.id().into(),
            name: p.name().into(),
            description: p.description().into(),
            rules: serde_json::to_value(p.rules()).unwrap_or(Value::Null),
        })
        .collect();
    Ok(HttpResponse::Ok().json(presets))
}

/// Open a table; the caller sits at seat 0.
#[utoipa::path(
    tag = "tables",
    security(("bearer" = [])),
    request_body = NewTable,
    responses(
        (status = 201, description = "The table is open", body = TableSummary,
            headers(("Location" = String, description = "The table's URL"))),
        (status = 400, description = "`malformed_json`", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "`payload_too_large`", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "`unsupported_media_type`", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`invalid_rules` (unknown preset, bad option, seats out of the rules' bounds; `detail` says why) or `invalid_body`", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "`too_many_requests`: too many tables created by this account; see `Retry-After`", body = Problem, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "`service_unavailable`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/tables")]
#[tracing::instrument(skip_all, fields(account_id = %user.account.id, ruleset = %body.ruleset))]
pub async fn create_table(
    tables: web::Data<TableService>,
    user: AuthUser,
    rates: web::Data<Rates>,
    body: web::Json<NewTable>,
) -> Result<HttpResponse, ApiError> {
    let NewTable {
        ruleset,
        options,
        seats,
    } = body.into_inner();
    let (id, loaded) = tables
        .create(
            &rates,
            user.account.id,
            &user.account.username,
            &ruleset,
            &options.unwrap_or_default(),
            seats as usize,
        )
        .await?;
    let summary = TableSummary::of(id, &loaded);
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, format!("/v1/tables/{id}")))
        .insert_header(etag(summary.version))
        .json(summary))
}

/// List tables, oldest first, by cursor.
#[utoipa::path(
    tag = "tables",
    security(("bearer" = [])),
    params(ListQuery),
    responses(
        (status = 200, description = "A page of tables", body = TablePage),
        (status = 400, description = "`invalid_query`: unknown status, bad cursor, limit not in 1..=100", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`service_unavailable`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/tables")]
#[tracing::instrument(skip_all, fields(account_id = %user.account.id))]
pub async fn list_tables(
    tables: web::Data<TableService>,
    user: AuthUser,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let ListQuery {
        status,
        mine,
        after,
        limit,
    } = query.into_inner();
    if let Some(s) = status.as_deref() {
        if !["waiting", "playing", "finished"].contains(&s) {
            return Err(ApiError::InvalidQuery(format!(
                "status: expected waiting, playing or finished, not {:?}",
                s.chars().take(32).collect::<String>()
            )));
        }
    }
    let limit = limit.unwrap_or(20);
    if !(1..=100).contains(&limit) {
        return Err(ApiError::InvalidQuery("limit: from 1 to 100".into()));
    }
    let after = after.as_deref().map(parse_cursor).transpose()?;
    let member = mine.unwrap_or(false).then_some(user.account.id);
    let rows = tables
        .list(status.as_deref(), member, after, limit + 1)
        .await?;
    let more = rows.len() as i64 > limit;
    let page: Vec<_> = rows.into_iter().take(limit as usize).collect();
    let next = if more {
        page.last().map(|(t, _)| cursor_of(t))
    } else {
        None
    };
    Ok(HttpResponse::Ok().json(TablePage {
        tables: page
            .into_iter()
            .map(|(t, s)| ListedTableDto::of(t, s))
            .collect(),
        next,
    }))
}

/// A table's public summary.
#[utoipa::path(
    tag = "tables",
    security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "The table")),
    responses(
        (status = 200, description = "The summary", body = TableSummary,
            headers(("ETag" = String, description = "`\"<version>\"`"))),
        (status = 401, description = "`unauthorized`", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`service_unavailable`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/tables/{id}")]
#[tracing::instrument(skip_all, fields(account_id = %_user.account.id, table_id = %path))]
pub async fn get_table(
    tables: web::Data<TableService>,
    _user: AuthUser,
    path: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner();
    let summary = tables.read(id, |l| TableSummary::of(id, l)).await?;
    Ok(HttpResponse::Ok()
        .insert_header(etag(summary.version))
        .json(summary))
}

async fn lobby(
    tables: &TableService,
    id: Uuid,
    command: TableCommand,
) -> Result<HttpResponse, ApiError> {
    let acted = tables
        .act(id, &command, None, None, |l, _, _| {
            Ok(TableSummary::of(id, l))
        })
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header(etag(acted.answer.version))
        .json(acted.answer))
}

/// Join a table that has not started: take the next free seat.
#[utoipa::path(
    tag = "tables",
    security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "The table")),
    responses(
        (status = 200, description = "Seated; the table's summary", body = TableSummary),
        (status = 401, description = "`unauthorized`", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`table_full`, `already_seated`, `table_not_waiting`, or `version_conflict` when other writers kept winning", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`service_unavailable`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/tables/{id}/players")]
#[tracing::instrument(skip_all, fields(account_id = %user.account.id, table_id = %path))]
pub async fn join_table(
    tables: web::Data<TableService>,
    user: AuthUser,
    path: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let command = TableCommand::Join {
        account_id: user.account.id.to_string(),
        username: user.account.username.clone(),
    };
    lobby(&tables, path.into_inner(), command).await
}

/// Leave a table that has not started.
#[utoipa::path(
    tag = "tables",
    security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "The table")),
    responses(
        (status = 200, description = "The seat is free; the table's summary", body = TableSummary),
        (status = 401, description = "`unauthorized`", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "`not_seated`", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`table_not_waiting` (the game has started) or `version_conflict`", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`service_unavailable`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[delete("/tables/{id}/players/me")]
#[tracing::instrument(skip_all, fields(account_id = %user.account.id, table_id = %path))]
pub async fn leave_table(
    tables: web::Data<TableService>,
    user: AuthUser,
    path: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let command = TableCommand::Leave {
        account_id: user.account.id.to_string(),
    };
    lobby(&tables, path.into_inner(), command).await
}

/// The creator starts the game: the seats are renumbered 0..n-1 in seat
/// order and round 1 is dealt.
#[utoipa::path(
    tag = "tables",
    security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "The table")),
    responses(
        (status = 200, description = "Started; the table's summary", body = TableSummary),
        (status = 401, description = "`unauthorized`", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "`not_creator`", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`not_enough_players`, `table_not_waiting` or `version_conflict`", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`service_unavailable`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/tables/{id}/start")]
#[tracing::instrument(skip_all, fields(account_id = %user.account.id, table_id = %path))]
pub async fn start_table(
    tables: web::Data<TableService>,
    user: AuthUser,
    path: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let command = TableCommand::Start {
        account_id: user.account.id.to_string(),
    };
    lobby(&tables, path.into_inner(), command).await
}

/// The caller's view of a table (a spectator's when the caller does not
/// sit there: no hand, no moves). Send `If-None-Match: "<version>"` to get
/// a 304 while nothing changed; add `wait` to make it a long poll: the new
/// view comes as soon as a move is committed (by any server process), or
/// the 304 after `wait` seconds. A client can follow a game this way alone,
/// one request per change.
#[utoipa::path(
    tag = "tables",
    security(("bearer" = [])),
    params(
        ("id" = Uuid, Path, description = "The table"),
        ("If-None-Match" = Option<String>, Header, description = "An ETag from an earlier view"),
        ViewQuery,
    ),
    responses(
        (status = 200, description = "The view", body = TableView,
            headers(("ETag" = String, description = "`\"<version>\"`"))),
        (status = 304, description = "Not modified since the ETag sent (with `wait`: nothing changed within it)"),
        (status = 400, description = "`invalid_query`: `wait` > 30; `invalid_header`", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "`too_many_streams`: too many open long polls and streams for this account or address; see `Retry-After`", body = Problem, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "`service_unavailable`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/tables/{id}/view")]
#[tracing::instrument(skip_all, fields(account_id = %user.account.id, table_id = %path))]
#[allow(clippy::too_many_arguments)]
pub async fn get_view(
    req: HttpRequest,
    tables: web::Data<TableService>,
    hub: web::Data<TableEvents>,
    watchers: web::Data<Watchers>,
    settings: web::Data<Settings>,
    user: CachedAuthUser,
    path: web::Path<Uuid>,
    query: web::Query<ViewQuery>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner();
    let wait = wait_secs(query.wait)?;
    let if_none_match = header_str(&req, "if-none-match")?.map(str::to_owned);
    let account_id = user.account.id;
    // A version the caller has seen: the view is not older.
    let seen = if_none_match
        .as_deref()
        .and_then(|raw| raw.split(',').filter_map(parse_etag).max())
        .unwrap_or(0);
    let fresh = |l: &Loaded| {
        if_none_match.as_deref().is_some_and(|raw| {
            raw.trim() == "*" || raw.split(',').any(|t| parse_etag(t) == Some(l.version()))
        })
    };
    let changed = match long_poll_deadline(wait) {
        Some(deadline) if if_none_match.is_some() => {
            let watch = open_watch(&req, &watchers, &settings, &user)?;
            watch
                .unless_ended(tables.read_when(&hub, id, seen, deadline, &fresh, |l| {
                    (l.version(), Some(TableView::of(id, l, account_id)))
                }))
                .await?
        }
        _ => None,
    };
    let (version, view) = match changed {
        Some(changed) => changed,
        None => {
            tables
                .read_with(Some(&hub), id, seen, |l| {
                    (
                        l.version(),
                        (!fresh(l)).then(|| TableView::of(id, l, account_id)),
                    )
                })
                .await?
        }
    };
    let mut res = match view {
        Some(view) => HttpResponse::Ok().json(view),
        None => HttpResponse::NotModified().finish(),
    };
    let (name, value) = etag(version);
    res.headers_mut().insert(
        name,
        HeaderValue::from_str(&value).map_err(ApiError::internal)?,
    );
    res.headers_mut()
        .insert(header::VARY, HeaderValue::from_static("Authorization"));
    Ok(res)
}

/// The caller's view as server-sent events: one frame (`id: <version>`,
/// `data:` the view as `GET …/view` gives it) at once, then one each time
/// the table moves (moves committed together give one frame, of the latest
/// view), woken by any server process's commits. A client can follow a game
/// with this stream alone. `Last-Event-ID` (the version of the view the
/// client has) skips the first frame while the table is at that version.
#[utoipa::path(
    tag = "tables",
    security(("bearer" = [])),
    params(
        ("id" = Uuid, Path, description = "The table"),
        ("Last-Event-ID" = Option<i64>, Header, nullable = false, minimum = 0, description = "The version of the last view received"),
    ),
    responses(
        (status = 200, description = "`text/event-stream`: `id: <version>` and `data:` the caller's view (`TableView`) per change", content_type = "text/event-stream", body = SseEvent),
        (status = 400, description = "`invalid_last_event_id`", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no such table", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "`too_many_streams`: too many open long polls and streams for this account or address; see `Retry-After`", body = Problem, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "`service_unavailable`: the database does not answer", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/tables/{id}/view/stream")]
#[tracing::instrument(skip_all, fields(account_id = %user.account.id, table_id = %path))]
pub async fn stream_view(
    req: HttpRequest,
    tables: web::Data<TableService>,
    hub: web::Data<TableEvents>,
    watchers: web::Data<Watchers>,
    settings: web::Data<Settings>,
    user: CachedAuthUser,
    path: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner();
    let account_id = user.account.id;
    let seen = last_event_id(&req, "the version of a view")?.unwrap_or(-1);
    let watch = open_watch(&req, &watchers, &settings, &user)?;
    // 404 before the stream starts when there is no such table.
    tables.read_with(Some(&hub), id, 0, |_| ()).await?;
    let body = sse::table_views(sse::ViewStream {
        tables: tables.get_ref().clone(),
        hub: hub.get_ref().clone(),
        table_id: id,
        seen,
        frame: move |l: &Loaded| sse::frame(l.version(), &TableView::of(id, l, account_id)),
        keepalive: settings.sse_keepalive(),
    });
    Ok(event_stream(sse::until_ended(body, watch)))
}

/// Make a move. The same `Idempotency-Key` with the same body (and
/// `If-Match`) replays the first successful answer; with another body it is
/// 422 `idempotency_key_reused`.
#[utoipa::path(
    tag = "tables",
    security(("bearer" = [])),
    params(
        ("id" = Uuid, Path, description = "The table"),
        ("If-Match" = Option<String>, Header, nullable = false, pattern = r#"^(\*|(W/)?"[0-9]{1,18}"|[0-9]{1,18})$"#, description = "`\"<version>\"` (or the bare version): the version the move is based on"),
        ("Idempotency-Key" = Option<String>, Header, nullable = false, min_length = 1, max_length = 255, pattern = "^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$", description = "1 to 255 visible ASCII characters, chosen by the client per move"),
    ),
    request_body = MoveRequest,
    responses(
        (status = 200, description = "Done: the new version, the new events as the caller may see them (hashes are of the full data), and the caller's view", body = MoveAnswer,
            headers(("ETag" = String, description = "`\"<version>\"`"))),
        (status = 400, description = "`malformed_json` or `invalid_header`", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "`not_seated`", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`version_conflict` (stale `expected_version`/`If-Match`: nothing changed), `game_not_started`, `game_over`, `idempotency_key_in_use`", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "`payload_too_large`", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "`unsupported_media_type`", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`invalid_move` (not a move: bad shape or card code), the engine's refusal with its reason in `detail` (`not_your_turn`, `illegal_move`, `card_not_in_hand`, `bad_choice`, `bad_announce`, `cannot_draw`, `cannot_pass`, `cannot_challenge`, `no_such_seat`), `idempotency_key_reused` or `invalid_body`", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`service_unavailable`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/tables/{id}/moves")]
#[tracing::instrument(skip_all, fields(account_id = %user.account.id, table_id = %path))]
pub async fn post_move(
    req: HttpRequest,
    tables: web::Data<TableService>,
    hub: web::Data<TableEvents>,
    user: CachedAuthUser,
    path: web::Path<Uuid>,
    body: web::Json<MoveRequest>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner();
    let account_id = user.account.id;
    let body = body.into_inner();
    let mv: Move = serde_json::from_value(body.mv.clone()).map_err(|e| ApiError::Validation {
        code: "invalid_move",
        detail: format!("not a move: {e}"),
    })?;
    let if_match = match header_str(&req, "if-match")? {
        None => None,
        Some(raw) if raw.trim() == "*" => None,
        Some(raw) => Some(
            parse_etag(raw).ok_or_else(|| bad_header("If-Match: expected \"<version>\"".into()))?,
        ),
    };
    let expected = match (if_match, body.expected_version) {
        (Some(a), Some(b)) if a != b => return Err(ApiError::VersionConflict { expected: b }),
        (a, b) => a.or(b),
    };
    let idempotency = match header_str(&req, "idempotency-key")? {
        None => None,
        Some(key) if !is_idempotency_key(key) => {
            return Err(bad_header(
                "Idempotency-Key: 1 to 255 visible ASCII characters (inner spaces allowed)".into(),
            ))
        }
        Some(key) => {
            let request = serde_json::json!({"body": &body, "if_match": if_match});
            Some(Idempotency {
                key: key.to_owned(),
                request_hash: request_hash(canonical_json(&request).as_bytes()),
            })
        }
    };
    if let Some(idem) = &idempotency {
        if let Some(replayed) = replay(&tables, id, account_id, idem).await? {
            return Ok(replayed);
        }
    }
    let command = TableCommand::Move {
        account_id: account_id.to_string(),
        mv,
    };
    let acted = tables
        .act_with(
            Some(&hub),
            id,
            &command,
            expected,
            idempotency.as_ref().map(|i| (account_id, i)),
            |l, stored, events| {
                let seat = l.seat_of(account_id);
                Ok(MoveAnswer {
                    version: l.version(),
                    events: stored
                        .iter()
                        .zip(events)
                        .map(|(e, parsed)| redact_parsed(e, parsed, seat))
                        .collect(),
                    view: TableView::of(id, l, account_id),
                })
            },
        )
        .await;
    let acted = match (acted, &idempotency) {
        // The same key's move was applied meanwhile (a concurrent twin
        // committed first, and this one, decided again, was refused or
        // conflicted): its answer, never a refusal of a done move.
        (Err(e), Some(idem)) => {
            return match replay(&tables, id, account_id, idem).await? {
                Some(replayed) => Ok(replayed),
                None => Err(e),
            };
        }
        (acted, _) => acted?,
    };
    Ok(HttpResponse::Ok()
        .insert_header(etag(acted.answer.version))
        .json(acted.answer))
}

/// The stored answer of an earlier move with this key, replayed (422 when
/// the key came with another request).
async fn replay(
    tables: &TableService,
    id: Uuid,
    account_id: Uuid,
    idem: &Idempotency,
) -> Result<Option<HttpResponse>, ApiError> {
    let Some(stored) = tables.replay(id, account_id, idem).await? else {
        return Ok(None);
    };
    let status = StatusCode::from_u16(stored.status).map_err(ApiError::internal)?;
    let mut res = HttpResponse::build(status);
    if let Some(v) = stored.body.get("version").and_then(Value::as_i64) {
        res.insert_header(etag(v));
    }
    Ok(Some(
        res.insert_header(("Idempotent-Replayed", "true"))
            .json(stored.body),
    ))
}

/// 1 to 255 visible ASCII characters, spaces allowed inside (the
/// documented pattern `^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$`).
fn is_idempotency_key(key: &str) -> bool {
    let b = key.as_bytes();
    (1..=255).contains(&b.len())
        && b.iter().all(|c| (0x20..=0x7e).contains(c))
        && b.first() != Some(&b' ')
        && b.last() != Some(&b' ')
}

/// The caller's events after `after`, redacted for the caller; with
/// `wait`, a long poll: the answer comes as soon as an event is committed
/// (by any server process), or empty after `wait` seconds.
#[utoipa::path(
    tag = "tables",
    security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "The table"), EventsQuery),
    responses(
        (status = 200, description = "The events (possibly none)", body = EventPage),
        (status = 400, description = "`invalid_query`: `after` < 0, `wait` > 30, `limit` not in 1..=500", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "`too_many_streams`: too many open long polls and streams for this account or address; see `Retry-After`", body = Problem, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "`service_unavailable`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/tables/{id}/events")]
#[tracing::instrument(skip_all, fields(account_id = %user.account.id, table_id = %path))]
#[allow(clippy::too_many_arguments)]
pub async fn get_events(
    req: HttpRequest,
    tables: web::Data<TableService>,
    hub: web::Data<TableEvents>,
    watchers: web::Data<Watchers>,
    settings: web::Data<Settings>,
    user: CachedAuthUser,
    path: web::Path<Uuid>,
    query: web::Query<EventsQuery>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner();
    let after = query.after.unwrap_or(0);
    if after < 0 {
        return Err(ApiError::InvalidQuery("after: 0 or more".into()));
    }
    let wait = wait_secs(query.wait)?;
    let limit = query.limit.unwrap_or(200);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::InvalidQuery("limit: from 1 to 500".into()));
    }
    let deadline = long_poll_deadline(wait);
    let poll = tables.poll_events(&hub, id, user.account.id, after, limit, deadline);
    let events = match deadline {
        Some(_) => {
            open_watch(&req, &watchers, &settings, &user)?
                .unless_ended(poll)
                .await?
        }
        None => poll.await?,
    };
    let next = events.last().map_or(after, |e| e.seq);
    Ok(HttpResponse::Ok().json(EventPage { events, next }))
}
