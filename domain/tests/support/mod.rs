//! Shared helpers for the engine's tests: building games from hand-made
//! deals, and playing seeded random games.
#![allow(dead_code)]

use std::collections::BTreeMap;

use domain::{
    Card, Command, DeckId, Event, Game, Move, Preset, RoundStarted, Rules, RuleError, Seat,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

pub fn cards(codes: &str) -> Vec<Card> {
    codes
        .split_whitespace()
        .map(|c| c.parse().unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

pub fn card(code: &str) -> Card {
    code.parse().unwrap()
}

pub fn preset(id: &str) -> Rules {
    Preset::from_id(id).unwrap().rules()
}

pub fn with_options(id: &str, options: serde_json::Value) -> Rules {
    Preset::from_id(id)
        .unwrap()
        .with_options(options.as_object().unwrap())
        .unwrap()
}

/// A hand-made deal: `hands[i]` for seat i, the starter, and the stock with
/// its top card FIRST (as one would read a face-down pile from the top).
/// The first player is the seat after the dealer (D23).
pub struct Deal<'a> {
    pub dealer: Seat,
    pub hands: &'a [&'a str],
    pub starter: &'a str,
    pub stock: &'a str,
}

/// A game in round 1 as dealt by `deal`, with no starter effect applied.
pub fn game(rules: Rules, deal: Deal) -> Game {
    let seats = deal.hands.len();
    let mut g = Game::new(rules.clone(), seats).unwrap();
    let mut stock = cards(deal.stock);
    stock.reverse();
    let hands: BTreeMap<Seat, Vec<Card>> = deal
        .hands
        .iter()
        .enumerate()
        .map(|(s, h)| (s, cards(h)))
        .collect();
    g.evolve(&Event::RoundStarted(RoundStarted {
        round: 1,
        dealer: deal.dealer,
        deck: DeckId::of(rules.deck, rules.decks.count(seats)),
        hands,
        stock,
        starter: card(deal.starter),
        first_seat: (deal.dealer + 1) % seats,
    }));
    g
}

pub fn play(code: &str) -> Move {
    Move::play(card(code))
}

pub fn play_suit(code: &str, suit: &str) -> Move {
    Move::Play {
        card: card(code),
        suit: Some(suit.parse().unwrap()),
        letter: None,
        as_card: None,
        announce: false,
    }
}

pub fn play_letter(code: &str, letter: &str) -> Move {
    Move::Play {
        card: card(code),
        suit: None,
        letter: Some(letter.parse().unwrap()),
        as_card: None,
        announce: false,
    }
}

pub fn play_as(code: &str, named: &str, suit: Option<&str>) -> Move {
    Move::Play {
        card: card(code),
        suit: suit.map(|s| s.parse().unwrap()),
        letter: None,
        as_card: Some(card(named)),
        announce: false,
    }
}

pub fn announced(mv: Move) -> Move {
    match mv {
        Move::Play {
            card,
            suit,
            letter,
            as_card,
            ..
        } => Move::Play {
            card,
            suit,
            letter,
            as_card,
            announce: true,
        },
        m => m,
    }
}

/// Applies a move in place; panics with the reason when it is refused.
pub fn ok(g: &mut Game, seat: Seat, mv: Move) -> Vec<Event> {
    try_move(g, seat, mv.clone()).unwrap_or_else(|e| panic!("seat {seat} {mv:?} refused: {e}"))
}

/// Applies a move in place with a fixed rng (reshuffles are seeded).
pub fn try_move(g: &mut Game, seat: Seat, mv: Move) -> Result<Vec<Event>, RuleError> {
    let mut out = Vec::new();
    g.execute(&Command::Move { seat, mv }, &mut rng(7), &mut out)?;
    Ok(out)
}

/// Asserts the move is refused, that nothing changed, and returns the error.
pub fn refused(g: &mut Game, seat: Seat, mv: Move) -> RuleError {
    let before = g.clone();
    let err = try_move(g, seat, mv.clone()).expect_err(&format!("{mv:?} should be refused"));
    assert_eq!(*g, before, "a refused move changed the game");
    assert!(
        !g.legal_moves(seat).contains(&mv),
        "{mv:?} is refused but listed in legal_moves"
    );
    err
}

pub fn hand(g: &Game, seat: Seat) -> Vec<String> {
    g.round().unwrap().hands[seat]
        .iter()
        .map(|c| c.to_string())
        .collect()
}

pub fn current(g: &Game) -> Option<Seat> {
    g.round().unwrap().current
}

pub fn kinds(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(Event::kind).collect()
}

/// Chooses a random move among the legal moves of the seats that have any:
/// mostly the seat on turn, sometimes a challenger.
pub fn random_move(g: &Game, rng: &mut impl Rng) -> Option<(Seat, Move)> {
    let r = g.round()?;
    let current = r.current?;
    let mut challengers: Vec<(Seat, Move)> = Vec::new();
    if r.window.is_some() {
        for s in 0..g.seats() {
            if s == current {
                continue;
            }
            for m in g.legal_moves(s) {
                challengers.push((s, m));
            }
        }
    }
    if !challengers.is_empty() && rng.gen_bool(0.5) {
        return Some(challengers[rng.gen_range(0..challengers.len())].clone());
    }
    let moves = g.legal_moves(current);
    if moves.is_empty() {
        return None;
    }
    Some((current, moves[rng.gen_range(0..moves.len())].clone()))
}
