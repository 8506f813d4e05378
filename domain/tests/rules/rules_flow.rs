//! docs/RULES.md §2, the flow every preset shares: deal sizes per preset and
//! player count, decks per player count, the starter (D9, D10, D20), first
//! seat and dealer rotation (D22, D23), the legal card (§2.4), recycling the
//! stock (§2.5, D24), the draw rules (D2, D15, D27, S2 draw_ends_turn).

use crate::support::*;
use domain::{
    Card, Command, Direction, DrawReason, Event, Game, Move, Pending, RuleError, SkipReason, Target,
};

fn round_started(events: &[Event]) -> &domain::RoundStarted {
    events
        .iter()
        .find_map(|e| match e {
            Event::RoundStarted(rs) => Some(rs),
            _ => None,
        })
        .expect("a round_started event")
}

fn start(id: &str, seats: usize, seed: u64) -> (Game, Vec<Event>) {
    let mut g = Game::new(preset(id), seats).unwrap();
    let mut out = Vec::new();
    g.execute(&Command::Start, &mut rng(seed), &mut out)
        .unwrap();
    (g, out)
}

/// Hand sizes, stock size and deck copies of a dealt round.
fn dealt(id: &str, seats: usize) -> (Vec<usize>, usize, u32) {
    let (_, events) = start(id, seats, 1);
    let rs = round_started(&events);
    let sizes = rs.hands.values().map(Vec::len).collect();
    (sizes, rs.stock.len(), rs.deck.copies)
}

// ----- §2.1 deal and decks -------------------------------------------------

/// §3.1 `deal`: 7 in S0 (l.13 "distribue 7 cartes à chaque joueur"), S1
/// (l.26) and S3 (l.21 "chacun en reçoit 7"); 5 in S4 (l.24).
#[test]
fn deal_fixed_sizes_per_preset() {
    assert_eq!(dealt("classique", 4), (vec![7; 4], 52 - 28 - 1, 1));
    assert_eq!(dealt("moderne", 5), (vec![7; 5], 54 - 35 - 1, 1));
    assert_eq!(dealt("amerix", 8), (vec![7; 8], 100 - 56 - 1, 1));
    assert_eq!(dealt("757", 6), (vec![5; 6], 54 - 30 - 1, 1));
}

/// S2 l.21–24: "Pour deux joueurs : 10 cartes chacun / trois joueurs : 8 /
/// quatre joueurs ou plus : 6".
#[test]
fn s2_deal_ten_eight_six_by_player_count() {
    assert_eq!(dealt("base", 2), (vec![10; 2], 52 - 20 - 1, 1));
    assert_eq!(dealt("base", 3), (vec![8; 3], 52 - 24 - 1, 1));
    assert_eq!(dealt("base", 4), (vec![6; 4], 52 - 24 - 1, 1));
    assert_eq!(dealt("base", 8), (vec![6; 8], 52 - 48 - 1, 1));
}

/// S2 l.25: "maximum 8 joueurs pour un jeu de 52 cartes et 5 joueurs pour un
/// jeu de 32": five players with the 32-card deck leave a one-card stock.
#[test]
fn s2_french32_deals_six_to_five_players() {
    let mut g = Game::new(
        with_options("base", serde_json::json!({"deck": "french32"})),
        5,
    )
    .unwrap();
    let mut out = Vec::new();
    g.execute(&Command::Start, &mut rng(3), &mut out).unwrap();
    let rs = round_started(&out);
    assert_eq!(
        rs.hands.values().map(Vec::len).collect::<Vec<_>>(),
        vec![6; 5]
    );
    assert_eq!(rs.stock.len(), 1);
    assert_eq!(rs.deck.id, "french32");
}

/// §5 `decks`, S0 l.9 "un ou deux jeux de 52 cartes en fonction du nombre de
/// joueurs": 1 up to 5 players, 2 above.
#[test]
fn s0_two_decks_above_five_players() {
    assert_eq!(dealt("classique", 5).2, 1);
    assert_eq!(dealt("classique", 6), (vec![7; 6], 104 - 42 - 1, 2));
    assert_eq!(dealt("classique", 10).2, 2);
}

