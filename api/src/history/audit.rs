//! Score audits: every round recomputed from the log and compared with the
//! recorded scores, the hash chain checked, and every move the server made
//! for a seat decided again (docs/RULES.md D38, D42).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use domain::event::{EndReason, Event, GameEnded, RoundEnded, Seat, SeatKey};
use domain::score;
use domain::table::{self, Table, TableEvent};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{evolve_guarded, parse, Log, Source};
use store::chain::{self, ChainError};
use store::StoredEvent;

/// Points and totals by seat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(example = json!({"points": {"0": 17, "1": 0}, "totals": {"0": 17, "1": 0}}))]
pub struct Scores {
    #[schema(value_type = BTreeMap<SeatKey, i32>)]
    pub points: BTreeMap<Seat, i32>,
    #[schema(value_type = BTreeMap<SeatKey, i32>)]
    pub totals: BTreeMap<Seat, i32>,
}

/// One round's recorded scores against the ones recomputed from the fold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(example = json!({
    "round": 1, "seq": 57,
    "recorded": {"points": {"0": 17, "1": 0}, "totals": {"0": 17, "1": 0}},
    "recomputed": {"points": {"0": 17, "1": 0}, "totals": {"0": 17, "1": 0}},
    "matches": true
}))]
pub struct RoundAudit {
    pub round: u32,
    /// The seq of the event that ended the round: its `round_ended`, or
    /// the game's end for a round cut short.
    pub seq: i64,
    pub recorded: Scores,
    /// `score::round_points` on the hands folded just before `round_ended`,
    /// and the running sum of those points.
    pub recomputed: Scores,
    pub matches: bool,
    /// The game ended during the round (the last resignation, an abort):
    /// its `seq` is that end's, it scored nothing, and the totals recorded
    /// are the result's (an abort records none).
    #[serde(default)]
    pub cut_short: bool,
}

/// Something wrong at one seq.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(example = json!({"seq": 12, "reason": "hash does not match the event's content"}))]
pub struct AuditProblem {
    pub seq: i64,
    pub reason: String,
}

/// Whether a log's deals are its seeds' (docs/API.md "Fair deals").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DealsStatus {
    /// The revealed seed is the one `table_created` committed to, and
    /// every deal, first dealer and reshuffle is the one the seeds derive.
    Verified,
    /// The game is not over: its seed is not revealed yet.
    Pending,
    /// A table created before fair deals: its log commits to no seed.
    Unproven,
    /// Not checked: the table's id, which the shuffles name, was not given
    /// (an exported log without `--table`), or the log does not parse.
    #[default]
    Unchecked,
    /// An event is not what the seeds derive (`seq`, `reason`).
    Failed,
}

/// What the audit made of a log's deals.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(example = json!({"status": "verified", "deals": 3, "reshuffles": 1, "seq": null, "reason": null}))]
pub struct DealsAudit {
    pub status: DealsStatus,
    /// The deals and reshuffles checked (`verified`; 0 otherwise).
    pub deals: usize,
    pub reshuffles: usize,
    /// `failed`: the first event that is not what the seeds derive, and
    /// why; null otherwise.
    #[schema(required = true)]
    pub seq: Option<i64>,
    #[schema(required = true)]
    pub reason: Option<String>,
}

impl DealsAudit {
    fn status(status: DealsStatus) -> DealsAudit {
        DealsAudit {
            status,
            ..DealsAudit::default()
        }
    }

