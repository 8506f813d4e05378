//! The `basic` bot: what a decent casual player does, by fixed rules.
//!
//! 1. Challenge an unannounced last card whenever it may (D8).
//! 2. Otherwise play rather than draw, and among plays prefer, in order:
//!    announcing a last card; not spending a wild card (an 8, a star, a
//!    substitute) while another card will do; hurting the next players
//!    (draws, skips, freezes) when someone is close to going out; shedding
//!    the card worth most in hand; naming the suit (or letter) it holds most
//!    of.
//! 3. With no play, pass where the rules allow it, else draw.
//!
//! Deterministic: the same view gives the same move.

use crate::event::Move;
use crate::rules::{Book, Effect};
use crate::view::SeatView;

/// The bot's choice among `view.legal_moves` (not empty).
pub(super) fn decide<'v>(view: &'v SeatView, book: &Book) -> &'v Move {
    let moves = &view.legal_moves;
    if let Some(challenge) = moves.iter().find(|m| matches!(m, Move::Challenge { .. })) {
        return challenge;
    }
    let someone_close = view
        .players
        .iter()
        .any(|p| Some(p.seat) != view.my_seat && !p.out && p.hand_size <= 2);
    let best_play = moves
        .iter()
        .filter(|m| matches!(m, Move::Play { .. }))
        .max_by_key(|m| score(m, view, book, someone_close));
    if let Some(play) = best_play {
        return play;
    }
    moves
        .iter()
        .find(|m| matches!(m, Move::Pass {}))
        .or_else(|| moves.iter().find(|m| matches!(m, Move::Draw {})))
        .unwrap_or(&moves[0])
}

/// How much the bot likes a play: the larger the better; ties go to the
/// first listed.
fn score(mv: &Move, view: &SeatView, book: &Book, someone_close: bool) -> (bool, bool, i32) {
    let Move::Play {
        card,
        suit,
        letter,
        as_card: _,
        announce,
    } = mv
    else {
        return (false, false, i32::MIN);
    };
    let effect = book.effect(*card);
    let wild = matches!(
        effect,
        Some(Effect::WildSuit | Effect::WildLetter | Effect::Substitute)
    );
    let last_cards = view.hand.len() <= 2;
    let keeps_wild = !wild || last_cards;
    let hurts = matches!(
        effect,
        Some(
            Effect::DrawSkip(_)
                | Effect::AttackChain(_)
                | Effect::Firecracker(_)
                | Effect::Skip
                | Effect::Freeze
        )
    );
    let named = view
        .hand
        .iter()
        .filter(|c| *c != card)
        .filter(|c| {
            (suit.is_some() && c.suit() == *suit) || (letter.is_some() && c.letter() == *letter)
        })
        .count() as i32;
    let value = book.points(*card).abs() + if hurts && someone_close { 100 } else { 0 };
    (*announce, keeps_wild, value * 16 + named)
}
