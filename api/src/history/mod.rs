//! Round histories, replays and score audits, read from a table's event log
//! alone. Shared by the HTTP handlers ([`crate::routes::history`]) and the
//! `huit replay` / `huit audit` commands; the SQL is in [`store`].
//!
//! Every function here folds the stored events with the engine
//! ([`domain::Table`]); nothing trusts the projection row except
//! [`audit`], which compares the log's length with `game_tables.version`.

use std::fmt::Write as _;

use domain::event::{Event, GameEnded, Seat};
use domain::table::{ResultCorrected, Table, TableEvent};
use domain::FullView;
use serde::Serialize;
use sqlx::PgPool;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::codes::ProblemCode;
use crate::service_error::ServiceError;
use crate::table_service::{Names, Shown};
use store::chain;
use store::StoredEvent;

mod audit;
mod offline;

pub use audit::{
    audit, audit_text, AuditProblem, AuditReport, DealsAudit, DealsStatus, RoundAudit, Scores,
};
pub use offline::{verdict_text, verify_export, Verdict};

/// A table's whole log, as stored, and the table's version (the seq of its
/// last event according to `game_tables`; an exported log's last seq).
#[derive(Debug, Clone)]
pub struct Log {
    pub source: Source,
    pub version: i64,
    pub events: Vec<StoredEvent>,
    /// The table's id, which its shuffles name (docs/API.md "Fair deals"):
    /// known for a table of the database, given for an exported log.
    pub table_id: Option<Uuid>,
}

impl Log {
    /// Whether the game is over in it (`game_ended`, `game_aborted`), which
    /// only its rematch's offer and corrections of its result may follow
    /// (as the audit checks).
    pub fn is_over(&self) -> bool {
        self.events
            .iter()
            .rev()
            .any(|e| matches!(e.kind.as_str(), "game_ended" | "game_aborted"))
    }
}

/// Where a log was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A table of the database.
    Table(Uuid),
    /// An exported log (`GET …/log`): the file's name, `-` for stdin.
    Export(String),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Table(id) => write!(f, "table {id}"),
            Source::Export(name) => write!(f, "log {name}"),
        }
    }
}

/// A line of an exported log that is not an event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {why}")]
pub struct BadLine {
    /// 1, 2, …
    pub line: usize,
    pub why: String,
}