/// §3.1 `decks`; S4 l.18–19 "il suffit de rajouter un nombre de jeu de 54
/// cartes suffisant": ceil(players/6).
#[test]
fn s4_one_54_card_deck_per_six_players() {
    assert_eq!(dealt("757", 6).2, 1);
    assert_eq!(dealt("757", 7), (vec![5; 7], 108 - 35 - 1, 2));
    assert_eq!(dealt("757", 12).2, 2);
    assert_eq!(dealt("757", 13).2, 3);
    assert_eq!(dealt("757", 18), (vec![5; 18], 162 - 90 - 1, 3));
}

/// §8: hands + stock + starter is exactly the table's decks.
#[test]
fn deal_uses_every_card_of_the_decks_once() {
    for (id, seats) in [
        ("classique", 7),
        ("moderne", 3),
        ("base", 2),
        ("amerix", 4),
        ("757", 13),
    ] {
        let (g, events) = start(id, seats, 11);
        let rs = round_started(&events);
        let mut all: Vec<Card> = rs.hands.values().flatten().copied().collect();
        all.extend(&rs.stock);
        all.push(rs.starter);
        all.sort();
        let mut full = domain::deck::full_deck(g.rules().deck, rs.deck.copies);
        full.sort();
        assert_eq!(all, full, "{id} {seats}");
    }
}

// ----- D22, D23 dealer and first seat ----------------------------------------

/// D23; S4 l.21 "Le 1er donneur est celui qui a tiré la plus petite carte":
/// the first dealer is random, the seat after the dealer plays first.
#[test]
fn d23_first_dealer_is_random_and_the_next_seat_starts() {
    let mut dealers = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let (g, events) = start("classique", 4, seed);
        let rs = round_started(&events);
        assert_eq!(rs.first_seat, (rs.dealer + 1) % 4);
        assert_eq!(current(&g), Some(rs.first_seat));
        dealers.insert(rs.dealer);
    }
    assert_eq!(dealers.len(), 4, "every seat deals first with some seed");
}

/// D22; S3 l.29 "TOUTES les cartes sont à nouveau mélangées"; D23; S4 l.22
/// "puis il suffit que chacun donne à tour de rôle": round 2 is a full deck,
/// dealt by the next seat, and the seat after it starts.
#[test]
fn d22_d23_next_round_is_a_full_reshuffle_dealt_by_the_next_seat() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 0,
            hands: &["9C 9D", "5H", "KS"],
            starter: "4H",
            stock: "KD",
        },
    );
    let events = ok(&mut g, 1, play("5H"));
    let rs = round_started(&events);
    assert_eq!((rs.round, rs.dealer, rs.first_seat), (2, 1, 2));
    let mut all: Vec<Card> = rs.hands.values().flatten().copied().collect();
    all.extend(&rs.stock);
    all.push(rs.starter);
    all.sort();
    let mut full = domain::deck::full_deck(domain::DeckKind::French52, 1);
    full.sort();
    assert_eq!(all, full);
    assert_eq!(current(&g), Some(2));
}

// ----- starter: D9, D10, D20 ---------------------------------------------------

const PLAIN4: [&str; 4] = [
    "3C 4C 5C 7C 9C",
    "3H 4D 5D 7D 9D",
    "3S 4S 5S 7S 9S",
    "KC KD KS 9H 7H",
];

/// D9; S0 l.17 "S'il s'agit d'une carte spéciale […] le donneur la remet dans
/// le paquet et en tire une nouvelle", S1 l.30: the recorded starter has no
/// effect, the special cards went back into the stock, and the recorded deal
/// replays without a shuffle.
#[test]
fn d9_redraw_special_turns_until_a_card_without_effect() {
    let (g, events) = start_with(
        preset("classique"),
        0,
        &["3C 4C 5C 7C 9C 10C KC", "3D 4D 5D 7D 9D 10D KD"],
        "8H",
        "2C AS JD",
    );
    let rs = round_started(&events);
    assert_eq!(g.effect(rs.starter), None, "starter {}", rs.starter);
    for special in ["8H", "2C", "AS", "JD"] {
        assert!(
            rs.stock.contains(&card(special)),
            "{special} back in the stock"
        );
    }
    assert_eq!(rs.stock.len(), 52 - 14 - 1);
    assert_eq!(kinds(&events), ["round_started", "turn_started"]);
    let replayed = Game::from_events(preset("classique"), 2, &events).unwrap();
    assert_eq!(replayed, g);
}

