//! docs/RULES.md §4, the letter deck of S3 (Amérix): the circular ±3 rule, vowels
//! on vowels, the étoile (wild_letter), the pétard (firecracker, D20, D30),
//! X (reverse, two players: plays again) and the points.

use crate::support::*;
use domain::{Direction, DrawReason, Event, RuleError, SkipReason, Target};

fn letters(hand0: &str, starter: &str) -> domain::Game {
    game(
        preset("amerix"),
        Deal {
            dealer: 2,
            hands: &[hand0, "B C D", "F G H"],
            starter,
            stock: "S T R N",
        },
    )
}

fn illegal(e: RuleError) {
    assert!(matches!(e, RuleError::Illegal { .. }), "{e:?}");
}

fn letter(code: &str) -> Target {
    Target::Letter(code.parse().unwrap())
}

/// §4; S3 l.37–47: "Sur une consonne, par exemple un X : […] U, V, ou W […]
/// Y, Z, ou A. Oui : YZAB..." — B (four after) is not.
#[test]
fn s3_on_x_the_three_letters_before_and_after_circularly() {
    let mut g = letters("U V W Y Z A B T", "X");
    assert_eq!(legal(&g, 0), ["U", "V", "W", "Y", "Z", "A"]);
    illegal(refused(&mut g, 0, play("B")));
    illegal(refused(&mut g, 0, play("T")));
}

/// §4; S3 l.49: "Sur une voyelle, en plus des 3 lettres précédentes ou
/// suivantes, […] on peut poser une voyelle : A, E, I, O, U, Y."
#[test]
fn s3_on_a_vowel_any_vowel_as_well() {
    let mut g = letters("E I O U Y X Z B D M", "A");
    assert_eq!(legal(&g, 0), ["E", "I", "O", "U", "Y", "X", "Z", "B", "D"]);
    illegal(refused(&mut g, 0, play("M")));
}

/// §4: Y counts as a vowel both ways (S3 l.49 lists it).
#[test]
fn s3_y_is_a_vowel() {
    let g = letters("E K M", "Y");
    assert_eq!(legal(&g, 0), ["E"]);
}

/// §4 edge: the vowel rule is for a vowel on top only; on M, A is too far.
#[test]
fn s3_on_a_consonant_a_vowel_needs_the_distance_rule() {
    let mut g = letters("A O P Q", "M");
    assert_eq!(legal(&g, 0), ["O", "P"]);
    illegal(refused(&mut g, 0, play("A")));
    illegal(refused(&mut g, 0, play("Q")));
}

/// §4, D29; S3 l.53: "étoile : Jouée sur n'importe quelle carte, celui qui la
/// pose dit la lettre qu'elle représente."
#[test]
fn s3_a_star_goes_on_anything_and_names_a_letter() {
    let mut g = letters("STAR Q R", "M");
    let moves = legal(&g, 0);
    assert_eq!(moves.len(), 26, "{moves:?}");
    assert_eq!(moves[0], "STAR:A");
    let e = refused(&mut g, 0, play("STAR"));
    assert!(matches!(e, RuleError::BadChoice { .. }), "{e:?}");
    let mv = play_letter("STAR", "E");
    assert_eq!(ok(&mut g, 0, mv.clone()), vec![played(0, &mv), turn_to(1)]);
    // On the E it stands for: B, C and D are within three letters.
    assert_eq!(legal(&g, 1), ["B", "C", "D"]);
}

/// §4 × vowel rule: a star standing for a vowel lets any vowel follow.
#[test]
fn s3_a_star_named_a_vowel_accepts_any_vowel() {
    let mut g = game(
        preset("amerix"),
        Deal {
            dealer: 2,
            hands: &["STAR Q R", "U K M", "F G H"],
            starter: "M",
            stock: "S T",
        },
    );
    ok(&mut g, 0, play_letter("STAR", "A"));
    assert_eq!(legal(&g, 1), ["U"]);
}

/// §4, D20; S3 l.55: "pétard : Joué sur n'importe quelle carte, oblige le
/// suivant à piocher 2 cartes et passer son tour. Le jeu continue sur la
/// carte précédant le pétard."
#[test]
fn d20_a_petard_makes_the_next_draw_two_and_play_goes_on_beneath() {
    let mut g = game(
        preset("amerix"),
        Deal {
            dealer: 2,
            hands: &["BANG Q R", "B C D", "N A B"],
            starter: "M",
            stock: "S T R",
        },
    );
    let mv = play("BANG");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![
            played(0, &mv),
            drew(1, "S T", DrawReason::Penalty),
            skipped(1, SkipReason::Penalty),
            turn_to(2),
        ]
    );
    assert_eq!(g.round().unwrap().target, letter("M"));
    assert_eq!(legal(&g, 2), ["N"]);
}

/// D20: "the letter a star stands for" stays the one to match under a pétard.
#[test]
fn d20_a_petard_on_a_star_keeps_the_named_letter() {
    let mut g = game(
        preset("amerix"),
        Deal {
            dealer: 2,
            hands: &["STAR Q R", "BANG F G", "C Z N"],
            starter: "M",
            stock: "S T R",
        },
    );
    ok(&mut g, 0, play_letter("STAR", "C"));
    ok(&mut g, 1, play("BANG"));
    assert_eq!(current(&g), Some(0));
    assert_eq!(g.round().unwrap().target, letter("C"));
}