/// An exported log (NDJSON, one `{seq, type, v, at, data, prev_hash, hash}`
/// per line, as `GET …/log` sends it), read with no database; its version
/// is its last event's seq. A trailing newline is allowed, nothing else
/// that is not an event.
pub fn from_ndjson(name: &str, text: &str) -> Result<Log, BadLine> {
    let events = text
        .lines()
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str::<StoredEvent>(line).map_err(|e| BadLine {
                line: i + 1,
                why: format!("not an event of the log: {e}"),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Log {
        source: Source::Export(name.to_owned()),
        version: events.last().map_or(0, |e| e.seq),
        events,
        table_id: None,
    })
}

/// Loads the whole log of a table, page by page; 404 when there is no such
/// table.
pub async fn load(pool: &PgPool, table_id: Uuid) -> Result<Log, ServiceError> {
    // One snapshot: the version and the events of the same moment, however
    // the table moves meanwhile (else a move committed between the reads
    // shows as events beyond the version, a chain the audit calls broken).
    let mut tx = pool.begin().await?;
    store::connection::snapshot(&mut tx).await?;
    let version = store::events::current_version(&mut *tx, table_id)
        .await?
        .ok_or_else(|| ServiceError::NotFound("no such table".into()))?;
    let mut events: Vec<StoredEvent> = Vec::new();
    loop {
        let after = events.last().map_or(0, |e| e.seq);
        let page =
            store::events::read_after(&mut *tx, table_id, after, store::events::PAGE).await?;
        let full = page.len() as i64 == store::events::PAGE;
        events.extend(page);
        if !full {
            break;
        }
    }
    tx.commit().await?;
    Ok(Log {
        source: Source::Table(table_id),
        version,
        events,
        table_id: Some(table_id),
    })
}

/// The audit of a table. The audit of a table whose game is over (finished
/// or aborted) is kept: its log can no longer change, so it is read back,
/// not run again (a strong bot's moves are searches to replay), unless
/// `fresh` (an admin asking for it explicitly), which runs it again and
/// keeps the new one.
pub async fn kept_audit(
    pool: &PgPool,
    table_id: Uuid,
    fresh: bool,
) -> Result<AuditReport, ServiceError> {
    // Kept only for a game that was over, at the table's version then: a
    // row at the current version is that game's audit.
    if !fresh {
        if let Some(kept) = store::audits::kept(pool, table_id).await? {
            return serde_json::from_value(kept).map_err(ServiceError::internal);
        }
    }
    let log = load(pool, table_id).await?;
    let over = log.is_over();
    let report = tokio::task::spawn_blocking(move || audit(&log))
        .await
        .map_err(ServiceError::internal)?;
    if over {
        let kept = serde_json::to_value(&report).map_err(ServiceError::internal)?;
        store::audits::keep(pool, table_id, report.version, &kept).await?;
    }
    Ok(report)
}

/// Rebuilds the engine's event from a stored one.
pub fn parse(e: &StoredEvent) -> Result<TableEvent, String> {
    e.event().map_err(|err| err.to_string())
}

/// Applies the next event to `table` (the one fold step of a log, guarded:
/// `domain::table::apply_guarded`, taking the events in the order given: the hash
/// chain, checked apart, vouches for their seqs). An event the engine
/// cannot apply is reported, not a crash.
fn evolve_guarded(table: &mut Table, e: &TableEvent) -> Result<(), String> {
    domain::table::apply_guarded(table, table.version + 1, e).map_err(|err| err.to_string())
}

/// A log parsed and ready to fold. Built by [`Parsed::new`], which refuses
/// (500) a log that does not parse: the audit is the tool for corrupt logs.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub log: Log,
    pub events: Vec<TableEvent>,
}

fn corrupt(seq: i64, why: &str) -> ServiceError {
    ServiceError::internal(format!("the log is corrupt at seq {seq}: {why}"))
}

impl Parsed {
    /// The accounts of the persons ever seated.
    pub fn persons(&self) -> impl Iterator<Item = &domain::PlayerId> {
        self.events.iter().filter_map(|e| match e {
            TableEvent::PlayerJoined(s) if s.bot.is_none() => Some(&s.account_id),
            _ => None,
        })
    }

