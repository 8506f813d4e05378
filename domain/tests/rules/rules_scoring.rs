//! docs/RULES.md §3.5 (card points of every preset, `by_effect`), §3.6 (scoring
//! and end of game), D16, D17, D21, D31, D32.

use std::collections::BTreeMap;

use crate::support::*;
use domain::rules::End;
use domain::{DrawReason, EndReason, Event, GameEnded, Move, Placing, RoundEnded, SkipReason};
use serde_json::json;

fn points_of(rules: domain::Rules, table: &[(&str, i32)]) {
    let g = domain::Game::new(rules, 2).unwrap();
    for (code, p) in table {
        assert_eq!(g.points(card(code)), *p, "{code}");
    }
}

fn by_seat<T: Clone>(v: &[T]) -> BTreeMap<usize, T> {
    v.iter().cloned().enumerate().collect()
}

fn placing(seat: usize, total: i32, place: usize) -> Placing {
    Placing { seat, total, place }
}

fn round_ended(events: &[Event]) -> RoundEnded {
    events
        .iter()
        .find_map(|e| match e {
            Event::RoundEnded(re) => Some((**re).clone()),
            _ => None,
        })
        .expect("a round_ended event")
}

fn game_ended(events: &[Event]) -> Option<GameEnded> {
    events.iter().find_map(|e| match e {
        Event::GameEnded(ge) => Some((**ge).clone()),
        _ => None,
    })
}

// ----- §3.5 card points ------------------------------------------------------

/// §3.5, §5; S0 l.71–77: "8 et Jokers : 50 points / As, Valets et 2 : 25
/// points / Dames et Rois : 10 points / Autres cartes : Leur valeur
/// nominale".
#[test]
fn s0_classique_points() {
    points_of(
        with_options("classique", json!({"jokers": true})),
        &[
            ("8H", 50),
            ("JK", 50),
            ("AS", 25),
            ("JC", 25),
            ("2D", 25),
            ("QH", 10),
            ("KS", 10),
            ("10C", 10),
            ("9C", 9),
            ("3D", 3),
        ],
    );
}

/// §3.5; S1 l.147–150: "numérales = valeur, Roi/Dame = 10, Valet/As/2 = 20,
/// 8/Joker = 50".
#[test]
fn s1_moderne_points() {
    points_of(
        preset("moderne"),
        &[
            ("8H", 50),
            ("JK", 50),
            ("JC", 20),
            ("AS", 20),
            ("2D", 20),
            ("QH", 10),
            ("KS", 10),
            ("10C", 10),
            ("7C", 7),
        ],
    );
}

/// §3.5; S4 l.77–81: "Joker =150 pts / 8 = 32 pts / As =11 pts / habillés =
/// 10 pts / autres = leur valeur".
#[test]
fn s4_757_points() {
    points_of(
        preset("757"),
        &[
            ("JK", 150),
            ("8H", 32),
            ("AS", 11),
            ("JC", 10),
            ("QH", 10),
            ("KS", 10),
            ("10C", 10),
            ("2D", 2),
            ("9C", 9),
        ],
    );
}

/// §3.5 `by_effect`; S2 l.41–45: "un effet fort (attaquer ou changer de
/// couleur) vaut 50 points / un effet moyen (tous les autres effets) vaut 20
/// points / une tête sans effet vaut 10 points / les cartes sans effets
/// valent leurs valeurs" (ace 1).
#[test]
fn s2_by_effect_points_follow_the_effects() {
    points_of(
        with_options(
            "base",
            json!({"effects": {
                "8": "wild_suit",
                "2": {"draw_skip": 2},
                "A": {"attack_chain": 2},
                "J": "skip",
                "10": {"must_replay": 2},
                "Q": "reverse",
            }}),
        ),
        &[
            ("8H", 50),
            ("2D", 50),
            ("AS", 50),
            ("JC", 20),
            ("10C", 20),
            ("QH", 20),
            ("KS", 10),
            ("7C", 7),
        ],
    );
    // Without effects (the default base): face value, heads 10, ace 1.
    points_of(
        preset("base"),
        &[
            ("8H", 8),
            ("2D", 2),
            ("AS", 1),
            ("JC", 10),
            ("KS", 10),
            ("10C", 10),
        ],
    );
}

