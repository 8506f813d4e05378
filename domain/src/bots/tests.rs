//! Every level answers every position with one of its legal moves; `basic`
//! keeps the promises of its documentation.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::engine::Command;
use crate::event::Event;
use crate::game::{Game, Status};
use crate::rules::{Effect, Preset};
use crate::view::SeatView;

/// Plays a seeded game of `preset` with `level` at every seat, checking each
/// decision with `check(view, move)`; the number of decisions.
fn play(preset: Preset, level: Level, seed: u64, mut check: impl FnMut(&SeatView, &Move)) -> usize {
    let rules = preset.rules();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut game = Game::new(rules, 3).expect("three players");
    let mut events: Vec<Event> = Vec::new();
    game.execute(&Command::Start, &mut rng, &mut events)
        .expect("a new game starts");
    let mut decisions = 0;
    while game.status() == Status::Playing && decisions < 20_000 {
        let seat = game
            .round()
            .and_then(|r| r.current)
            .expect("a seat on turn");
        let sight = game.sight(seat).expect("a running round");
        let view = &sight.view;
        let mv = level
            .decide(&sight, Playouts::FULL, &mut rng)
            .expect("a move on turn");
        assert!(view.legal_moves.contains(&mv), "{mv:?} is not legal");
        check(view, &mv);
        events.clear();
        game.execute(&Command::Move { seat, mv }, &mut rng, &mut events)
            .expect("a legal move is accepted");
        decisions += 1;
    }
    assert_eq!(game.status(), Status::Finished, "{preset:?} {level} {seed}");
    decisions
}

#[test]
fn d42_every_level_plays_legal_moves_to_the_end_of_games_of_every_preset() {
    for preset in Preset::ALL {
        // The strong level searches: its own test takes positions instead.
        for level in [Level::Random, Level::Basic] {
            for seed in 0..3 {
                let decisions = play(preset, level, seed, |_, _| {});
                assert!(decisions > 20, "{preset:?} {level}: {decisions} decisions");
            }
        }
    }
}

#[test]
fn d42_the_basic_bot_announces_challenges_and_keeps_its_wild_cards() {
    let (mut announced, mut kept) = (0, 0);
    for preset in Preset::ALL {
        let book = preset.rules().compile().expect("preset rules compile");
        for seed in 0..5 {
            play(preset, Level::Basic, seed, |view, mv| {
                // A challenge whenever one is open.
                if view
                    .legal_moves
                    .iter()
                    .any(|m| matches!(m, Move::Challenge { .. }))
                {
                    assert!(matches!(mv, Move::Challenge { .. }), "{mv:?}");
                }
                // A play that may announce does.
                if let Move::Play { card, announce, .. } = mv {
                    let could = view.legal_moves.iter().any(
                        |m| matches!(m, Move::Play { card: c, announce: true, .. } if c == card),
                    );
                    if could {
                        assert!(*announce, "{mv:?} could announce");
                        announced += 1;
                    }
                    // A wild card only when nothing else plays, or at the end.
                    let wild = |c: &crate::card::Card| {
                        matches!(
                            book.effect(*c),
                            Some(Effect::WildSuit | Effect::WildLetter | Effect::Substitute)
                        )
                    };
                    let other_play = view
                        .legal_moves
                        .iter()
                        .any(|m| matches!(m, Move::Play { card: c, .. } if !wild(c)));
                    if other_play && view.hand.len() > 2 {
                        assert!(!wild(card), "{mv:?} spends a wild card");
                        kept += 1;
                    }
                }
                // Plays rather than draws.
                if matches!(mv, Move::Draw {}) {
                    assert!(
                        !view
                            .legal_moves
                            .iter()
                            .any(|m| matches!(m, Move::Play { .. })),
                        "drew with a play in hand"
                    );
                }
            });
        }
    }
    assert!(
        announced > 0 && kept > 0,
        "announced {announced}, kept {kept}"
    );
}

#[test]
fn d42_the_random_bot_is_a_function_of_its_seed() {
    let moves = |seed| {
        let mut all = Vec::new();
        play(Preset::Classique, Level::Random, seed, |_, mv| {
            all.push(mv.clone())
        });
        all
    };
    assert_eq!(moves(7), moves(7));
    assert_ne!(moves(7), moves(8));
}