    /// What the deals of `events` (the whole log, parsed) prove, for the
    /// table `table_id`.
    pub fn of(events: &[TableEvent], table_id: Option<uuid::Uuid>) -> DealsAudit {
        let Some(id) = table_id else {
            return DealsAudit::status(DealsStatus::Unchecked);
        };
        match table::verify_revealed(events, &id.to_string()) {
            Ok(checked) => DealsAudit {
                status: DealsStatus::Verified,
                deals: checked.deals,
                reshuffles: checked.reshuffles,
                ..DealsAudit::default()
            },
            Err(table::Unfair::NoCommitment) => DealsAudit::status(DealsStatus::Unproven),
            Err(table::Unfair::NotRevealed) => DealsAudit::status(DealsStatus::Pending),
            Err(
                e @ (table::Unfair::FirstDealer { seq, .. }
                | table::Unfair::Deal { seq, .. }
                | table::Unfair::Reshuffle { seq, .. }
                | table::Unfair::Unfolded { seq }
                | table::Unfair::Commitment { seq }),
            ) => DealsAudit {
                status: DealsStatus::Failed,
                seq: Some(seq as i64),
                reason: Some(e.to_string()),
                ..DealsAudit::default()
            },
        }
    }

    /// The first event that is not what the seeds derive, and why.
    fn failure(&self) -> Option<(i64, &str)> {
        self.seq.zip(self.reason.as_deref())
    }

    /// One line for people.
    pub fn text(&self) -> String {
        match self.status {
            DealsStatus::Verified => format!(
                "deals verified: {} deal(s) and {} reshuffle(s) are the seeds'",
                self.deals, self.reshuffles
            ),
            DealsStatus::Pending => "deals not verified yet: the game is not over".into(),
            DealsStatus::Unproven => {
                "deals unproven: the table was created before fair deals".into()
            }
            DealsStatus::Unchecked => "deals not checked (give the table's id: --table)".into(),
            DealsStatus::Failed => format!(
                "deals NOT verified: {}",
                self.reason.as_deref().unwrap_or_default()
            ),
        }
    }
}

/// `GET /v1/admin/tables/{id}/audit`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(example = json!({
    "ok": false, "chain_valid": false, "first_bad_seq": 12,
    "problems": [{"seq": 12, "reason": "hash does not match the event's content"}],
    "rounds": [{"round": 1, "seq": 57,
                "recorded": {"points": {"0": 17, "1": 0}, "totals": {"0": 17, "1": 0}},
                "recomputed": {"points": {"0": 17, "1": 0}, "totals": {"0": 17, "1": 0}},
                "matches": true}],
    "events": 120, "version": 120,
    "deals": {"status": "verified", "deals": 3, "reshuffles": 1, "seq": null, "reason": null}
}))]
pub struct AuditReport {
    /// The chain is valid, every round matches and nothing else is wrong.
    pub ok: bool,
    /// Seqs run 1..n without a gap, each `prev_hash` is the previous `hash`,
    /// every `hash` recomputes, and n is the table's version.
    pub chain_valid: bool,
    /// The smallest seq named in `problems` (null when there are none).
    #[schema(required = true)]
    pub first_bad_seq: Option<i64>,
    /// Everything found wrong, in seq order.
    pub problems: Vec<AuditProblem>,
    pub rounds: Vec<RoundAudit>,
    /// Events read.
    pub events: usize,
    /// The table's version (`game_tables.version`).
    pub version: i64,
    /// Whether the deals are the seeds' (audits kept before fair deals:
    /// `unchecked`).
    #[serde(default)]
    pub deals: DealsAudit,
}

/// Whether `data` holds a salt as version 2 writes it: 32 lowercase hex
/// digits (without it, a hash of a redacted event could give its cards away).
fn has_salt(data: &serde_json::Value) -> bool {
    data.get(domain::redaction::SALT_KEY)
        .and_then(|s| s.as_str())
        .is_some_and(domain::Salt::is_written)
}

