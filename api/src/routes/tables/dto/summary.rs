//! A table's summary (who sits, the clock, how it fills, its rematch)
//! and its entry in a list.

use chrono::{DateTime, Utc};
use domain::bots::Level;
use domain::{ClientSeed, PlayerId, Rules, SeedHash, ServerSeed, Status, Visibility};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use super::classique_rules;
use crate::error::ApiError;
use crate::history::GameResult;
use crate::routes::shared::cursor_after;
use crate::table_service::{CachedTable, Shown, TableService};
use store::tables::{ListedTable, SeatRow};

/// A seated player in a table's summary.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "bot": null, "username": "alice", "erased": false, "client_seed": "d4f1c7e2a9b05e38", "hand_size": 5, "total": 12, "away": false, "resigned": false}))]
pub struct SummaryPlayer {
    pub seat: usize,
    #[serde(flatten)]
    pub holder: Holder,
    /// The seat's seed, mixed into every shuffle (docs/API.md "Fair
    /// deals"); null at a table older than fair deals.
    #[schema(required = true)]
    pub client_seed: Option<ClientSeed>,
    /// Cards in hand (0 before the deal).
    pub hand_size: usize,
    /// Points so far.
    pub total: i32,
    #[serde(flatten)]
    pub presence: SeatPresence,
}

/// Who holds a seat: an account (its id, and its name now), a bot (its
/// level, and a name that says so), or an erased account (docs/API.md
/// "Accounts": no id, no name, `erased`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({"account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "bot": null, "username": "alice", "erased": false}))]
pub struct Holder {
    /// The account; null for a bot or an erased account.
    #[schema(value_type = Option<Uuid>, required = true)]
    pub account_id: Option<PlayerId>,
    /// The bot's level; null for a person.
    #[schema(required = true)]
    pub bot: Option<Level>,
    /// The account's name now (a guest's that upgraded: the new one), or
    /// `"<level> bot"`; null for an erased account.
    #[schema(required = true)]
    pub username: Option<String>,
    /// The account was erased.
    pub erased: bool,
}

impl Holder {
    /// How `seated` is shown at `l`.
    pub fn of(l: &CachedTable, seated: &domain::Seated) -> Self {
        Self::from(l.shown(seated))
    }
}

impl From<Shown<'_>> for Holder {
    fn from(shown: Shown<'_>) -> Self {
        match shown {
            Shown::Person {
                account_id,
                username,
            } => Self {
                account_id: Some(account_id.clone()),
                bot: None,
                username: Some(username.to_owned()),
                erased: false,
            },
            Shown::Bot(level) => Self {
                account_id: None,
                bot: Some(level),
                username: Some(format!("{level} bot")),
                erased: false,
            },
            Shown::Erased => Self {
                account_id: None,
                bot: None,
                username: None,
                erased: true,
            },
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
            {"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "bot": null, "username": "alice", "erased": false, "client_seed": "d4f1c7e2a9b05e38", "hand_size": 5, "total": 0, "away": false, "resigned": false},
            {"seat": 1, "account_id": "7d1e0c8a-3b9f-4e2d-8c6a-5f4b3a2e1d00", "bot": null, "username": "bob", "erased": false, "client_seed": "bobs-phone-42", "hand_size": 7, "total": 0, "away": false, "resigned": false}
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
        "rematch": null,
        "seed_hash": "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd",
        "server_seed": null
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
    /// The final ranking once `finished` (null before), and its
    /// correction, if an admin made one.
    #[schema(required = true)]
    pub result: Option<GameResult>,
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
    /// The SHA-256 of the table's secret server seed, committed to when it
    /// opened (docs/API.md "Fair deals"); null at a table older than fair
    /// deals.
    #[schema(required = true)]
    pub seed_hash: Option<SeedHash>,
    /// The server seed, once the game is over (ended or aborted) and the
    /// log revealed it; null until then.
    #[schema(required = true)]
    pub server_seed: Option<ServerSeed>,
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
                    holder: Holder::of(l, s),
                    client_seed: s.client_seed.clone(),
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
            result: game.and_then(|g| g.result()).map(|ended| GameResult {
                ended: ended.clone(),
                corrected: t.correction.clone(),
            }),
            clock: ClockDto::of(l),
            visibility: t.lobby.visibility,
            invite_code: None,
            starts_when_full: t.lobby.starts_when_full,
            bots_after: t.lobby.bots_after,
            rematch_of: t.lobby.rematch_of.as_ref().map(|of| table_id(&of.table_id)),
            rematch: t.lobby.rematch.as_deref().map(table_id),
            seed_hash: t.seed_hash,
            server_seed: t.revealed.clone(),
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

/// A seated person in a list.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "username": "alice", "erased": false}))]
pub struct ListedPlayer {
    pub seat: i32,
    /// Null: the account was erased.
    #[schema(required = true)]
    pub account_id: Option<Uuid>,
    /// Null: the account was erased.
    #[schema(required = true)]
    pub username: Option<String>,
    pub erased: bool,
}

/// The example of a [`ListedTableDto`], alone and in a page.
fn listed_table_example() -> Value {
    serde_json::json!({
        "id": "6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11",
        "ruleset": "classique",
        "status": "waiting",
        "seats": 4,
        "players": [{"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "username": "alice", "erased": false}],
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
                    erased: s.username.is_none(),
                    account_id: s.username.is_some().then_some(s.account_id),
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