// ----- §3.6 hand_points --------------------------------------------------------

/// §3.6 `hand_points`; S0 l.67 "on compte les points qui restent aux
/// joueurs"; the finisher scores 0.
#[test]
fn s0_hand_points_everyone_but_the_finisher_scores_the_hand() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["5H", "8S AS 9C", "KS QD 3C"],
            starter: "4H",
            stock: "3S",
        },
    );
    let events = ok(&mut g, 0, play("5H"));
    assert_eq!(
        events[1..3],
        [
            Event::PlayerWentOut { seat: 0, place: 1 },
            Event::RoundEnded(Box::new(RoundEnded {
                round: 1,
                out_order: vec![0],
                hands: by_seat(&[vec![], cards("8S AS 9C"), cards("KS QD 3C")]),
                points: by_seat(&[0, 84, 23]),
                totals: by_seat(&[0, 84, 23]),
                blocked: false,
            })),
        ]
    );
    assert_eq!(g.totals(), [0, 84, 23]);
    assert_eq!(g.round().unwrap().number, 2);
}

/// §3.6 `finisher_bonus`, D16; S4 l.73–75: "Le joueur ayant fini marque - 10
/// pts (moins 10 pts), les autres comptent le total des cartes".
#[test]
fn s4_the_finisher_scores_minus_ten() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &["5H", "9S 3C", "KS"],
            starter: "4H",
            stock: "3S",
        },
    );
    let re = round_ended(&ok(&mut g, 0, play("5H")));
    assert_eq!(re.points, by_seat(&[-10, 12, 10]));
    assert_eq!(g.totals(), [-10, 12, 10]);
}

// ----- end conditions ---------------------------------------------------------------

/// D16; S4 l.83–87 "qui arrive ou dépasse le plus 151 a perdu": the game
/// ends at once, that player loses, the others are ranked lowest first.
#[test]
fn d16_reaching_151_loses_and_the_rest_rank_lowest_first() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &["5H", "JK 2C", "KS"],
            starter: "4H",
            stock: "3S",
        },
    );
    let events = ok(&mut g, 0, play("5H"));
    assert_eq!(
        kinds(&events),
        [
            "card_played",
            "player_went_out",
            "round_ended",
            "game_ended"
        ]
    );
    assert_eq!(
        game_ended(&events).unwrap(),
        GameEnded {
            reason: EndReason::EndCondition,
            ranking: vec![placing(0, -10, 1), placing(2, 10, 2), placing(1, 152, 3)],
            winners: vec![0],
            losers: vec![1],
        }
    );
    assert_eq!(g.status(), domain::Status::Finished);
    assert!(g.legal_moves(2).is_empty());
}

/// D16 edge: exactly the threshold ("arrive ou dépasse") loses.
#[test]
fn d16_exactly_the_threshold_loses() {
    let mut g = game(
        with_options("757", json!({"target": 20})),
        Deal {
            dealer: 2,
            hands: &["5H", "KS QS", "3C"],
            starter: "4H",
            stock: "3S",
        },
    );
    let ge = game_ended(&ok(&mut g, 0, play("5H"))).expect("the game ends");
    assert_eq!(ge.losers, vec![1]);
    assert_eq!(
        ge.ranking,
        vec![placing(0, -10, 1), placing(2, 3, 2), placing(1, 20, 3)]
    );
}

fn two_player_end(rules: domain::Rules) -> Vec<Event> {
    let mut g = game(
        rules,
        Deal {
            dealer: 0,
            hands: &["KS 9C", "5H"],
            starter: "4H",
            stock: "3S",
        },
    );
    ok(&mut g, 1, play("5H"))
}

