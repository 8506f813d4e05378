//! Shared helpers for the engine's tests: building games from hand-made
//! deals, and playing seeded random games.

use std::collections::BTreeMap;

use domain::{
    Card, Command, DeckId, Event, Game, Move, Preset, RoundStarted, RuleError, Rules, Seat,
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
    g.evolve(&Event::RoundStarted(Box::new(RoundStarted {
        round: 1,
        dealer: deal.dealer,
        deck: DeckId::of(rules.deck, rules.decks.count(seats)),
        hands,
        stock,
        starter: card(deal.starter),
        first_seat: (deal.dealer + 1) % seats,
    })));
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

// ----- helpers of the rule-by-rule specification tests (rules_*.rs) -----

/// A move in a compact, readable form: `5H`, `8H:S` (suit), `STAR:K`
/// (letter), `JK=2H` (a 757 joker standing for 2H), `JK=8C:S`, a trailing
/// `!` for an announcement, `draw`, `pass`, `challenge 2`.
pub fn show(m: &Move) -> String {
    match m {
        Move::Play {
            card,
            suit,
            letter,
            as_card,
            announce,
        } => {
            let mut s = card.to_string();
            if let Some(a) = as_card {
                s += &format!("={a}");
            }
            if let Some(su) = suit {
                s += &format!(":{su}");
            }
            if let Some(l) = letter {
                s += &format!(":{l}");
            }
            if *announce {
                s.push('!');
            }
            s
        }
        Move::Draw {} => "draw".into(),
        Move::Pass {} => "pass".into(),
        Move::Challenge { seat } => format!("challenge {seat}"),
    }
}

/// `legal_moves(seat)`, each in the compact form of [`show`].
pub fn legal(g: &Game, seat: Seat) -> Vec<String> {
    g.legal_moves(seat).iter().map(show).collect()
}

/// The `card_played` event of a play move.
pub fn played(seat: Seat, mv: &Move) -> Event {
    match mv.clone() {
        Move::Play {
            card,
            suit,
            letter,
            as_card,
            announce,
        } => Event::CardPlayed(domain::CardPlayed {
            seat,
            card,
            suit,
            letter,
            as_card,
            announce,
        }),
        m => panic!("{m:?} is not a play"),
    }
}

pub fn turn(seat: Seat, pending: domain::Pending, frozen: bool) -> Event {
    Event::TurnStarted {
        seat,
        pending,
        frozen,
    }
}

/// An ordinary turn start: nothing pending, not frozen.
pub fn turn_to(seat: Seat) -> Event {
    turn(seat, domain::Pending::None, false)
}

pub fn drew(seat: Seat, codes: &str, reason: domain::DrawReason) -> Event {
    Event::CardsDrawn {
        seat,
        cards: cards(codes),
        reason,
    }
}

pub fn skipped(seat: Seat, reason: domain::SkipReason) -> Event {
    Event::TurnSkipped { seat, reason }
}

/// The whole deck of a table, `front` first (in that order), then the rest
/// in canonical order.
pub fn stacked_deck(rules: &Rules, seats: usize, front: &[Card]) -> Vec<Card> {
    let mut rest = domain::deck::full_deck(rules.deck, rules.decks.count(seats));
    for c in front {
        let i = rest
            .iter()
            .position(|x| x == c)
            .unwrap_or_else(|| panic!("{c} is not (or no longer) in the deck"));
        rest.remove(i);
    }
    front.iter().copied().chain(rest).collect()
}

/// Starts round 1 with `Command::StartWith`: the cards are dealt one at a
/// time from the seat after the dealer, so the deck is stacked to give
/// `hands[s]` to seat s, then `starter`, then `next` (the top of the stock
/// first). Returns the game and the events of the start.
#[allow(clippy::needless_range_loop)] // card i of every hand, in deal order
pub fn start_with(
    rules: Rules,
    dealer: Seat,
    hands: &[&str],
    starter: &str,
    next: &str,
) -> (Game, Vec<Event>) {
    let n = hands.len();
    let hands: Vec<Vec<Card>> = hands.iter().map(|h| cards(h)).collect();
    let per = hands[0].len();
    let mut front = Vec::new();
    for i in 0..per {
        for k in 1..=n {
            front.push(hands[(dealer + k) % n][i]);
        }
    }
    front.push(card(starter));
    front.extend(cards(next));
    let deck = stacked_deck(&rules, n, &front);
    let mut g = Game::new(rules, n).unwrap();
    let mut out = Vec::new();
    g.execute(&Command::StartWith { dealer, deck }, &mut rng(7), &mut out)
        .unwrap();
    (g, out)
}