    pub fn new(log: Log) -> Result<Self, ServiceError> {
        let events = log
            .events
            .iter()
            .map(|e| parse(e).map_err(|why| corrupt(e.seq, &why)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { log, events })
    }

    /// The table after its first `n` events.
    pub fn table_after(&self, n: usize) -> Result<Table, ServiceError> {
        let mut it = self.events[..n.min(self.events.len())].iter();
        let first = it.next().ok_or_else(|| corrupt(1, "the log is empty"))?;
        let mut table = Table::from_events([first])
            .ok_or_else(|| corrupt(1, "the log does not begin with table_created"))?;
        for (i, e) in it.enumerate() {
            evolve_guarded(&mut table, e)
                .map_err(|why| corrupt(self.log.events[i + 1].seq, &why))?;
        }
        Ok(table)
    }

    /// The table after every event.
    pub fn table(&self) -> Result<Table, ServiceError> {
        self.table_after(self.events.len())
    }

    /// The events of round `n`: from its `round_started` to the event
    /// that ended it (to the end of the log while it runs): its
    /// `round_ended`, or the game's end during it (the last resignation's
    /// `game_ended`, a `game_aborted`), which makes it a round cut short.
    pub fn round_span(&self, n: u32) -> Option<RoundSpan> {
        let start = self.events.iter().position(
            |e| matches!(e, TableEvent::Game(Event::RoundStarted(rs)) if rs.round == n),
        )?;
        let end = self.events[start..]
            .iter()
            .position(|e| ends_round(e, n))
            .map(|i| start + i);
        Some(RoundSpan {
            round: n,
            start,
            end: end.unwrap_or(self.events.len() - 1),
            finished: end.is_some(),
            cut_short: end
                .is_some_and(|i| !matches!(self.events[i], TableEvent::Game(Event::RoundEnded(_)))),
        })
    }

    /// The number of the last round dealt.
    pub fn last_round(&self) -> Option<u32> {
        self.events.iter().rev().find_map(|e| match e {
            TableEvent::Game(Event::RoundStarted(rs)) => Some(rs.round),
            _ => None,
        })
    }

    /// The seat of an account in the game (from `game_started`), or at the
    /// table before the start.
    pub fn seat_of(&self, account_id: Uuid) -> Result<Option<Seat>, ServiceError> {
        Ok(self
            .table()?
            .seat_of(&crate::table_service::player_id(account_id)))
    }
}

/// Where a round's events are in the log (indices into [`Parsed::events`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundSpan {
    pub round: u32,
    pub start: usize,
    /// The last event of the round (the one that ended it once finished).
    pub end: usize,
    /// Over, however it ended.
    pub finished: bool,
    /// Ended by the game's end during it (a resignation, an abort), not by
    /// its own `round_ended`.
    pub cut_short: bool,
}

/// Whether `e` ends round `n`: its `round_ended`, or the game's end (a
/// round running when the game ends is over with it).
fn ends_round(e: &TableEvent, n: u32) -> bool {
    match e {
        TableEvent::Game(Event::RoundEnded(re)) => re.round == n,
        TableEvent::Game(Event::GameEnded(_)) | TableEvent::GameAborted { .. } => true,
        _ => false,
    }
}

impl RoundSpan {
    /// The last valid `step` (steps count events after the deal).
    pub fn last_step(&self) -> usize {
        self.end - self.start
    }
}

// ----- round history -----

/// One round that is over: played out, or cut short by the game's end
/// (the last resignation, an abort), which scores nothing.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({
    "round": 1, "dealer": 0, "out_order": [2],
    "points": [17, 4, 0], "totals": [17, 4, 0],
    "blocked": false, "cut_short": false,
    "started_at": "2025-01-31T18:04:05.123456Z", "ended_at": "2025-01-31T18:09:41.000017Z"
}))]
pub struct RoundSummary {
    pub round: u32,
    #[schema(value_type = usize)]
    pub dealer: Seat,
    /// Seats in the order they went out.
    #[schema(value_type = Vec<usize>)]
    pub out_order: Vec<Seat>,
    /// The points of the round, by seat (index = seat, as in replays); all
    /// 0 for a round cut short.
    pub points: Vec<i32>,
    /// The running totals after the round, by seat.
    pub totals: Vec<i32>,
    /// Nobody could draw or play (D31).
    pub blocked: bool,
    /// The game ended during the round (the last resignation, an abort):
    /// it scored nothing, and its `ended_at` is the game's end.
    pub cut_short: bool,
    /// `at` of the round's `round_started`.
    pub started_at: String,
    /// `at` of the event that ended the round.
    pub ended_at: String,
}

/// `GET /v1/tables/{id}/rounds`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({
    "rounds": [{
        "round": 1, "dealer": 0, "out_order": [1],
        "points": [12, 0], "totals": [12, 0], "blocked": false, "cut_short": false,
        "started_at": "2025-01-31T18:04:05.123456Z", "ended_at": "2025-01-31T18:09:41.000017Z"
    }],
    "result": {"ranking": [{"seat": 1, "total": 0, "place": 1}, {"seat": 0, "total": 12, "place": 2}],
               "winners": [1], "losers": [0], "reason": "end_condition", "corrected": null}
}))]
pub struct RoundsDto {
    pub rounds: Vec<RoundSummary>,
    /// The game's result once it is over: `{ranking: [{seat, total, place}],
    /// winners, losers, reason}` (the engine's `GameEnded`), and its
    /// correction, if any.
    #[schema(required = true)]
    pub result: Option<GameResult>,
}

