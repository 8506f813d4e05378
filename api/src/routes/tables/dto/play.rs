//! The caller's view, a move and its answer, and the pages of events.

use chrono::{DateTime, Utc};
use domain::table::ResultCorrected;
use domain::{Move, PlayerView, SeatView, Status, TableEvent};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::super::headers::IfMatch;
use super::{ClockDto, Holder, SeatPresence};
use crate::error::ApiError;
use crate::table_service::{redact_parsed, CachedTable};
use store::StoredEvent;

/// A player in a view: the engine's, and who sits there.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"seat": 1, "account_id": "7d1e0c8a-3b9f-4e2d-8c6a-5f4b3a2e1d00", "bot": null, "username": "bob", "erased": false, "hand_size": 7, "total": 0, "announced": false, "out": false, "away": false, "resigned": false}))]
pub struct ViewPlayer {
    #[serde(flatten)]
    pub player: PlayerView,
    #[serde(flatten)]
    pub holder: Holder,
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
            {"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "bot": null, "username": "alice", "erased": false, "hand_size": 3, "total": 0, "announced": false, "out": false, "away": false, "resigned": false},
            {"seat": 1, "account_id": "7d1e0c8a-3b9f-4e2d-8c6a-5f4b3a2e1d00", "bot": null, "username": "bob", "erased": false, "hand_size": 7, "total": 0, "announced": false, "out": false, "away": false, "resigned": false}
        ],
        "pending": {"kind": "none", "seat": null, "draw": null, "count": null, "card": null, "frozen": false, "challengeable": null},
        "legal_moves": [{"type": "play", "card": "8H", "suit": "S", "announce": false}, {"type": "draw"}],
        "result": null,
        "corrected": null
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
    /// An admin's correction of the game's `result`, which stands
    /// (docs/API.md "Corrections and sanctions"); null when there is none.
    #[schema(required = true)]
    pub corrected: Option<ResultCorrected>,
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
                holder: Holder::of(l, seated),
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
            corrected: t.correction.clone(),
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
        "data": {"seat": 1, "account_id": "7d1e0c8a-3b9f-4e2d-8c6a-5f4b3a2e1d00"},
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