/// §3.6 `lowest_wins_at`; S1 l.156–158 "La partie s'arrête quand un joueur
/// atteint 500 points (ou dépasse). Et le gagnant final est le joueur qui a
/// le moins de points." (D18: classique too.) Reaching T exactly ends it.
#[test]
fn lowest_wins_at_ends_when_a_total_reaches_the_target() {
    let events = two_player_end(with_options("classique", json!({"target": 19})));
    assert_eq!(
        game_ended(&events).unwrap(),
        GameEnded {
            reason: EndReason::EndCondition,
            ranking: vec![placing(1, 0, 1), placing(0, 19, 2)],
            winners: vec![1],
            losers: vec![0],
        }
    );
    let events = two_player_end(with_options("classique", json!({"target": 20})));
    assert_eq!(game_ended(&events), None);
    assert_eq!(kinds(&events).last(), Some(&"turn_started"));
}

/// §3.6 `lowest_wins_above`; S2 l.47: "La partie se termine si un joueur
/// dépasse 100 points": reaching T is not enough.
#[test]
fn s2_lowest_wins_above_needs_to_pass_the_target() {
    assert_eq!(
        game_ended(&two_player_end(with_options("base", json!({"target": 19})))),
        None
    );
    let ge = game_ended(&two_player_end(with_options("base", json!({"target": 18}))));
    assert_eq!(ge.unwrap().winners, vec![1]);
}

/// §3.6 `highest_wins_above`, D17; S2 l.35–36: "La partie se termine lorsqu'un
/// joueur dépasse 100 points. Ce joueur remporte la partie."
#[test]
fn s2_highest_wins_above_in_placement_scoring() {
    let positive =
        |target: i32| with_options("base", json!({"scoring": "positive", "target": target}));
    let events = two_player_end(positive(40));
    assert_eq!(round_ended(&events).points, by_seat(&[0, 50]));
    assert_eq!(
        game_ended(&events).unwrap(),
        GameEnded {
            reason: EndReason::EndCondition,
            ranking: vec![placing(1, 50, 1), placing(0, 0, 2)],
            winners: vec![1],
            losers: vec![0],
        }
    );
    assert_eq!(game_ended(&two_player_end(positive(50))), None);
}

/// §5 `rounds`: a fixed number of rounds instead of the threshold.
#[test]
fn a_fixed_number_of_rounds_ends_the_game() {
    let ge = game_ended(&two_player_end(with_options(
        "classique",
        json!({"rounds": 1}),
    )));
    assert_eq!(
        ge.unwrap().ranking,
        vec![placing(1, 0, 1), placing(0, 19, 2)]
    );
    assert_eq!(
        game_ended(&two_player_end(with_options(
            "classique",
            json!({"rounds": 2})
        ))),
        None
    );
}

/// D21: "With equal totals at the end the tied players share the place."
#[test]
fn d21_tied_totals_share_a_place() {
    let ge = domain::score::ranking(End::LowestWinsAt(500), &[10, 5, 10, 20]);
    assert_eq!(
        ge.ranking,
        vec![
            placing(1, 5, 1),
            placing(0, 10, 2),
            placing(2, 10, 2),
            placing(3, 20, 4)
        ]
    );
    assert_eq!((ge.winners, ge.losers), (vec![1], vec![3]));
    let ge = domain::score::ranking(End::HighestWinsAbove(100), &[120, 30, 120]);
    assert_eq!(
        ge.ranking,
        vec![placing(0, 120, 1), placing(2, 120, 1), placing(1, 30, 3)]
    );
    assert_eq!(ge.winners, vec![0, 2]);
}

/// D21 in a game: two losers tied on 10 share the second place.
#[test]
fn d21_tied_losers_share_the_last_place() {
    let mut g = game(
        with_options("classique", json!({"target": 10})),
        Deal {
            dealer: 2,
            hands: &["5H", "KS", "QS"],
            starter: "4H",
            stock: "3S",
        },
    );
    let ge = game_ended(&ok(&mut g, 0, play("5H"))).unwrap();
    assert_eq!(
        ge.ranking,
        vec![placing(0, 0, 1), placing(1, 10, 2), placing(2, 10, 2)]
    );
    assert_eq!((ge.winners, ge.losers), (vec![0], vec![1, 2]));
}

// ----- placement (D17, D32) ------------------------------------------------------------

fn positive(effects: serde_json::Value) -> domain::Rules {
    with_options("base", json!({"scoring": "positive", "effects": effects}))
}