/// A game's result as it ended, and as an admin corrected it (docs/API.md
/// "Corrections and sanctions").
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({
    "ranking": [{"seat": 1, "total": 0, "place": 1}, {"seat": 0, "total": 12, "place": 2}],
    "winners": [1], "losers": [0], "reason": "end_condition", "corrected": null
}))]
pub struct GameResult {
    #[serde(flatten)]
    pub ended: GameEnded,
    /// The last correction, which stands (`result_corrected`'s data); null
    /// when there is none.
    #[schema(required = true)]
    pub corrected: Option<ResultCorrected>,
}

/// Every round that is over and, once the game is over, the result.
pub fn rounds(p: &Parsed) -> Result<RoundsDto, ServiceError> {
    let mut running: Option<(u32, Seat, String)> = None;
    let mut rounds = Vec::new();
    let mut result = None;
    for (i, (stored, e)) in p.log.events.iter().zip(&p.events).enumerate() {
        let ended_at = || chain::format_at(stored.at);
        match e {
            TableEvent::Game(Event::RoundStarted(rs)) => {
                running = Some((rs.round, rs.dealer, chain::format_at(stored.at)));
            }
            TableEvent::Game(Event::RoundEnded(re)) => {
                let (_, dealer, started_at) = running.take().unwrap_or_default();
                rounds.push(RoundSummary {
                    round: re.round,
                    dealer,
                    out_order: re.out_order.clone(),
                    points: re.points.values().copied().collect(),
                    totals: re.totals.values().copied().collect(),
                    blocked: re.blocked,
                    cut_short: false,
                    started_at,
                    ended_at: ended_at(),
                });
            }
            TableEvent::Game(Event::GameEnded(_)) | TableEvent::GameAborted { .. } => {
                if let TableEvent::Game(Event::GameEnded(ge)) = e {
                    result = Some(GameResult {
                        ended: GameEnded::clone(ge),
                        corrected: None,
                    });
                }
                if let Some((round, dealer, started_at)) = running.take() {
                    rounds.push(cut_short(p, i, round, dealer, started_at, ended_at())?);
                }
            }
            TableEvent::ResultCorrected(c) => {
                if let Some(result) = result.as_mut() {
                    result.corrected = Some((**c).clone());
                }
            }
            _ => {}
        }
    }
    Ok(RoundsDto { rounds, result })
}

/// Round `round`, cut short by the game's end at event `i`: nothing scored,
/// the totals as they stood, the seats out so far.
fn cut_short(
    p: &Parsed,
    i: usize,
    round: u32,
    dealer: Seat,
    started_at: String,
    ended_at: String,
) -> Result<RoundSummary, ServiceError> {
    let table = p.table_after(i + 1)?;
    let game = table
        .game
        .as_ref()
        .ok_or_else(|| corrupt(p.log.events[i].seq, "a round without a game"))?;
    let totals = game.totals().to_vec();
    Ok(RoundSummary {
        round,
        dealer,
        out_order: game.round().map(|r| r.out.clone()).unwrap_or_default(),
        points: vec![0; totals.len()],
        totals,
        blocked: false,
        cut_short: true,
        started_at,
        ended_at,
    })
}

// ----- replays -----

