//! Arbitrary commands (any seat, any card code, any choice) never make the
//! engine panic: each is accepted or refused with a reason, and a refused
//! one changes nothing. Checked with proptest over every preset.

use crate::support::rng;
use domain::{Card, Command, Game, Letter, Move, Preset, Status, Suit};
use proptest::prelude::*;

fn any_card() -> impl Strategy<Value = Card> {
    prop_oneof![
        (0usize..13, 0usize..4).prop_map(|(r, s)| Card::French(domain::Rank::ALL[r], Suit::ALL[s])),
        Just(Card::Joker),
        (0u8..26).prop_map(|l| Card::Letter(Letter::new(l).unwrap())),
        Just(Card::Star),
        Just(Card::Bang),
    ]
}

fn any_move() -> impl Strategy<Value = Move> {
    prop_oneof![
        Just(Move::Draw {}),
        Just(Move::Pass {}),
        (0usize..24).prop_map(|seat| Move::Challenge { seat }),
        (
            any_card(),
            proptest::option::of(0usize..4),
            proptest::option::of(0u8..26),
            proptest::option::of(any_card()),
            any::<bool>()
        )
            .prop_map(|(card, suit, letter, as_card, announce)| Move::Play {
                card,
                suit: suit.map(|s| Suit::ALL[s]),
                letter: letter.and_then(Letter::new),
                as_card,
                announce,
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_commands_are_accepted_or_refused_never_a_panic(
        preset in 0usize..5,
        seats in 2usize..6,
        seed in any::<u64>(),
        commands in proptest::collection::vec((0usize..24, any_move(), any::<bool>()), 1..120),
    ) {
        let rules = Preset::ALL[preset].rules();
        let seats = seats.clamp(rules.players.min, rules.players.max);
        let mut g = Game::new(rules, seats).unwrap();
        let mut rng = rng(seed);
        // Moves before the start are refused.
        let before = g.clone();
        let mut out = Vec::new();
        let early = Command::Move { seat: 0, mv: Move::Draw {} };
        prop_assert!(g.execute(&early, &mut rng, &mut out).is_err());
        prop_assert_eq!(&g, &before);
        g.execute(&Command::Start, &mut rng, &mut out).unwrap();
        prop_assert!(g.execute(&Command::Start, &mut rng, &mut out).is_err());
        for (seat, mv, on_turn) in commands {
            if g.status() != Status::Playing {
                break;
            }
            // Half the time, aim the arbitrary move at the seat on turn.
            let seat = if on_turn { g.round().unwrap().current.unwrap_or(seat) } else { seat };
            let before = g.clone();
            let listed = seat < seats && g.legal_moves(seat).contains(&mv);
            let mut out = Vec::new();
            match g.execute(&Command::Move { seat, mv: mv.clone() }, &mut rng, &mut out) {
                Ok(()) => {
                    prop_assert!(listed, "accepted but not listed: seat {} {:?}", seat, mv);
                    prop_assert!(!out.is_empty());
                }
                Err(e) => {
                    prop_assert!(!listed, "listed but refused: seat {} {:?}: {}", seat, &mv, e.to_string());
                    prop_assert!(!e.to_string().is_empty());
                    prop_assert!(!e.code().is_empty());
                    prop_assert!(out.is_empty());
                    prop_assert_eq!(&g, &before);
                }
            }
            if let Some(r) = g.round() {
                prop_assert_eq!(r.card_count(), r.size);
            }
        }
    }
}
