//! The `strong` bot: flat Monte Carlo over the games the seat cannot tell
//! apart (determinized search). For each legal move, deal the unseen cards
//! at random ([`Sight::deal`]), play the move, and play the round out with
//! the `basic` bot at every seat; the move that most often ends with this
//! seat going out first wins (ties: the fewest points left in hand). The
//! engine's speed is the bot's strength: more playouts, better choices.

use rand::Rng;

use super::{basic, Sight};
use crate::engine::Command;
use crate::event::{Event, Move};
use crate::game::Status;

/// Moves a playout makes at most before it is scored as it stands.
const PLAYOUT_MOVES: usize = 400;

/// How many playouts one decision may make, shared among the legal moves:
/// [`Playouts::FULL`] unless the server, short of time for bots, gives less
/// (never below [`Playouts::LEAST`]). The number is recorded with the move
/// (`bot_moved.playouts`), so that a replay asks the same search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Playouts(u32);

impl Playouts {
    /// The level's own search: what it plays when nothing presses.
    pub const FULL: Playouts = Playouts(2000);
    /// The least search the server ever gives: below it `strong` no longer
    /// beats `basic` (D42; BENCHMARKS.md, "Thirteenth pass").
    pub const LEAST: Playouts = Playouts(500);

    /// `n` playouts, brought within [`Playouts::LEAST`]..=[`Playouts::FULL`].
    pub fn new(n: u32) -> Playouts {
        Playouts(n.clamp(Self::LEAST.0, Self::FULL.0))
    }

    pub fn get(self) -> u32 {
        self.0
    }
}

pub(super) fn decide<'v, R: Rng + ?Sized>(
    sight: &'v Sight,
    playouts: Playouts,
    rng: &mut R,
) -> &'v Move {
    let moves = &sight.view.legal_moves;
    if moves.len() == 1 {
        return &moves[0];
    }
    let per_move = (playouts.get() as usize / moves.len()).max(4);
    let mut best = (f64::MIN, 0);
    for (i, mv) in moves.iter().enumerate() {
        let mut total = 0.0;
        for _ in 0..per_move {
            total += playout(sight, mv, rng);
        }
        let mean = total / per_move as f64;
        if mean > best.0 {
            best = (mean, i);
        }
    }
    &moves[best.1]
}

/// One game the seat cannot tell from the real one, `first` played, then
/// the round played out: 1 when the seat goes out first, less the points
/// left in its hand (a thousandth each).
fn playout<R: Rng + ?Sized>(sight: &Sight, first: &Move, rng: &mut R) -> f64 {
    let me = sight.seat;
    let mut game = sight.deal(rng);
    let mut events: Vec<Event> = Vec::new();
    let mut mv = first.clone();
    let mut seat = me;
    for _ in 0..PLAYOUT_MOVES {
        events.clear();
        if game
            .execute(&Command::Move { seat, mv }, rng, &mut events)
            .is_err()
        {
            return 0.0;
        }
        for e in &events {
            if let Event::RoundEnded(ended) = e {
                let won = ended.out_order.first() == Some(&me);
                let left = ended.points.get(&me).copied().unwrap_or(0).max(0);
                return f64::from(u8::from(won)) - f64::from(left) / 1000.0;
            }
        }
        if game.status() != Status::Playing {
            return 0.0;
        }
        let Some(next) = game.round().and_then(|r| r.current) else {
            return 0.0;
        };
        seat = next;
        let view = game.view(Some(seat));
        if view.legal_moves.is_empty() {
            return 0.0;
        }
        mv = basic::decide(&view, &game.book).clone();
    }
    let left: i32 = game
        .round()
        .map(|r| r.hands[me].iter().map(|c| game.points(*c)).sum())
        .unwrap_or(0);
    -f64::from(left.max(0)) / 1000.0
}