/// D20 edge: "the nearest non-pétard card beneath it": two pétards in a row.
#[test]
fn d20_a_petard_on_a_petard_is_transparent_too() {
    let mut g = game(
        preset("amerix"),
        Deal {
            dealer: 2,
            hands: &["BANG Q R", "L F G", "BANG N K"],
            starter: "M",
            stock: "S T R E",
        },
    );
    ok(&mut g, 0, play("BANG"));
    assert_eq!(current(&g), Some(2));
    let mv = play("BANG");
    assert_eq!(
        ok(&mut g, 2, mv.clone()),
        vec![
            played(2, &mv),
            drew(0, "R E", DrawReason::Penalty),
            skipped(0, SkipReason::Penalty),
            turn_to(1),
        ]
    );
    assert_eq!(g.round().unwrap().target, letter("M"));
    assert_eq!(legal(&g, 1), ["L"]);
}

/// D30; S3 l.31 "Dès que la dernière carte est piochée, la défausse est
/// retournée pour faire une nouvelle pioche": recycling keeps the pétard on
/// top and the card beneath it, so the card to match is never lost.
#[test]
fn d30_recycling_keeps_the_petard_and_the_card_beneath() {
    let mut g = game(
        preset("amerix"),
        Deal {
            dealer: 0,
            hands: &["BANG K L", "E F G"],
            starter: "D",
            stock: "",
        },
    );
    ok(&mut g, 1, play("E"));
    let mv = play("BANG");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![
            played(0, &mv),
            Event::StockReshuffled { stock: cards("D") },
            drew(1, "D", DrawReason::Penalty),
            skipped(1, SkipReason::Penalty),
            turn_to(0),
        ]
    );
    let r = g.round().unwrap();
    assert_eq!(r.discard, cards("E BANG"));
    assert_eq!(r.target, letter("E"));
}

/// §4; S3 l.57: "lettre X : Change le sens de jeu."
#[test]
fn s3_x_reverses_the_direction() {
    let mut g = letters("X Y Z", "W");
    let mv = play("X");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![
            played(0, &mv),
            Event::DirectionChanged {
                direction: Direction::Counterclockwise
            },
            turn_to(2),
        ]
    );
}

/// §3.3 `two_player_reverse`; S3 l.59: "À 2 joueurs, celui qui pose un X
/// rejoue."
#[test]
fn s3_x_with_two_players_plays_again() {
    let mut g = game(
        preset("amerix"),
        Deal {
            dealer: 1,
            hands: &["X Y Z", "B C D"],
            starter: "W",
            stock: "S T",
        },
    );
    let mv = play("X");
    assert_eq!(ok(&mut g, 0, mv.clone()), vec![played(0, &mv), turn_to(0)]);
}

/// §4; S3 l.61–62: "Y 70 W X Z 50 voyelle sauf Y 20 pétard 10 étoile 10
/// autre 5".
#[test]
fn s3_letter_points() {
    let g = letters("B", "M");
    for (code, points) in [
        ("Y", 70),
        ("W", 50),
        ("X", 50),
        ("Z", 50),
        ("A", 20),
        ("E", 20),
        ("I", 20),
        ("O", 20),
        ("U", 20),
        ("BANG", 10),
        ("STAR", 10),
        ("B", 5),
        ("M", 5),
        ("V", 5),
    ] {
        assert_eq!(g.points(card(code)), points, "{code}");
    }
}

/// D19: "the default is the one in `letters100.md`": E 12, A 8, I 7, R S T 6,
/// L N O U 5, D M 3, B C F G H P V 2, J K Q W X Y Z 1, 4 étoiles, 4 pétards.
#[test]
fn d19_the_letter_deck_is_the_letters100_table() {
    let deck = domain::deck::full_deck(domain::DeckKind::Letters100, 1);
    assert_eq!(deck.len(), 100);
    let table = [
        ("E", 12),
        ("A", 8),
        ("I", 7),
        ("R S T", 6),
        ("L N O U", 5),
        ("D M", 3),
        ("B C F G H P V", 2),
        ("J K Q W X Y Z", 1),
        ("STAR BANG", 4),
    ];
    for (codes, count) in table {
        for c in cards(codes) {
            assert_eq!(deck.iter().filter(|d| **d == c).count(), count, "{c}");
        }
    }
}

/// D20 (reading): a star turned onto a pétard starter names nothing, like a
/// star starter: the second player may play any card.
#[test]
fn d20_a_star_turned_onto_a_petard_starter_names_nothing() {
    let (g, events) = start_with(
        preset("amerix"),
        2,
        &["B C D F G H J", "B C D F G H K", "L L L M M N N"],
        "BANG",
        "E E STAR",
    );
    assert_eq!(events.last(), Some(&turn_to(1)));
    assert_eq!(g.round().unwrap().target, Target::Any);
    assert_eq!(legal(&g, 1), ["B", "C", "D", "F", "G", "H", "K"]);
}
