//! Round scores and the end of the game (docs/RULES.md §3.5, §3.6, D16, D17, D21,
//! D31): pure functions of the final hands, the order of going out and the
//! rules.

use crate::card::Card;
use crate::event::{EndReason, GameEnded, Placing, Seat};
use crate::rules::{Book, End, HandPoints, Placement, Rules, Scoring};

/// The points of a hand.
pub fn hand_points(book: &Book, hand: &[Card]) -> i32 {
    hand.iter().map(|c| book.points(*c)).sum()
}

/// Each seat's points for a round that ended with these hands and this order
/// of going out. `blocked`: nobody went out (D31).
pub fn round_points(rules: &Rules, book: &Book, hands: &[Vec<Card>], out: &[Seat]) -> Vec<i32> {
    match &rules.scoring {
        Scoring::HandPoints(HandPoints { finisher_bonus }) => hands
            .iter()
            .enumerate()
            .map(|(seat, hand)| {
                if out.contains(&seat) {
                    *finisher_bonus
                } else {
                    hand_points(book, hand)
                }
            })
            .collect(),
        // D17: 50 / 20 / 10 / 0 by order of going out; D31: those still
        // holding cards score 0.
        Scoring::Placement(Placement { awards }) => (0..hands.len())
            .map(|seat| {
                out.iter()
                    .position(|s| *s == seat)
                    .and_then(|i| awards.get(i).copied())
                    .unwrap_or(0)
            })
            .collect(),
    }
}

/// Does the game end with these totals after `rounds` rounds?
pub fn game_is_over(rules: &Rules, totals: &[i32], rounds: usize) -> bool {
    match rules.rounds {
        Some(n) => rounds >= n as usize,
        None => totals.iter().any(|t| rules.end.is_reached_by(*t)),
    }
}

/// The final ranking. Lowest total first, or highest first when the highest
/// wins; under `reacher_loses_at` the players who reached the threshold are
/// the losers and come last (D16). Equal totals share a place (D21).
pub fn ranking(end: End, totals: &[i32]) -> GameEnded {
    let reached = |t: i32| matches!(end, End::ReacherLosesAt(_)) && end.is_reached_by(t);
    // A sort key where smaller is better.
    let key = |seat: Seat| {
        let t = totals[seat];
        let score = if end.highest_wins() {
            -(t as i64)
        } else {
            t as i64
        };
        (reached(t), score)
    };
    let mut seats: Vec<Seat> = (0..totals.len()).collect();
    seats.sort_by_key(|s| (key(*s), *s));
    let ranking: Vec<Placing> = seats
        .iter()
        .map(|&seat| Placing {
            seat,
            total: totals[seat],
            place: 1 + seats.iter().filter(|&&o| key(o) < key(seat)).count(),
        })
        .collect();
    let winners = ranking
        .iter()
        .filter(|p| p.place == 1 && !reached(p.total))
        .map(|p| p.seat)
        .collect();
    let worst = ranking.iter().map(|p| p.place).max().unwrap_or(1);
    let mut losers: Vec<Seat> = ranking
        .iter()
        .filter(|p| reached(p.total))
        .map(|p| p.seat)
        .collect();
    if losers.is_empty() && worst > 1 {
        losers = ranking
            .iter()
            .filter(|p| p.place == worst)
            .map(|p| p.seat)
            .collect();
    }
    GameEnded {
        reason: EndReason::EndCondition,
        ranking,
        winners,
        losers,
    }
}