/// D17; S2 l.32–34: "Le premier joueur à se débarasser de sa main gagne 50
/// points. Le deuxième 20 et le troisième 10. Les autres 0. On arrête la
/// manche […] dès que trois joueurs n'ont plus de carte."
#[test]
fn d17_placement_ends_when_three_are_out() {
    let mut g = game(
        positive(json!({})),
        Deal {
            dealer: 4,
            hands: &["5H 9C 9D", "6H", "7H", "KH", "2C 3C"],
            starter: "4H",
            stock: "3S 3D",
        },
    );
    ok(&mut g, 0, play("5H"));
    let mv = play("6H");
    assert_eq!(
        ok(&mut g, 1, mv.clone()),
        vec![
            played(1, &mv),
            Event::PlayerWentOut { seat: 1, place: 1 },
            turn_to(2)
        ]
    );
    ok(&mut g, 2, play("7H"));
    let re = round_ended(&ok(&mut g, 3, play("KH")));
    assert_eq!(re.out_order, vec![1, 2, 3]);
    assert_eq!(re.points, by_seat(&[0, 50, 20, 10, 0]));
}

/// D17; S2 l.33–34: "dès qu'il ne reste qu'un joueur avec des cartes en
/// main".
#[test]
fn d17_placement_ends_when_one_player_still_holds_cards() {
    let mut g = game(
        positive(json!({})),
        Deal {
            dealer: 2,
            hands: &["5H 9C", "6H", "7H"],
            starter: "4H",
            stock: "3S 3D",
        },
    );
    ok(&mut g, 0, play("5H"));
    ok(&mut g, 1, play("6H"));
    let re = round_ended(&ok(&mut g, 2, play("7H")));
    assert_eq!(re.out_order, vec![1, 2]);
    assert_eq!(re.points, by_seat(&[0, 50, 20]));
}

/// D17, D32: "players who go out leave the rotation".
#[test]
fn d32_a_player_out_is_passed_over() {
    let mut g = game(
        positive(json!({})),
        Deal {
            dealer: 3,
            hands: &["5H 9H 10H", "6H", "7H KD", "QH KC"],
            starter: "4H",
            stock: "3S 3D",
        },
    );
    ok(&mut g, 0, play("5H"));
    ok(&mut g, 1, play("6H"));
    ok(&mut g, 2, play("7H"));
    ok(&mut g, 3, play("QH"));
    let mv = play("9H");
    assert_eq!(ok(&mut g, 0, mv.clone()), vec![played(0, &mv), turn_to(2)]);
}

/// D32: "The card that takes a player out keeps its effect when the round
/// goes on (a 2 still makes the next player draw)".
#[test]
fn d32_the_card_that_takes_a_player_out_keeps_its_effect() {
    let mut g = game(
        positive(json!({"2": {"draw_skip": 2}})),
        Deal {
            dealer: 3,
            hands: &["5H 9C 9D", "2H", "KS KD", "QS QD"],
            starter: "4H",
            stock: "3S 3D 7C",
        },
    );
    ok(&mut g, 0, play("5H"));
    let mv = play("2H");
    assert_eq!(
        ok(&mut g, 1, mv.clone()),
        vec![
            played(1, &mv),
            Event::PlayerWentOut { seat: 1, place: 1 },
            drew(2, "3S 3D", DrawReason::Penalty),
            skipped(2, SkipReason::Penalty),
            turn_to(3),
        ]
    );
}

/// D32: "an effect that would give that player another turn (a replay […])
/// just passes the turn on".
#[test]
fn d32_a_replay_from_a_player_out_passes_the_turn_on() {
    let mut g = game(
        positive(json!({"10": {"must_replay": 2}})),
        Deal {
            dealer: 3,
            hands: &["5H 9C 9D", "10H", "KS KD", "QS QD"],
            starter: "4H",
            stock: "3S 3D 7C",
        },
    );
    ok(&mut g, 0, play("5H"));
    let mv = play("10H");
    assert_eq!(
        ok(&mut g, 1, mv.clone()),
        vec![
            played(1, &mv),
            Event::PlayerWentOut { seat: 1, place: 1 },
            turn_to(2)
        ]
    );
}