/// Re-folds the whole log with the engine, recomputes every round's points
/// and the running totals, compares them with what each `round_ended`
/// recorded (and the ranking with `game_ended`), and verifies the hash chain
/// against the table's version. Never fails: what is wrong is reported.
pub fn audit(log: &Log) -> AuditReport {
    let mut problems = Problems::default();
    let chain_valid = check_chain(log, &mut problems);
    let mut fold = Folding::default();
    // Every event parsed first: an automatic move is checked against the
    // events that follow its marker.
    let parsed: Vec<Result<TableEvent, String>> = log.events.iter().map(parse).collect();
    for (i, stored) in log.events.iter().enumerate() {
        let seq = stored.seq;
        if stored.v >= 2 && !has_salt(&stored.data) {
            problems.add(seq, "a version 2 event without its salt of 32 hex digits");
        }
        let e = match &parsed[i] {
            Ok(e) => e,
            Err(why) => {
                let kind = &stored.kind;
                problems.add(
                    seq,
                    format!("the data of this {kind} does not parse: {why}"),
                );
                continue;
            }
        };
        if !fold.check(stored, e, &parsed[i + 1..], &mut problems) {
            // The state is no longer trustworthy: stop folding.
            break;
        }
    }
    if fold.table.is_none() && log.events.is_empty() {
        problems.add(1, "the log is empty");
    }
    let deals = match parsed.into_iter().collect::<Result<Vec<_>, _>>() {
        Ok(events) => DealsAudit::of(&events, log.table_id),
        Err(_) => DealsAudit::status(DealsStatus::Unchecked),
    };
    if let Some((seq, reason)) = deals.failure() {
        problems.add(seq, reason);
    }
    let mut problems = problems.0;
    problems.sort_by_key(|p| p.seq);
    let first_bad_seq = problems.first().map(|p| p.seq);
    AuditReport {
        ok: chain_valid && problems.is_empty() && fold.rounds.iter().all(|r| r.matches),
        chain_valid,
        first_bad_seq,
        problems,
        rounds: fold.rounds,
        events: log.events.len(),
        version: log.version,
        deals,
    }
}

/// What an audit found wrong, by seq.
#[derive(Debug, Default)]
struct Problems(Vec<AuditProblem>);

impl Problems {
    fn add(&mut self, seq: i64, reason: impl Into<String>) {
        self.0.push(AuditProblem {
            seq,
            reason: reason.into(),
        });
    }
}

/// The hash chain, and that it ends at the table's version: whether both
/// hold.
fn check_chain(log: &Log, problems: &mut Problems) -> bool {
    if let Err(err) = chain::verify_chain(&log.events) {
        let (seq, reason) = match err {
            ChainError::Gap { seq, expected } => {
                (expected, format!("seq {expected} is missing (the next event is seq {seq})"))
            }
            ChainError::PrevHashMismatch { seq } => (
                seq,
                "prev_hash is not the previous event's hash (an event was removed, inserted or moved)"
                    .to_owned(),
            ),
            ChainError::HashMismatch { seq } => {
                (seq, "hash does not match the event's content".to_owned())
            }
        };
        problems.add(seq, reason);
        return false;
    }
    let (last, version) = (log.events.last().map_or(0, |e| e.seq), log.version);
    if last < version {
        let reason = format!("the log ends at seq {last} but the table is at version {version}");
        problems.add(last + 1, reason);
    } else if last > version {
        let reason = format!("the log runs to seq {last} beyond the table's version {version}");
        problems.add(version + 1, reason);
    }
    last == version
}