#[test]
fn d42_levels_are_named_and_versioned() {
    for level in Level::ALL {
        assert_eq!(level.id().parse::<Level>(), Ok(level));
        assert_eq!(level.tag(), format!("{}@{}", level.id(), level.version()));
    }
    assert!("strongest".parse::<Level>().is_err());
}

#[test]
fn d42_a_sight_holds_no_card_the_seat_may_not_know_and_deals_games_it_cannot_tell_apart() {
    let rules = Preset::Moderne.rules();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut game = Game::new(rules, 4).expect("four players");
    let mut events: Vec<Event> = Vec::new();
    game.execute(&Command::Start, &mut rng, &mut events)
        .unwrap();
    let seat = game.round().unwrap().current.unwrap();
    let sight = game.sight(seat).unwrap();
    assert_eq!(sight.view, game.view(Some(seat)));
    let real = game.round().unwrap();
    for _ in 0..5 {
        let dealt = sight.deal(&mut rng);
        let r = dealt.round().unwrap();
        // The seat's own hand, the pile and the public state are the real ones.
        assert_eq!(r.hands[seat], real.hands[seat]);
        assert_eq!(r.discard, real.discard);
        assert_eq!(r.current, real.current);
        // The unseen cards, dealt again: the same sizes, the same cards.
        let mut unseen_real: Vec<_> = real.stock.clone();
        let mut unseen_dealt: Vec<_> = r.stock.clone();
        for s in (0..4).filter(|s| *s != seat) {
            assert_eq!(r.hands[s].len(), real.hands[s].len());
            unseen_real.extend(&real.hands[s]);
            unseen_dealt.extend(&r.hands[s]);
        }
        assert_eq!(r.stock.len(), real.stock.len());
        unseen_real.sort_unstable();
        unseen_dealt.sort_unstable();
        assert_eq!(unseen_real, unseen_dealt);
        // And the game goes on from there.
        assert_eq!(dealt.legal_moves(seat), game.legal_moves(seat));
    }
}

#[test]
fn d42_the_strong_bot_chooses_among_its_legal_moves() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for preset in Preset::ALL {
        let mut game = Game::new(preset.rules(), 3).expect("three players");
        let mut events: Vec<Event> = Vec::new();
        game.execute(&Command::Start, &mut rng, &mut events)
            .unwrap();
        for _ in 0..12 {
            if game.status() != Status::Playing {
                break;
            }
            let seat = game.round().and_then(|r| r.current).unwrap();
            let sight = game.sight(seat).unwrap();
            let mv = Level::Strong
                .decide(&sight, Playouts::FULL, &mut rng)
                .unwrap();
            assert!(sight.view.legal_moves.contains(&mv), "{preset:?}: {mv:?}");
            events.clear();
            game.execute(&Command::Move { seat, mv }, &mut rng, &mut events)
                .unwrap();
        }
    }
}

/// D42: a bot's choice is a function of what its seat has seen and its
/// seed: two games that differ only in cards the seat cannot see (the other
/// hands, the stock) give every level the same choice.
#[test]
fn d42_a_bots_choice_depends_only_on_the_seats_view_and_seed() {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    for preset in Preset::ALL {
        let mut game = Game::new(preset.rules(), 4).expect("four players");
        let mut events: Vec<Event> = Vec::new();
        game.execute(&Command::Start, &mut rng, &mut events)
            .unwrap();
        for _ in 0..6 {
            if game.status() != Status::Playing {
                break;
            }
            let seat = game.round().and_then(|r| r.current).unwrap();
            // Another game the seat cannot tell from this one.
            let twin = game.sight(seat).unwrap().deal(&mut rng);
            assert_eq!(twin.view(Some(seat)), game.view(Some(seat)));
            for level in Level::ALL {
                let choose = |g: &Game| {
                    let sight = g.sight(seat).unwrap();
                    level.decide(&sight, Playouts::FULL, &mut ChaCha8Rng::seed_from_u64(77))
                };
                assert_eq!(choose(&game), choose(&twin), "{preset:?} {level}");
            }
            let sight = game.sight(seat).unwrap();
            let mv = Level::Basic
                .decide(&sight, Playouts::FULL, &mut rng)
                .unwrap();
            events.clear();
            game.execute(&Command::Move { seat, mv }, &mut rng, &mut events)
                .unwrap();
        }
    }
}