/// `GET /v1/tables/{id}/rounds/{n}/replay`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({
    "round": 1,
    "events": [{"seq": 5, "type": "round_started", "v": 3, "at": "2025-01-31T18:04:05.123456Z",
                "data": {"round": 1, "dealer": 0, "hands": {"0": ["8H", "2S"], "1": ["QC", "5D"]},
                         "stock": ["3D"], "starter": "7C", "first_seat": 1,
                         "deck": {"id": "french52", "copies": 1, "hash": "9f2c5b1e7a3d4c6b8e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d"},
                         "salt": "4f0c2a1e9b7d3c5a8e6f1d2b0a9c8e7f"},
                "prev_hash": "5a1f0e0c9b7d3e2a4f6b8c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f",
                "hash": "0c9d8e7f6a5b4c3d2e1f5a1f0e0c9b7d3e2a4f6b8c1d0e9f8a7b6c5d4e3f2a1b"}],
    "corrected": null, "step": 0, "last_step": 0,
    "state": {"round": 1, "dealer": 0, "hands": [["8H", "2S"], ["QC", "5D"]], "stock": ["3D"],
              "discard": ["7C"], "top_card": "7C", "active_suit": null, "active_letter": null,
              "active_rank": null, "direction": "clockwise", "current_seat": 1,
              "pending": {"kind": "none", "seat": null, "draw": null, "count": null, "card": null,
                          "frozen": false, "challengeable": null},
              "out_order": [], "announced": [false, false], "totals": [0, 0]},
    "deals": {"status": "verified", "deals": 3, "reshuffles": 1, "seq": null, "reason": null}
}))]
pub struct ReplayDto {
    pub round: u32,
    /// The round's events in the public log format, with full data.
    pub events: Vec<StoredEvent>,
    /// The game's result as an admin corrected it (the standing
    /// `result_corrected`), null when it was not: a `points` correction may
    /// give this round other points than its events do.
    #[schema(required = true)]
    pub corrected: Option<ResultCorrected>,
    /// The step shown: 0 is right after the deal (`round_started`), K after
    /// the K-th event that follows it.
    pub step: usize,
    /// The last step of the round (its `round_ended` once finished).
    pub last_step: usize,
    /// The omniscient state after `step` (the engine's `FullView`): every
    /// hand by seat, the stock and the discard pile (top card last), the top
    /// card, the active suit/letter/rank, direction, current seat, pending,
    /// out order, announcements and totals.
    pub state: FullView,
    /// Whether the game's deals are its seeds' (docs/API.md "Fair deals"):
    /// `verified` once the game is over and its seed revealed.
    pub deals: DealsAudit,
}

/// The round `span` at `step` (default: its last step); 422
/// `step_out_of_range` beyond it.
pub fn replay(p: &Parsed, span: RoundSpan, step: Option<usize>) -> Result<ReplayDto, ServiceError> {
    let last = span.last_step();
    let step = step.unwrap_or(last);
    if step > last {
        return Err(ServiceError::Invalid {
            code: ProblemCode::StepOutOfRange,
            detail: format!("round {} has steps 0 to {last}, not {step}", span.round),
        });
    }
    let table = p.table_after(span.start + step + 1)?;
    let state =
        full_view(&table).ok_or_else(|| corrupt(p.log.events[span.start].seq, "no round"))?;
    let corrected = p.events.iter().rev().find_map(|e| match e {
        TableEvent::ResultCorrected(c) => Some((**c).clone()),
        _ => None,
    });
    Ok(ReplayDto {
        round: span.round,
        events: p.log.events[span.start..=span.end].to_vec(),
        corrected,
        step,
        last_step: last,
        state,
        deals: DealsAudit::of(&p.events, p.log.table_id),
    })
}

fn full_view(table: &Table) -> Option<FullView> {
    table.game.as_ref()?.full_view()
}