/// D10 (2); S4 l.30, l.42: a 2 starter: the first player draws 2 and loses
/// the turn.
#[test]
fn d10_a_2_starter_makes_the_first_player_draw_two() {
    let (_, events) = start_with(preset("757"), 0, &PLAIN4, "2H", "JC JD");
    assert_eq!(
        events[1..],
        [
            drew(1, "JC JD", DrawReason::Penalty),
            skipped(1, SkipReason::Penalty),
            turn_to(2),
        ]
    );
}

/// D10 (6): the seat opposite the dealer starts.
#[test]
fn d10_a_6_starter_gives_the_turn_opposite_the_dealer() {
    let (_, events) = start_with(preset("757"), 0, &PLAIN4, "6H", "JC");
    assert_eq!(events[1..], [turn_to(2)]);
}

/// D10 (10): direction reversed, the seat before the dealer starts.
#[test]
fn d10_a_10_starter_reverses_and_the_seat_before_the_dealer_starts() {
    let (_, events) = start_with(preset("757"), 0, &PLAIN4, "10H", "JC");
    assert_eq!(
        events[1..],
        [
            Event::DirectionChanged {
                direction: Direction::Counterclockwise
            },
            turn_to(3),
        ]
    );
}

/// D10 (10) with two players: the seat before the dealer is the seat after
/// it; the direction is still reversed (a starter is no two-player play).
#[test]
fn d10_a_10_starter_with_two_players() {
    let (g, events) = start_with(
        preset("757"),
        1,
        &["3C 4C 5C 7C 9C", "3D 4D 5D 7D 9D"],
        "10H",
        "JC",
    );
    assert_eq!(
        events[1..],
        [
            Event::DirectionChanged {
                direction: Direction::Counterclockwise
            },
            turn_to(0),
        ]
    );
    assert_eq!(current(&g), Some(0));
}

/// D10 (ace): the pile starts frozen.
#[test]
fn d10_an_ace_starter_freezes() {
    let (g, events) = start_with(preset("757"), 0, &PLAIN4, "AH", "JC");
    assert_eq!(events[1..], [turn(1, Pending::None, true)]);
    assert_eq!(legal(&g, 1), ["draw"]);
}

/// D10 (8): the active suit is the 8's own suit.
#[test]
fn d10_an_8_starter_asks_for_its_own_suit() {
    let (g, events) = start_with(preset("757"), 0, &PLAIN4, "8H", "JC");
    assert_eq!(events[1..], [turn_to(1)]);
    assert_eq!(legal(&g, 1), ["3H", "draw"]);
}

/// D10 (joker): the first player may play any card.
#[test]
fn d10_a_joker_starter_lets_the_first_player_play_anything() {
    let (g, events) = start_with(preset("757"), 0, &PLAIN4, "JK", "JC");
    assert_eq!(events[1..], [turn_to(1)]);
    assert_eq!(legal(&g, 1), ["3H", "4D", "5D", "7D", "9D", "draw"]);
}

/// D10 (queen): nothing.
#[test]
fn d10_a_queen_starter_does_nothing() {
    let (_, events) = start_with(preset("757"), 0, &PLAIN4, "QH", "JC");
    assert_eq!(events[1..], [turn_to(1)]);
}

const LETTERS3: [&str; 3] = ["B C D F G H J", "B C D F G H K", "L L L M M N N"];

/// D20; S3 l.21 "Si le pétard est la première carte retournée, le premier
/// joueur pioche 2 cartes, et retourne une carte de la pioche sur le pétard
/// sans jouer": the second player starts on the turned card.
#[test]
fn d20_a_petard_starter_penalises_the_first_player_and_is_covered() {
    let (g, events) = start_with(preset("amerix"), 2, &LETTERS3, "BANG", "E E T");
    assert_eq!(
        events[1..],
        [
            drew(0, "E E", DrawReason::Penalty),
            skipped(0, SkipReason::Penalty),
            Event::CardTurned { card: card("T") },
            turn_to(1),
        ]
    );
    assert_eq!(
        g.round().unwrap().target,
        Target::Letter("T".parse().unwrap())
    );
}

/// D20 edge: a pétard turned onto the pétard is covered in turn.
#[test]
fn d20_a_second_petard_turned_is_covered_too() {
    let (g, events) = start_with(preset("amerix"), 2, &LETTERS3, "BANG", "E E BANG T");
    assert_eq!(
        events[3..],
        [
            Event::CardTurned { card: card("BANG") },
            Event::CardTurned { card: card("T") },
            turn_to(1),
        ]
    );
    assert_eq!(g.round().unwrap().discard.len(), 3);
}

