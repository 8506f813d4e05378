//! Property tests: thousands of seeded random games, every preset, at 2, 3
//! and the maximum number of players, each played to the end of the game.
//! At every step: the invariants of docs/RULES.md §8; that every move listed in
//! `legal_moves` is accepted and random moves outside it are refused with no
//! change; that `decide` and `execute` agree; and that refolding the events
//! rebuilds the identical game.
//!
//! `HUIT_GAMES` sets the number of games per configuration (default 340, so
//! that every preset plays more than a thousand games). The cheap invariant
//! (card count) is checked after every move; views, redaction, every listed
//! move and random unlisted moves after one move in eight.

use crate::support::*;
use domain::{Card, Command, Event, Game, Move, Preset, Rules, Seat, Seen, Status, TableEvent};
use rand::Rng;
use serde_json::json;

fn games_per_config() -> u64 {
    std::env::var("HUIT_GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(340)
}

/// A move drawn at random from the whole space of moves, legal or not.
fn arbitrary_move(g: &Game, rng: &mut impl Rng) -> Move {
    let deck = g.rules().deck.cards();
    let any_card = |rng: &mut dyn rand::RngCore| deck[rng.gen_range(0..deck.len())];
    match rng.gen_range(0..10) {
        0 => Move::Draw {},
        1 => Move::Pass {},
        2 => Move::Challenge {
            seat: rng.gen_range(0..g.seats() + 2),
        },
        _ => {
            // Prefer cards in a hand so that choices are exercised.
            let card = match g.round() {
                Some(r) if rng.gen_bool(0.7) => {
                    let h = &r.hands[rng.gen_range(0..g.seats())];
                    if h.is_empty() {
                        any_card(rng)
                    } else {
                        h[rng.gen_range(0..h.len())]
                    }
                }
                _ => any_card(rng),
            };
            Move::Play {
                card,
                suit: rng
                    .gen_bool(0.5)
                    .then(|| domain::Suit::ALL[rng.gen_range(0..4)]),
                letter: rng
                    .gen_bool(0.3)
                    .then(|| domain::Letter::new(rng.gen_range(0..26)).unwrap()),
                as_card: rng.gen_bool(0.3).then(|| any_card(rng)),
                announce: rng.gen_bool(0.3),
            }
        }
    }
}

/// The cards of `e` that `reader` may know (own hand and the starter of a
/// deal, own draws, …) and whether anything in it is hidden from them,
/// stated here apart from the engine's `seen_by`.
fn knowledge(e: &Event, reader: Option<Seat>) -> (Vec<Card>, bool) {
    match e {
        Event::RoundStarted(rs) => {
            let mut known = reader
                .and_then(|s| rs.hands.get(&s).cloned())
                .unwrap_or_default();
            known.push(rs.starter);
            (known, true)
        }
        Event::CardsDrawn { seat, .. } if reader != Some(*seat) => (Vec::new(), true),
        Event::StockReshuffled { .. } => (Vec::new(), true),
        Event::TurnStarted {
            seat,
            pending: domain::Pending::Drawn { .. },
            ..
        } if reader != Some(*seat) => (Vec::new(), true),
        _ => (Vec::new(), false),
    }
}

/// Every string of `v` that reads as a card code.
fn cards_in(v: &serde_json::Value, out: &mut Vec<Card>) {
    match v {
        serde_json::Value::String(s) => out.extend(s.parse::<Card>().ok()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| cards_in(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| cards_in(x, out)),
        _ => {}
    }
}

/// Hidden cards stay hidden: for every seat and a spectator, an event is
/// shown whole (salt included, so its hash can be recomputed) exactly when
/// nothing in it is hidden from them; otherwise without the salt and with
/// no card beyond what they may know.
fn check_redaction(events: &[Event], seats: usize) {
    let readers = (0..seats).map(Some).chain([None]);
    for e in events {
        for reader in readers.clone() {
            let (known, hides) = knowledge(e, reader);
            match TableEvent::Game(e.clone()).seen_by(reader) {
                Seen::Whole => assert!(!hides, "{e:?} shown whole to {reader:?}"),
                Seen::Part(data) => {
                    assert!(hides, "{e:?} redacted for {reader:?} with nothing to hide");
                    assert!(data.get("salt").is_none(), "a salt sent with {data}");
                    let mut sent = Vec::new();
                    cards_in(&data, &mut sent);
                    let mut left = known.clone();
                    for card in sent {
                        let at = left.iter().position(|c| *c == card).unwrap_or_else(|| {
                            panic!("{card} sent to {reader:?} in {data}, known {known:?}")
                        });
                        left.swap_remove(at);
                    }
                }
            }
        }
    }
}

fn check_step(g: &Game, events: &[Event], rng: &mut (impl Rng + Clone), thorough: bool) {
    let Some(r) = g.round() else { return };
    // §8: the number of cards never changes within a round.
    assert_eq!(r.card_count(), r.size, "card count changed");
    if !thorough {
        return;
    }
    check_redaction(events, g.seats());
    for seat in 0..g.seats() {
        let v = g.view(Some(seat));
        assert_eq!(v.hand, r.hands[seat], "a view shows its own hand only");
        for p in &v.players {
            assert_eq!(p.hand_size, r.hands[p.seat].len());
        }
        if v.pending.card.is_some() {
            assert_eq!(
                Some(seat),
                r.current,
                "a drawn card is shown to its drawer only"
            );
        }
        // Every listed move is accepted.
        for mv in &v.legal_moves {
            let cmd = Command::Move {
                seat,
                mv: mv.clone(),
            };
            if let Err(e) = g.decide(&cmd, &mut rng.clone()) {
                panic!("listed move {mv:?} of seat {seat} refused: {e}");
            }
        }
        // Random moves that are not listed are refused and change nothing.
        for _ in 0..4 {
            let mv = arbitrary_move(g, rng);
            if v.legal_moves.contains(&mv) {
                continue;
            }
            let mut copy = g.clone();
            let mut out = Vec::new();
            let cmd = Command::Move {
                seat,
                mv: mv.clone(),
            };
            assert!(
                copy.execute(&cmd, &mut rng.clone(), &mut out).is_err(),
                "unlisted move {mv:?} of seat {seat} accepted"
            );
            assert!(out.is_empty());
            assert_eq!(copy, *g, "a refused move changed the game");
        }
    }
}

/// Plays one seeded game to its end and returns the number of moves.
fn play_game(rules: &Rules, seats: usize, seed: u64, check_storage: bool) -> usize {
    let mut rng = rng(seed);
    let mut g = Game::new(rules.clone(), seats).unwrap();
    let mut log: Vec<Event> = Vec::new();
    g.execute(&Command::Start, &mut rng, &mut log).unwrap();
    let mut moves = 0;
    let mut rounds_seen;
    while g.status() == Status::Playing {
        let (seat, mv) = random_move(&g, &mut rng)
            .unwrap_or_else(|| panic!("seed {seed}: the seat on turn has no legal move"));
        let cmd = Command::Move { seat, mv };
        let thorough = moves % 8 == 0;
        let mut out = Vec::new();
        if thorough {
            let decided = g.decide(&cmd, &mut rng.clone()).unwrap();
            g.execute(&cmd, &mut rng, &mut out).unwrap();
            assert_eq!(decided, out, "decide and execute disagree");
        } else {
            g.execute(&cmd, &mut rng, &mut out).unwrap();
        }
        check_step(&g, &out, &mut rng, thorough);
        log.extend(out);
        moves += 1;
        rounds_seen = g.history().len() + 1;
        assert!(
            moves < 400_000,
            "seed {seed}: game not over after {moves} moves ({rounds_seen} rounds)"
        );
    }
    // §8: the state is a pure function of the events.
    let refolded = Game::from_events(rules.clone(), seats, &log).unwrap();
    assert_eq!(refolded, g, "refolding the log gives another game");
    // The log survives storage: every event read back from its stored
    // `(type, data text)` is the event written (every `Pending`, every card);
    // checked on one game in eight, which is plenty and keeps the test fast.
    for e in log.iter().filter(|_| check_storage) {
        let stored = TableEvent::Game(e.clone());
        let data = stored.data().to_string();
        let reread = TableEvent::read(stored.kind(), domain::EVENT_VERSION, &data)
            .unwrap_or_else(|err| panic!("seed {seed}: {} {data}: {err}", stored.kind()));
        assert_eq!(reread, stored, "seed {seed}: {data}");
    }
    // Round scores are a pure function of the final hands and the rules.
    for re in g.history() {
        let hands: Vec<Vec<Card>> = re.hands.values().cloned().collect();
        let book = rules.compile().unwrap();
        let pts = domain::score::round_points(rules, &book, &hands, &re.out_order);
        assert_eq!(pts, re.points.values().copied().collect::<Vec<_>>());
    }
    assert!(g.result().is_some());
    moves
}

fn run(rules: Rules, label: &str) {
    let n = games_per_config();
    let max = rules.players.max;
    let mut counts: Vec<Seat> = vec![2, 3, max];
    counts.dedup();
    for seats in counts {
        let mut total = 0;
        for seed in 0..n {
            total += play_game(&rules, seats, seed * 1000 + seats as u64, seed % 8 == 0);
        }
        eprintln!("{label}: {n} games at {seats} players, {total} moves");
    }
}

#[test]
fn classique_games_end_and_keep_the_invariants() {
    run(preset("classique"), "classique");
}

#[test]
fn classique_with_every_option() {
    run(
        with_options(
            "classique",
            json!({"jokers": true, "tens_replay": true, "sevens_skip": true, "target": 200}),
        ),
        "classique+options",
    );
}

#[test]
fn moderne_games_end_and_keep_the_invariants() {
    run(preset("moderne"), "moderne");
}

#[test]
fn moderne_with_stacking_and_no_special_finish() {
    run(
        with_options(
            "moderne",
            json!({"stacking": "draw_cards", "special_finish": false, "two_player_ace": "none", "target": 250}),
        ),
        "moderne+stacking",
    );
    run(
        with_options("moderne", json!({"joker_counter": true, "target": 250})),
        "moderne+joker_counter",
    );
}

#[test]
fn base_games_end_and_keep_the_invariants() {
    run(preset("base"), "base");
}

#[test]
fn base_positive_with_effects_and_a_small_deck() {
    run(
        with_options(
            "base",
            json!({"scoring": "positive", "effects": {"8": "wild_suit", "2": {"draw_skip": 2}, "J": "skip", "Q": "reverse", "K": "pass_across", "A": {"attack_chain": 2}, "10": {"must_replay": 2}, "9": "may_replay", "7": "freeze"}}),
        ),
        "base+positive",
    );
    run(
        with_options(
            "base",
            json!({"deck": "french32", "effects": {"8": "wild_suit", "7": {"draw_skip": 2}, "A": "freeze"}}),
        ),
        "base+french32",
    );
}

#[test]
fn amerix_games_end_and_keep_the_invariants() {
    run(preset("amerix"), "amerix");
}

#[test]
fn the_757_games_end_and_keep_the_invariants() {
    run(Preset::Sept757.rules(), "757");
}