/// The log folded with the engine, event by event, and what was recomputed
/// along the way.
#[derive(Debug, Default)]
struct Folding {
    table: Option<Table>,
    rounds: Vec<RoundAudit>,
    /// The running totals, kept apart from the engine's.
    running: BTreeMap<Seat, i32>,
    game_over: bool,
    /// The time of the latest `turn_started`, when a turn's deadline starts.
    turn_started_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl Folding {
    /// Checks `e` (stored as `stored`, followed by `following`) against the
    /// table folded so far, then folds it; false when it does not fold.
    fn check(
        &mut self,
        stored: &StoredEvent,
        e: &TableEvent,
        following: &[Result<TableEvent, String>],
        problems: &mut Problems,
    ) -> bool {
        let seq = stored.seq;
        // A finished table's log takes more events: its rematch's offer,
        // and corrections of its result.
        let after_the_end = matches!(
            e,
            TableEvent::RematchOffered { .. }
                | TableEvent::ResultCorrected(_)
                | TableEvent::SeedRevealed { .. }
        );
        if self.game_over && !after_the_end {
            problems.add(seq, "an event after game_ended");
        }
        let Some(t) = self.table.as_mut() else {
            match Table::from_events([e]) {
                Some(t) => self.table = Some(t),
                None => {
                    let kind = e.kind();
                    problems.add(
                        seq,
                        format!("the log begins with {kind}, not table_created"),
                    );
                }
            }
            return true;
        };
        match e {
            TableEvent::Game(Event::RoundEnded(re)) => {
                let round = round_audit(t, &mut self.running, re, seq, problems);
                self.rounds.push(round);
            }
            TableEvent::Game(Event::GameEnded(ge)) => {
                self.game_over = true;
                let cut = cut_short_audit(t, &self.running, Some(ge), seq, problems);
                self.rounds.extend(cut);
                result_audit(t, &self.running, ge, seq, problems);
            }
            TableEvent::GameAborted { .. } => {
                let cut = cut_short_audit(t, &self.running, None, seq, problems);
                self.rounds.extend(cut);
            }
            // A correction is what the engine makes of the original result.
            TableEvent::ResultCorrected(c) => {
                let recomputed = t.correct(c.correction.clone(), &c.grounds, &c.by);
                if recomputed.as_ref().ok() != Some(e) {
                    problems.add(seq, "the result recorded in result_corrected differs from the correction recomputed on the original result");
                }
            }
            TableEvent::Game(Event::TurnStarted { .. }) => self.turn_started_at = Some(stored.at),
            TableEvent::TurnTimedOut { .. } | TableEvent::BotMoved { .. } => {
                automatic_audit(t, (stored, e), self.turn_started_at, following, problems);
            }
            _ => {}
        }
        match evolve_guarded(t, e) {
            Ok(()) => true,
            Err(why) => {
                problems.add(seq, why);
                false
            }
        }
    }
}

/// A `game_ended`'s result against the ranking of the recomputed totals
/// (`running`), or D40's after resignations.
fn result_audit(
    t: &Table,
    running: &BTreeMap<Seat, i32>,
    ge: &GameEnded,
    seq: i64,
    problems: &mut Problems,
) {
    let totals: Vec<i32> = running.values().copied().collect();
    let expected = match (ge.reason, t.game.as_ref()) {
        (EndReason::Resigned, Some(game)) => {
            table::ranking_after_resignations(game, &t.resigned_order)
        }
        _ => score::ranking(t.rules.end, &totals),
    };
    if *ge != expected {
        problems.add(
            seq,
            "the result recorded in game_ended differs from the ranking of the recomputed totals",
        );
    }
}

/// A move the server made for a seat (`turn_timed_out`, `bot_moved`, as
/// `stored`): not before the seat's deadline (the turn started at
/// `turn_started_at`), and the move it had to make, as the `following`
/// events show it (D38, D42).
fn automatic_audit(
    t: &Table,
    (stored, e): (&StoredEvent, &TableEvent),
    turn_started_at: Option<chrono::DateTime<chrono::Utc>>,
    following: &[Result<TableEvent, String>],
    problems: &mut Problems,
) {
    if let TableEvent::TurnTimedOut { .. } = e {
        let due = t
            .clock
            .zip(turn_started_at)
            .map(|(clock, at)| at + chrono::Duration::seconds(i64::from(clock.turn_seconds)));
        if due.is_none_or(|due| stored.at < due) {
            problems.add(stored.seq, "turn_timed_out before the seat's deadline");
        }
    }
    let following: Vec<TableEvent> = following
        .iter()
        .map_while(|p| p.as_ref().ok().cloned())
        .collect();
    if let Err(why) = t.check_automatic(e, &following) {
        problems.add(stored.seq, why);
    }
}

/// A `round_ended` against the round folded just before it: its hands,
/// out order and number, and its scores against the recomputed ones.
fn round_audit(
    t: &Table,
    running: &mut BTreeMap<Seat, i32>,
    re: &RoundEnded,
    seq: i64,
    problems: &mut Problems,
) -> RoundAudit {
    let recomputed = recompute_round(t, running);
    let recorded = Scores {
        points: re.points.clone(),
        totals: re.totals.clone(),
    };
    if let Some(round) = t.game.as_ref().and_then(|g| g.round()) {
        let hands: BTreeMap<Seat, _> = round.hands.iter().cloned().enumerate().collect();
        if hands != re.hands || round.out != re.out_order || round.number != re.round {
            problems.add(
                seq,
                format!(
                    "round_ended of round {} does not record the folded hands, out order or round",
                    re.round
                ),
            );
        }
    }
    let matches = recomputed.as_ref() == Some(&recorded);
    if !matches {
        let round = re.round;
        problems.add(
            seq,
            format!("the scores recorded for round {round} differ from the recomputed ones"),
        );
    }
    RoundAudit {
        round: re.round,
        seq,
        recorded,
        recomputed: recomputed.unwrap_or(Scores {
            points: BTreeMap::new(),
            totals: BTreeMap::new(),
        }),
        matches,
        cut_short: false,
    }
}

/// A round cut short by the game's end at `seq` (`ended`: the result, if
/// recorded): nothing scored, the totals as they stood, and the result's
/// totals against them.
fn cut_short_audit(
    t: &Table,
    running: &BTreeMap<Seat, i32>,
    ended: Option<&GameEnded>,
    seq: i64,
    problems: &mut Problems,
) -> Option<RoundAudit> {
    let game = t.game.as_ref()?;
    let round = game.round().filter(|r| r.current.is_some())?;
    let seats = 0..game.seats();
    let recomputed = Scores {
        points: seats.clone().map(|s| (s, 0)).collect(),
        totals: seats
            .map(|s| (s, running.get(&s).copied().unwrap_or(0)))
            .collect(),
    };
    let recorded = match ended {
        Some(ge) => Scores {
            points: recomputed.points.clone(),
            totals: ge.ranking.iter().map(|p| (p.seat, p.total)).collect(),
        },
        None => recomputed.clone(),
    };
    let matches = recorded == recomputed;
    if !matches {
        problems.add(
            seq,
            format!(
                "the totals recorded when round {} was cut short differ from the recomputed ones",
                round.number
            ),
        );
    }
    Some(RoundAudit {
        round: round.number,
        seq,
        recorded,
        recomputed,
        matches,
        cut_short: true,
    })
}

/// The points of the round about to end (hands and out order as folded),
/// added to the independently kept running totals.
fn recompute_round(t: &Table, running: &mut BTreeMap<Seat, i32>) -> Option<Scores> {
    let game = t.game.as_ref()?;
    let round = game.round()?;
    let book = game.rules().compile().ok()?;
    let points = score::round_points(game.rules(), &book, &round.hands, &round.out);
    for (seat, p) in points.iter().enumerate() {
        *running.entry(seat).or_insert(0) += p;
    }
    Some(Scores {
        points: points.into_iter().enumerate().collect(),
        totals: running.clone(),
    })
}

/// The audit as text (`huit audit`, `huit log verify`).
pub fn audit_text(source: &Source, r: &AuditReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{source}: {} events, version {}", r.events, r.version);
    let _ = writeln!(
        out,
        "hash chain: {}",
        if r.chain_valid { "valid" } else { "BROKEN" }
    );
    for round in &r.rounds {
        let _ = writeln!(
            out,
            "round {:>3} (seq {:>5}): {}  recorded points {:?} totals {:?}  recomputed points {:?} totals {:?}",
            round.round,
            round.seq,
            if round.matches { "ok      " } else { "MISMATCH" },
            round.recorded.points,
            round.recorded.totals,
            round.recomputed.points,
            round.recomputed.totals,
        );
    }
    let _ = writeln!(out, "{}", r.deals.text());
    for p in &r.problems {
        let _ = writeln!(out, "problem at seq {}: {}", p.seq, p.reason);
    }
    match r.first_bad_seq {
        _ if r.ok => out.push_str("audit: OK\n"),
        Some(seq) => {
            let _ = writeln!(out, "audit: FAILED (first bad seq {seq})");
        }
        None => out.push_str("audit: FAILED\n"),
    }
    out
}