/// D20: "A star starter names nothing: the first player may play any card."
#[test]
fn d20_a_star_starter_lets_the_first_player_play_any_card() {
    let (g, events) = start_with(preset("amerix"), 2, &LETTERS3, "STAR", "E");
    assert_eq!(events[1..], [turn_to(0)]);
    assert_eq!(legal(&g, 0), ["B", "C", "D", "F", "G", "H", "J"]);
}

/// D2: effects trigger only when played: a special card dealt or drawn does
/// nothing (here a drawn 2 that cannot be played).
#[test]
fn d2_a_drawn_2_has_no_effect() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["KS 9C 2S", "9S 9D 9H", "KD KH KC"],
            starter: "4H",
            stock: "2D 5S",
        },
    );
    assert_eq!(
        ok(&mut g, 0, Move::Draw {}),
        vec![drew(0, "2D", DrawReason::Draw), turn_to(1)]
    );
    assert_eq!(hand(&g, 1).len(), 3);
}

// ----- §2.4 legal card -------------------------------------------------------

/// §2.4; S2 l.12–13: "Une carte est posable si elle possède la même couleur
/// ou la même valeur que la dernière carte de la défausse." In `base` (no
/// effects) an 8 is an ordinary card.
#[test]
fn s2_legal_card_same_suit_or_same_rank() {
    let mut g = game(
        preset("base"),
        Deal {
            dealer: 2,
            hands: &["7C 2H KS 8S", "9S", "KD"],
            starter: "7H",
            stock: "5S",
        },
    );
    assert_eq!(legal(&g, 0), ["7C", "2H"]);
    let e = refused(&mut g, 0, play("KS"));
    assert!(matches!(e, RuleError::Illegal { .. }), "{e:?}");
    refused(&mut g, 0, play("8S"));
    assert!(matches!(
        refused(&mut g, 0, play("QH")),
        RuleError::NotInHand(_)
    ));
    assert!(matches!(
        refused(&mut g, 1, play("9S")),
        RuleError::NotYourTurn {
            seat: 1,
            current: 0
        }
    ));
}

// ----- §2.5 stock exhausted, D24 ------------------------------------------------

/// §2.5; S0 l.33 "on se sert de l'écart pour créer une nouvelle pioche, en
/// prenant soin de conserver visible la première carte", S1 l.136–137.
#[test]
fn s0_an_empty_stock_is_rebuilt_from_the_discard_pile_but_the_top() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 0,
            hands: &["6H KS KD", "5H 9C 9D"],
            starter: "4H",
            stock: "",
        },
    );
    ok(&mut g, 1, play("5H"));
    ok(&mut g, 0, play("6H"));
    let events = ok(&mut g, 1, Move::Draw {});
    let Event::StockReshuffled { stock } = &events[0] else {
        panic!("{events:?}")
    };
    let mut recycled = stock.clone();
    recycled.sort();
    assert_eq!(recycled, cards("4H 5H"));
    let drawn = stock[stock.len() - 1];
    assert_eq!(
        events[1..],
        [
            Event::CardsDrawn {
                seat: 1,
                cards: vec![drawn],
                reason: DrawReason::Draw
            },
            turn(1, Pending::Drawn { card: drawn }, false),
        ]
    );
    let r = g.round().unwrap();
    assert_eq!(r.discard, cards("6H"));
    assert_eq!(r.stock.len(), 1);
    assert_eq!(r.card_count(), r.size);
}

/// D24: "If stock and discard pile (less the top) are empty, a draw takes
/// what exists (possibly nothing) and play goes on".
#[test]
fn d24_a_draw_with_nothing_left_takes_nothing_and_play_goes_on() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 0,
            hands: &["6H KS KD", "9C 9D"],
            starter: "4H",
            stock: "",
        },
    );
    assert_eq!(
        ok(&mut g, 1, Move::Draw {}),
        vec![drew(1, "", DrawReason::Draw), turn_to(0)]
    );
}

