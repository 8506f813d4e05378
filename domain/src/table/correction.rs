//! Corrections of a finished game's result (docs/API.md "Corrections and
//! sanctions"): an admin who upholds a dispute may correct the result, and
//! the correction is appended to the log as `result_corrected`, after
//! `game_ended`; nothing before it changes. Each correction applies to the
//! original result and replaces any earlier one: the last one stands.

use serde::{Deserialize, Serialize};

use super::{PlayerId, Table, TableEvent};
use crate::event::{EndReason, GameEnded, Placing, Seat};
use crate::rules::End;
use crate::score;

/// What an admin makes of a finished game's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Correction {
    /// The original result again. (`{}`: a field it does not take is
    /// refused, as a move's are.)
    None {},
    /// The game counts for no one: the ranking as it was, and not rated.
    Void {},
    /// Round `round`'s points by seat as given; the totals are summed
    /// again and ranked by the ruleset's own ranking, as at the game's end
    /// (the game stays over whatever the new totals).
    Points { round: u32, points: Vec<i32> },
    /// The seat is ranked last, and loses; the others move up.
    Disqualify {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
    },
}

/// Why a result was corrected: an upheld dispute, or a sanction voiding
/// the sanctioned account's rated games. On the wire, one key of the
/// event's data (`dispute_id` or `sanction_id`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grounds {
    DisputeId(String),
    SanctionId(String),
}

/// `result_corrected`: a correction and the result it makes (its schema:
/// [`crate::schema`]'s, which shows the grounds as the keys they are).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultCorrected {
    /// The dispute upheld (`dispute_id`) or the sanction (`sanction_id`).
    #[serde(flatten)]
    pub grounds: Grounds,
    /// The admin's account id.
    pub by: PlayerId,
    pub correction: Correction,
    pub ranking: Vec<Placing>,
    pub winners: Vec<Seat>,
    pub losers: Vec<Seat>,
    /// The totals by seat (index = seat).
    pub totals: Vec<i32>,
    /// Whether the game is rated as corrected: as it was, unless voided.
    pub rated: bool,
}

impl ResultCorrected {
    /// The result as `game_ended` would have said it.
    pub fn result(&self, reason: EndReason) -> GameEnded {
        GameEnded {
            ranking: self.ranking.clone(),
            winners: self.winners.clone(),
            losers: self.losers.clone(),
            reason,
        }
    }
}

/// Why a correction cannot be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CorrectionError {
    #[error("the game is not over")]
    NotOver,
    #[error("the game was aborted: it has no result to correct")]
    Aborted,
    #[error("round {0} is not a round that ended in this game")]
    NoSuchRound(u32),
    #[error("points are given by seat: {seats} numbers, not {given}")]
    PointsBySeat { seats: usize, given: usize },
    #[error("no seat {0} in this game")]
    NoSuchSeat(Seat),
    #[error("a total does not fit in 32 bits")]
    Overflow,
}

impl CorrectionError {
    /// A stable machine code for clients.
    pub fn code(&self) -> &'static str {
        match self {
            CorrectionError::NotOver => "game_running",
            CorrectionError::Aborted => "game_aborted",
            CorrectionError::NoSuchRound(_)
            | CorrectionError::PointsBySeat { .. }
            | CorrectionError::NoSuchSeat(_)
            | CorrectionError::Overflow => "invalid_correction",
        }
    }
}