/// A readable account of round `round` (default: the last dealt), step by
/// step, every hand shown (`huit replay`, `huit log replay`).
/// `names`: its persons' names now ([`Parsed::persons`]); none (an
/// exported log, read with no database): persons shown by account id.
pub fn replay_text(
    p: &Parsed,
    round: Option<u32>,
    names: Option<&Names>,
) -> Result<String, ServiceError> {
    let n = round
        .or_else(|| p.last_round())
        .ok_or_else(|| ServiceError::NotFound("no round has been dealt at this table".into()))?;
    let span = p
        .round_span(n)
        .ok_or_else(|| ServiceError::NotFound(format!("no round {n} at this table")))?;
    let mut table = p.table_after(span.start)?;
    let names: Vec<String> = table
        .seated()
        .map(|s| match names.map(|names| names.of(s)) {
            Some(Shown::Person { username, .. }) => format!("seat {} {username}", s.seat),
            Some(Shown::Bot(level)) => format!("seat {} {level} bot", s.seat),
            Some(Shown::Erased) => format!("seat {} (erased)", s.seat),
            None => match s.bot {
                Some(level) => format!("seat {} {level} bot", s.seat),
                None => format!("seat {} account {}", s.seat, s.account_id),
            },
        })
        .collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}), round {n}{}: {}",
        p.log.source,
        table.ruleset,
        if span.finished { "" } else { " (running)" },
        names.join(", ")
    );
    for (k, i) in (span.start..=span.end).enumerate() {
        let stored = &p.log.events[i];
        let e = &p.events[i];
        evolve_guarded(&mut table, e).map_err(|why| corrupt(stored.seq, &why))?;
        let _ = writeln!(
            out,
            "\nstep {k:>3}  seq {:>4}  {}",
            stored.seq,
            describe(e, &stored.data)
        );
        if let Some(v) = full_view(&table) {
            let sizes: Vec<String> = v.hands.iter().map(|h| h.len().to_string()).collect();
            let _ = writeln!(
                out,
                "          top {}{}  turn {}  stock {}  hand sizes [{}]  totals {:?}",
                v.top_card,
                v.active_suit
                    .map(|s| format!(" (suit {s})"))
                    .or(v.active_letter.map(|l| format!(" (letter {l})")))
                    .unwrap_or_default(),
                v.current_seat
                    .map_or_else(|| "-".to_owned(), |s| s.to_string()),
                v.stock.len(),
                sizes.join(", "),
                v.totals
            );
            for (seat, hand) in v.hands.iter().enumerate() {
                let cards: Vec<String> = hand.iter().map(ToString::to_string).collect();
                let _ = writeln!(out, "          seat {seat}: {}", cards.join(" "));
            }
        }
    }
    Ok(out)
}

/// One line for an event: its type and the facts that matter.
fn describe(e: &TableEvent, data: &serde_json::Value) -> String {
    match e {
        TableEvent::Game(Event::RoundStarted(rs)) => format!(
            "round_started: round {}, dealer {}, starter {}, first seat {}",
            rs.round, rs.dealer, rs.starter, rs.first_seat
        ),
        TableEvent::Game(Event::RoundEnded(re)) => format!(
            "round_ended: out order {:?}, points {:?}, totals {:?}{}",
            re.out_order,
            re.points,
            re.totals,
            if re.blocked { " (blocked)" } else { "" }
        ),
        // Who moved for whom, and why (docs/RULES.md D38-D42).
        TableEvent::TurnTimedOut { seat, deadline } => format!(
            "turn_timed_out: seat {seat} let its deadline {deadline} pass; the server plays its timeout move"
        ),
        TableEvent::BotMoved {
            seat,
            bot,
            reason,
            seed,
            playouts,
        } => format!(
            "bot_moved: the server plays seat {seat} ({reason:?}) with {bot}, seed {seed}{}",
            playouts.map_or(String::new(), |p| format!(", {p} playouts"))
        ),
        TableEvent::SeatAway { seat } => {
            format!("seat_away: seat {seat} is away; the server plays it until it comes back")
        }
        TableEvent::PlayerResigned { seat } => {
            format!("player_resigned: seat {seat} resigned; the server plays it to the end")
        }
        other => {
            let mut fields = String::new();
            if let Some(map) = data.as_object() {
                for (k, v) in map {
                    let _ = write!(fields, " {k}={v}");
                }
            }
            format!("{}:{fields}", other.kind())
        }
    }
}