/// D32: "skips […] count only the seats still holding cards": a jack that
/// takes a player out skips the next seat still in the round.
#[test]
fn d32_a_skip_from_a_player_going_out_skips_the_next_active_seat() {
    let mut g = game(
        positive(json!({"J": "skip"})),
        Deal {
            dealer: 3,
            hands: &["5H 9C 9D", "JH", "KS KD", "QS QD"],
            starter: "4H",
            stock: "3S 3D 7C",
        },
    );
    ok(&mut g, 0, play("5H"));
    let mv = play("JH");
    assert_eq!(
        ok(&mut g, 1, mv.clone()),
        vec![
            played(1, &mv),
            Event::PlayerWentOut { seat: 1, place: 1 },
            skipped(2, SkipReason::Skip),
            turn_to(3),
        ]
    );
}

/// D32: "with two players left a reversal acts as `two_player_reverse`"
/// (none in base: the direction stays and the next seat plays).
#[test]
fn d32_with_two_players_left_a_reversal_is_a_two_player_reversal() {
    let mut g = game(
        positive(json!({"J": "reverse"})),
        Deal {
            dealer: 2,
            hands: &["5H 9C", "JH", "KS KD"],
            starter: "4H",
            stock: "3S 3D 7C",
        },
    );
    ok(&mut g, 0, play("5H"));
    let mv = play("JH");
    assert_eq!(
        ok(&mut g, 1, mv.clone()),
        vec![
            played(1, &mv),
            Event::PlayerWentOut { seat: 1, place: 1 },
            turn_to(2)
        ]
    );
    assert_eq!(g.round().unwrap().direction, domain::Direction::Clockwise);
}

// ----- D31 blocked round ----------------------------------------------------------------

/// D31: nothing to draw, nothing to recycle, every player in turn drew
/// nothing: the round ends with nobody out and everyone scores the hand (no
/// finisher bonus, as nobody finished).
#[test]
fn d31_a_blocked_round_ends_and_everyone_scores_the_hand() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 1,
            hands: &["5C", "KS"],
            starter: "4H",
            stock: "",
        },
    );
    assert_eq!(
        ok(&mut g, 0, Move::Draw {}),
        vec![drew(0, "", DrawReason::Draw), turn_to(1)]
    );
    let events = ok(&mut g, 1, Move::Draw {});
    assert_eq!(events[0], drew(1, "", DrawReason::Draw));
    let re = round_ended(&events);
    assert_eq!(re.out_order, Vec::<usize>::new());
    assert!(re.blocked);
    assert_eq!(re.points, by_seat(&[5, 10]));
    assert_eq!(g.round().unwrap().number, 2);
}

/// D31: "(in placement scoring the players still holding cards score 0)".
/// Seat 1 goes out with an 8 naming diamonds; the recycled starter (4C) is
/// no diamond and no 8, so nobody can play again.
#[test]
fn d31_a_blocked_placement_round_gives_0_to_those_holding_cards() {
    let mut g = game(
        positive(json!({"8": "wild_suit"})),
        Deal {
            dealer: 0,
            hands: &["9H 5H", "8C", "KH QH", "KS QS"],
            starter: "4C",
            stock: "",
        },
    );
    ok(&mut g, 1, play_suit("8C", "D"));
    assert_eq!(
        ok(&mut g, 2, Move::Draw {}),
        vec![
            Event::StockReshuffled { stock: cards("4C") },
            drew(2, "4C", DrawReason::Draw),
            turn_to(3),
        ]
    );
    ok(&mut g, 3, Move::Draw {});
    ok(&mut g, 0, Move::Draw {});
    let events = ok(&mut g, 2, Move::Draw {});
    assert_eq!(events[0], drew(2, "", DrawReason::Draw));
    let re = round_ended(&events);
    assert_eq!(re.out_order, vec![1]);
    assert!(
        re.blocked,
        "a blocked round is recorded as such even after someone went out"
    );
    assert_eq!(re.points, by_seat(&[0, 50, 0, 0]));
}