impl Table {
    /// The `result_corrected` that `correction` makes of this table's
    /// finished game, on `grounds`, by the admin `by`.
    pub fn correct(
        &self,
        correction: Correction,
        grounds: &Grounds,
        by: &PlayerId,
    ) -> Result<TableEvent, CorrectionError> {
        if self.aborted {
            return Err(CorrectionError::Aborted);
        }
        let game = self.game.as_ref().ok_or(CorrectionError::NotOver)?;
        let original = game.result().ok_or(CorrectionError::NotOver)?;
        let mut totals = vec![0; game.seats()];
        for p in &original.ranking {
            if let Some(t) = totals.get_mut(p.seat) {
                *t = p.total;
            }
        }
        let rated = self.rated_game(original).is_some();
        let (result, rated) = match &correction {
            Correction::None {} => (original.clone(), rated),
            Correction::Void {} => (original.clone(), false),
            Correction::Points { round, points } => {
                let before = game
                    .history()
                    .iter()
                    .find(|r| r.round == *round)
                    .ok_or(CorrectionError::NoSuchRound(*round))?;
                if points.len() != totals.len() {
                    return Err(CorrectionError::PointsBySeat {
                        seats: totals.len(),
                        given: points.len(),
                    });
                }
                for (seat, total) in totals.iter_mut().enumerate() {
                    let was = before.points.get(&seat).copied().unwrap_or(0);
                    *total = total
                        .checked_sub(was)
                        .and_then(|t| t.checked_add(points[seat]))
                        .ok_or(CorrectionError::Overflow)?;
                }
                let result = match original.reason {
                    EndReason::Resigned => {
                        super::ranking_after(self.rules.end, &totals, &self.resigned_order)
                    }
                    EndReason::EndCondition => score::ranking(self.rules.end, &totals),
                };
                (result, rated)
            }
            Correction::Disqualify { seat } => {
                if *seat >= totals.len() {
                    return Err(CorrectionError::NoSuchSeat(*seat));
                }
                (disqualified(self.rules.end, original, *seat), rated)
            }
        };
        Ok(TableEvent::ResultCorrected(Box::new(ResultCorrected {
            grounds: grounds.clone(),
            by: by.clone(),
            correction,
            ranking: result.ranking,
            winners: result.winners,
            losers: result.losers,
            totals,
            rated,
        })))
    }
}