/// D24: "a penalty does the same": a 2 with an empty stock and only the
/// starter beneath it: the victim draws the one card that exists (§2.5
/// recycles it first).
#[test]
fn d24_a_penalty_takes_what_exists() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["2H 5C 6C", "9S 9D 9C", "KD KS KC"],
            starter: "4H",
            stock: "",
        },
    );
    let mv = play("2H");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![
            played(0, &mv),
            Event::StockReshuffled { stock: cards("4H") },
            drew(1, "4H", DrawReason::Penalty),
            skipped(1, SkipReason::Penalty),
            turn_to(2),
        ]
    );
    assert_eq!(g.round().unwrap().discard, cards("2H"));
}

// ----- drawing: D27, S2 draw_ends_turn, D15 --------------------------------------

/// D27; S0 l.29 "Si un joueur ne peut pas poser de carte, il en pioche une
/// […] il la joue directement lorsque cela est possible", S1 l.53–55: only
/// the drawn card may be played, or pass.
#[test]
fn d27_a_drawn_legal_card_may_be_played_and_only_it() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["KS 9C 3D", "9S 9D 9H", "KD KH KC"],
            starter: "4H",
            stock: "5H 6D",
        },
    );
    assert_eq!(legal(&g, 0), ["draw"]);
    assert_eq!(
        ok(&mut g, 0, Move::Draw {}),
        vec![
            drew(0, "5H", DrawReason::Draw),
            turn(0, Pending::Drawn { card: card("5H") }, false),
        ]
    );
    assert_eq!(legal(&g, 0), ["5H", "pass"]);
    assert!(matches!(
        refused(&mut g, 0, Move::Draw {}),
        RuleError::CannotDraw(_)
    ));
    assert_eq!(
        ok(&mut g, 0, Move::Pass {}),
        vec![Event::TurnPassed { seat: 0 }, turn_to(1)]
    );
    assert_eq!(hand(&g, 0), ["KS", "9C", "3D", "5H"]);
}

/// D27: "if it is not legal the turn ends at once".
#[test]
fn d27_a_drawn_card_that_is_not_legal_ends_the_turn() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["KS 9C 3D", "9S 9D 9H", "KD KH KC"],
            starter: "4H",
            stock: "6D 5H",
        },
    );
    assert_eq!(
        ok(&mut g, 0, Move::Draw {}),
        vec![drew(0, "6D", DrawReason::Draw), turn_to(1)]
    );
}

/// D27: "Where there is no voluntary draw, drawing is legal only when the
/// player has no legal play"; passing is never a turn of its own.
#[test]
fn d27_no_draw_while_holding_a_legal_card() {
    let mut g = game(
        preset("moderne"),
        Deal {
            dealer: 2,
            hands: &["4C 9C 3D", "9S 9D 9H", "KD KH KC"],
            starter: "4H",
            stock: "6D 5H",
        },
    );
    assert!(matches!(
        refused(&mut g, 0, Move::Draw {}),
        RuleError::CannotDraw(_)
    ));
    assert!(matches!(
        refused(&mut g, 0, Move::Pass {}),
        RuleError::CannotPass(_)
    ));
}

/// §3.2 `draw_ends_turn`; S2 l.14–15: "il doit en piocher une et son tour est
/// fini", even when the drawn card could be played.
#[test]
fn s2_drawing_ends_the_turn() {
    let mut g = game(
        preset("base"),
        Deal {
            dealer: 2,
            hands: &["KS 9C 3D", "9S 9D 9H", "KD KH KC"],
            starter: "4H",
            stock: "5H 6D",
        },
    );
    assert_eq!(
        ok(&mut g, 0, Move::Draw {}),
        vec![drew(0, "5H", DrawReason::Draw), turn_to(1)]
    );
}

/// D15; S4 l.61–62 "Si un joueur ne peut, ou ne veut pas servir […] il prend
/// 1 carte […] Si elle convient, il peut la poser s'il le désire, sinon il
/// passe son tour."
#[test]
fn d15_s4_a_player_may_draw_instead_of_playing_and_play_the_drawn_card() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &["4C 9S 3D", "9D 9H 3C", "KD KH KC"],
            starter: "4H",
            stock: "5H 6D",
        },
    );
    assert_eq!(legal(&g, 0), ["4C", "draw"]);
    ok(&mut g, 0, Move::Draw {});
    assert_eq!(legal(&g, 0), ["5H", "pass"]);
    let mv = play("5H");
    assert_eq!(ok(&mut g, 0, mv.clone()), vec![played(0, &mv), turn_to(1)]);
}