/// `original` with `seat` ranked last: the others keep their order and
/// their ties, moved up; `seat` loses, with those who lost by a rule rather
/// than by their place (reaching the threshold under `reacher_loses_at`,
/// D16, or resigning, D40); the first place's other seats win.
fn disqualified(end: End, original: &GameEnded, seat: Seat) -> GameEnded {
    let lost_by_rule = |p: &Placing| match original.reason {
        EndReason::Resigned => original.losers.contains(&p.seat),
        EndReason::EndCondition => {
            matches!(end, End::ReacherLosesAt(_)) && end.is_reached_by(p.total)
        }
    };
    let mut ranking: Vec<Placing> = Vec::with_capacity(original.ranking.len());
    let others = original.ranking.iter().filter(|p| p.seat != seat);
    let mut previous: Option<usize> = None;
    for p in others {
        let place = match (ranking.last(), previous) {
            (Some(last), Some(was)) if was == p.place => last.place,
            _ => ranking.len() + 1,
        };
        previous = Some(p.place);
        ranking.push(Placing { place, ..p.clone() });
    }
    let last = original.ranking.iter().find(|p| p.seat == seat);
    let total = last.map_or(0, |p| p.total);
    ranking.push(Placing {
        seat,
        total,
        place: ranking.len() + 1,
    });
    let winners = ranking
        .iter()
        .filter(|p| p.place == 1 && p.seat != seat && !lost_by_rule(p))
        .map(|p| p.seat)
        .collect();
    let losers = ranking
        .iter()
        .filter(|p| p.seat == seat || lost_by_rule(p))
        .map(|p| p.seat)
        .collect();
    GameEnded {
        ranking,
        winners,
        losers,
        reason: original.reason,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! The engine's corrections; how a corrected game is rated is
    //! `rating`'s to test (`rating::table_tests`).

    use super::*;
    use crate::table::presence_tests::{own_move, run, started};
    use crate::table::{NoticeKind, TableCommand, TableError};
    use crate::Status;

    /// A 3-player `classique` game its people played to the end, and its log.
    pub(crate) fn finished() -> (Table, Vec<TableEvent>) {
        let (mut table, mut log) = started(None);
        for _ in 0..20_000 {
            if table.status() != Status::Playing {
                break;
            }
            own_move(&mut table, &mut log);
        }
        assert_eq!(table.status(), Status::Finished);
        (table, log)
    }

    pub(crate) fn correct(correction: Correction) -> TableCommand {
        TableCommand::CorrectResult {
            by: "admin".into(),
            grounds: Grounds::DisputeId("6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11".into()),
            correction,
        }
    }

    /// The correction `events` hold.
    pub(crate) fn corrected(events: &[TableEvent]) -> &ResultCorrected {
        match events {
            [TableEvent::ResultCorrected(c)] => c,
            other => panic!("one result_corrected, not {other:?}"),
        }
    }

    fn original(table: &Table) -> GameEnded {
        table.game.as_ref().unwrap().result().unwrap().clone()
    }

    #[test]
    fn only_a_finished_game_is_corrected_not_a_running_nor_an_aborted_one() {
        let (table, _) = started(None);
        let refused = table.decide(&correct(Correction::Void {}), &mut rand::thread_rng());
        assert_eq!(refused, Err(CorrectionError::NotOver.into()));
        assert_eq!(refused.unwrap_err().code(), "game_running");
        let (mut table, mut log) = started(None);
        run(
            &mut table,
            &mut log,
            TableCommand::Abort {
                account_id: "a".into(),
            },
        );
        let refused = table.decide(&correct(Correction::Void {}), &mut rand::thread_rng());
        assert_eq!(refused.map_err(|e| e.code()), Err("game_aborted"));
    }

    #[test]
    fn the_grounds_are_one_key_of_the_events_data_a_dispute_or_a_sanction() {
        let (table, _) = finished();
        for (grounds, key) in [
            (Grounds::DisputeId("d-1".into()), "dispute_id"),
            (Grounds::SanctionId("s-1".into()), "sanction_id"),
        ] {
            let event = table
                .correct(Correction::Void {}, &grounds, &"admin".into())
                .unwrap();
            let TableEvent::ResultCorrected(c) = &event else {
                panic!("a correction is result_corrected")
            };
            let data = serde_json::to_value(c).unwrap();
            let keys: Vec<&str> = data
                .as_object()
                .unwrap()
                .keys()
                .map(|k| k.as_str())
                .collect();
            assert!(keys.contains(&key), "{keys:?}");
            assert_eq!(keys.len(), 8, "{keys:?}");
            assert_eq!(
                &serde_json::from_value::<ResultCorrected>(data).unwrap(),
                &**c
            );
        }
    }

    #[test]
    fn void_keeps_the_ranking_and_the_game_counts_for_no_one() {
        let (mut table, mut log) = finished();
        let events = run(&mut table, &mut log, correct(Correction::Void {}));
        let c = corrected(&events);
        let was = original(&table);
        assert_eq!(
            (&c.ranking, &c.winners, &c.losers),
            (&was.ranking, &was.winners, &was.losers)
        );
        assert!(!c.rated);
        assert_eq!(table.correction.as_ref(), Some(c));
        // The last correction stands: `none` gives the original result back,
        // and every correction stays in the log.
        let events = run(&mut table, &mut log, correct(Correction::None {}));
        let c = corrected(&events);
        assert!(c.rated);
        assert_eq!((&c.ranking, &c.winners), (&was.ranking, &was.winners));
        assert_eq!(table.correction.as_ref(), Some(c));
        let kept = log
            .iter()
            .filter(|e| matches!(e, TableEvent::ResultCorrected(_)));
        assert_eq!(kept.count(), 2);
    }

    #[test]
    fn points_replace_a_rounds_points_and_the_totals_are_ranked_again() {
        let (mut table, mut log) = finished();
        let was = original(&table);
        let first = table.game.as_ref().unwrap().history()[0].clone();
        let winner = was.winners[0];
        let mut points: Vec<i32> = (0..3).map(|s| first.points[&s]).collect();
        points[winner] += 1_000;
        let events = run(
            &mut table,
            &mut log,
            correct(Correction::Points {
                round: first.round,
                points,
            }),
        );
        let c = corrected(&events);
        let mut totals = vec![0; 3];
        for p in &was.ranking {
            totals[p.seat] = p.total;
        }
        totals[winner] += 1_000;
        assert_eq!(c.totals, totals);
        let ranked = score::ranking(table.rules.end, &totals);
        assert_eq!(
            (&c.ranking, &c.winners, &c.losers),
            (&ranked.ranking, &ranked.winners, &ranked.losers)
        );
        assert_ne!(
            c.winners, was.winners,
            "1,000 more points lose a lowest-wins game"
        );
        assert!(c.rated);
    }

    #[test]
    fn a_correction_names_a_round_that_ended_points_for_every_seat_and_a_seat_that_is() {
        let (table, _) = finished();
        let refused = |correction| {
            table
                .decide(&correct(correction), &mut rand::thread_rng())
                .unwrap_err()
        };
        let no_round = refused(Correction::Points {
            round: 99,
            points: vec![0; 3],
        });
        assert_eq!(
            no_round,
            TableError::Correction(CorrectionError::NoSuchRound(99))
        );
        let short = refused(Correction::Points {
            round: 1,
            points: vec![0; 2],
        });
        assert_eq!(short.code(), "invalid_correction");
        let huge = refused(Correction::Points {
            round: 1,
            points: vec![i32::MAX; 3],
        });
        assert_eq!(huge, TableError::Correction(CorrectionError::Overflow));
        let no_seat = refused(Correction::Disqualify { seat: 3 });
        assert_eq!(
            no_seat,
            TableError::Correction(CorrectionError::NoSuchSeat(3))
        );
    }

    #[test]
    fn disqualify_ranks_the_seat_last_and_the_others_move_up_ties_kept() {
        let placing = |seat, total, place| Placing { seat, total, place };
        let was = GameEnded {
            ranking: vec![placing(0, 10, 1), placing(1, 10, 1), placing(2, 20, 3)],
            winners: vec![0, 1],
            losers: vec![2],
            reason: EndReason::EndCondition,
        };
        let end = End::LowestWinsAt(100);
        let out = disqualified(end, &was, 0);
        assert_eq!(
            out.ranking,
            vec![placing(1, 10, 1), placing(2, 20, 2), placing(0, 10, 3)]
        );
        assert_eq!((out.winners, out.losers), (vec![1], vec![0]));
        // The last one disqualified: nobody moves, they alone lose.
        let out = disqualified(end, &was, 2);
        assert_eq!(out.ranking, was.ranking);
        assert_eq!((out.winners, out.losers), (vec![0, 1], vec![2]));
        // Under reacher_loses_at (D16) those who reached the threshold still
        // lose; after resignations (D40), those who resigned.
        let reached = End::ReacherLosesAt(20);
        assert_eq!(disqualified(reached, &was, 0).losers, vec![2, 0]);
        let resigned = GameEnded {
            reason: EndReason::Resigned,
            ..was.clone()
        };
        assert_eq!(disqualified(end, &resigned, 1).losers, vec![2, 1]);
    }

    #[test]
    fn a_correction_tells_every_person_of_the_table() {
        let (mut table, mut log) = finished();
        let events = run(&mut table, &mut log, correct(Correction::Void {}));
        let told: Vec<(NoticeKind, String)> = table
            .notices(None, &events)
            .into_iter()
            .map(|n| (n.kind, n.player.as_str().to_owned()))
            .collect();
        let every = ["a", "b", "c"].map(|p| (NoticeKind::ResultCorrected, p.to_owned()));
        assert_eq!(told, every);
    }
}
