//! docs/RULES.md §2.6 and D8: the announcement ("Carte !", "Toutilix !", "CARTE")
//! and the challenge ("Contre-carte !", "étoile !"), with the penalty of
//! every preset (§3.4).

use crate::support::*;
use domain::{DrawReason, Event, Move, RuleError, SkipReason};

fn challenge(seat: usize) -> Move {
    Move::Challenge { seat }
}

fn cannot_challenge(e: RuleError) {
    assert!(matches!(e, RuleError::CannotChallenge { .. }), "{e:?}");
}

/// Seat 0 on turn with `hand0`; seats 1 and 2 hold nothing that matches 4H.
fn table(id: &str, hand0: &str) -> domain::Game {
    game(
        preset(id),
        Deal {
            dealer: 2,
            hands: &[hand0, "9S 9D 9C", "KS KD KC"],
            starter: "4H",
            stock: "3S 3D 7C 7D",
        },
    )
}

/// D8: "A play that leaves more than one card may not carry it."
#[test]
fn d8_only_the_play_leaving_one_card_may_announce() {
    let mut g = table("classique", "5H 6H 7C");
    assert_eq!(legal(&g, 0), ["5H", "6H"]);
    let e = refused(&mut g, 0, announced(play("5H")));
    assert!(matches!(e, RuleError::BadAnnounce(_)), "{e:?}");
}

/// D8: "`legal_moves` lists a play that leaves one card twice: with
/// `announce` true and false", the announcing one first.
#[test]
fn d8_legal_moves_list_the_last_but_one_play_twice_announcing_first() {
    let g = table("classique", "5H 6H");
    assert_eq!(legal(&g, 0), ["5H!", "5H", "6H!", "6H"]);
}

/// D8: "A player who goes out needs no announcement" (and a play that
/// leaves no card cannot carry one).
#[test]
fn d8_going_out_needs_no_announcement() {
    let mut g = table("classique", "5H");
    assert_eq!(legal(&g, 0), ["5H"]);
    refused(&mut g, 0, announced(play("5H")));
    let events = ok(&mut g, 0, play("5H"));
    assert_eq!(
        kinds(&events)[..3],
        ["card_played", "player_went_out", "round_ended"]
    );
}

/// §2.6; S0 l.63 "Lorsqu'un joueur n'a plus qu'une seule carte, il doit
/// l'annoncer. S'il oublie de le faire, il devra piocher 2 cartes."; D8: the
/// successful challenge closes the window.
#[test]
fn s0_an_unannounced_last_card_challenged_draws_two() {
    let mut g = table("classique", "5H 6C");
    let mv = play("5H");
    assert_eq!(ok(&mut g, 0, mv.clone()), vec![played(0, &mv), turn_to(1)]);
    // Any other seat may challenge, on turn or not.
    assert_eq!(legal(&g, 1), ["challenge 0", "draw"]);
    assert_eq!(legal(&g, 2), ["challenge 0"]);
    assert_eq!(legal(&g, 0), Vec::<String>::new());
    assert_eq!(
        ok(&mut g, 2, challenge(0)),
        vec![
            Event::Challenged {
                by: 2,
                seat: 0,
                penalty: 2,
                loses_turn: false
            },
            drew(0, "3S 3D", DrawReason::Challenge),
        ]
    );
    assert_eq!(current(&g), Some(1));
    cannot_challenge(refused(&mut g, 1, challenge(0)));
}

/// D8: "The challenge window runs until the next move other than a
/// challenge, by anyone"; S4 l.65–66 "S'il ne le dit pas et que le joueur
/// suivant a joué, on ne peut rien lui reprocher".
#[test]
fn d8_the_window_closes_on_the_next_move() {
    let mut g = table("classique", "5H 6C");
    ok(&mut g, 0, play("5H"));
    ok(&mut g, 1, Move::Draw {});
    assert_eq!(legal(&g, 2), ["draw"]);
    cannot_challenge(refused(&mut g, 2, challenge(0)));
}

/// D8: "(an automatic penalty or skip is not a move)": after an unannounced
/// 2 the victim's penalty leaves the window open.
#[test]
fn d8_an_automatic_penalty_does_not_close_the_window() {
    let mut g = table("classique", "2H 6C");
    ok(&mut g, 0, play("2H"));
    assert_eq!(current(&g), Some(2));
    assert_eq!(legal(&g, 2)[0], "challenge 0");
    assert_eq!(legal(&g, 1), ["challenge 0"]);
    ok(&mut g, 1, challenge(0));
    assert_eq!(hand(&g, 0), ["6C", "7C", "7D"]);
}

/// D8: "only players other than the target may challenge".
#[test]
fn d8_a_player_cannot_challenge_themselves() {
    let mut g = table("classique", "5H 6C");
    ok(&mut g, 0, play("5H"));
    cannot_challenge(refused(&mut g, 0, challenge(0)));
}

/// D8: "A challenge against an announced […] hand is refused."
#[test]
fn d8_a_challenge_against_an_announced_last_card_is_refused() {
    let mut g = table("classique", "5H 6C");
    let mv = announced(play("5H"));
    assert_eq!(ok(&mut g, 0, mv.clone()), vec![played(0, &mv), turn_to(1)]);
    assert_eq!(legal(&g, 2), Vec::<String>::new());
    cannot_challenge(refused(&mut g, 2, challenge(0)));
}

/// D8: "A challenge against […] a multi-card hand is refused."
#[test]
fn d8_a_challenge_against_a_multi_card_hand_is_refused() {
    let mut g = table("classique", "5H 6C 7C");
    ok(&mut g, 0, play("5H"));
    cannot_challenge(refused(&mut g, 2, challenge(0)));
    cannot_challenge(refused(&mut g, 0, challenge(1)));
}

/// The penalty of each preset: the count drawn, and whether a turn is lost.
fn penalty_of(id: &str) -> Vec<Event> {
    let mut g = table(id, "5H 6C");
    ok(&mut g, 0, play("5H"));
    ok(&mut g, 2, challenge(0))
}

/// §3.4: 2 cards in S1 (l.115 "le joueur fautif pioche 2 cartes de
/// pénalité") and S2 (l.17–18 "« Contre-carte ! » et le faire piocher 2
/// cartes").
#[test]
fn s1_s2_the_penalty_is_two_cards() {
    for id in ["moderne", "base"] {
        assert_eq!(
            penalty_of(id),
            vec![
                Event::Challenged {
                    by: 2,
                    seat: 0,
                    penalty: 2,
                    loses_turn: false
                },
                drew(0, "3S 3D", DrawReason::Challenge),
            ],
            "{id}"
        );
    }
}

/// §3.4; S4 l.67: "il doit en piocher une".
#[test]
fn s4_the_penalty_is_one_card() {
    assert_eq!(
        penalty_of("757"),
        vec![
            Event::Challenged {
                by: 2,
                seat: 0,
                penalty: 1,
                loses_turn: false
            },
            drew(0, "3S", DrawReason::Challenge),
        ]
    );
}

/// §3.4; S3 l.27: "sinon un autre crie « étoile ! », ce qui oblige à piocher
/// 2 cartes et passer son tour": the target's next turn is skipped.
#[test]
fn s3_a_successful_challenge_draws_two_and_loses_the_next_turn() {
    let mut g = game(
        preset("amerix"),
        Deal {
            dealer: 2,
            hands: &["E F", "G K L", "H N P"],
            starter: "D",
            stock: "S T R",
        },
    );
    ok(&mut g, 0, play("E"));
    assert_eq!(
        ok(&mut g, 1, challenge(0)),
        vec![
            Event::Challenged {
                by: 1,
                seat: 0,
                penalty: 2,
                loses_turn: true
            },
            drew(0, "S T", DrawReason::Challenge),
        ]
    );
    ok(&mut g, 1, play("G"));
    let mv = play("H");
    assert_eq!(
        ok(&mut g, 2, mv.clone()),
        vec![
            played(2, &mv),
            skipped(0, SkipReason::Challenge),
            turn_to(1)
        ]
    );
}

/// §2.6, D27: the play of a drawn card may carry the announcement too.
#[test]
fn d8_a_drawn_card_played_may_carry_the_announcement() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["KS", "9S 9D 9C", "KD KH KC"],
            starter: "4H",
            stock: "5H 3D",
        },
    );
    ok(&mut g, 0, Move::Draw {});
    assert_eq!(legal(&g, 0), ["5H!", "5H", "pass"]);
    ok(&mut g, 0, announced(play("5H")));
    assert_eq!(legal(&g, 1), ["draw"]);
}

/// D8 edge: the window stays open while the target plays again (a jack with
/// two players in `moderne`): the other seat may still challenge.
#[test]
fn d8_the_window_stays_open_while_the_target_plays_again() {
    let mut g = game(
        preset("moderne"),
        Deal {
            dealer: 1,
            hands: &["JH 5H", "9S 9D 9C"],
            starter: "4H",
            stock: "3S 3D 7C",
        },
    );
    ok(&mut g, 0, play("JH"));
    assert_eq!(current(&g), Some(0));
    assert_eq!(legal(&g, 1), ["challenge 0"]);
    ok(&mut g, 1, challenge(0));
    assert_eq!(hand(&g, 0), ["5H", "3S", "3D"]);
    assert_eq!(legal(&g, 0), ["5H"]);
}

/// S3 × two-player X (S3 l.59): a target challenged while playing again
/// loses the turn after that.
#[test]
fn s3_a_target_challenged_on_turn_loses_the_following_turn() {
    let mut g = game(
        preset("amerix"),
        Deal {
            dealer: 1,
            hands: &["X Y", "B C D"],
            starter: "W",
            stock: "S T R N",
        },
    );
    ok(&mut g, 0, play("X"));
    assert_eq!(current(&g), Some(0));
    ok(&mut g, 1, challenge(0));
    ok(&mut g, 0, play("Y"));
    let mv = play("B");
    assert_eq!(
        ok(&mut g, 1, mv.clone()),
        vec![
            played(1, &mv),
            skipped(0, SkipReason::Challenge),
            turn_to(1)
        ]
    );
}

/// D8 and the order of `legal_moves`: a client that always posts the first
/// move listed for the seat on turn announces its last card (the announcing
/// play comes first), so nobody can challenge it forever: whole games of
/// every preset end.
#[test]
fn d8_a_client_taking_the_first_listed_move_finishes_games_of_every_preset() {
    for id in ["classique", "moderne", "base", "amerix", "757"] {
        let min = preset(id).players.min;
        for seats in [min, min + 1] {
            let mut g = domain::Game::new(preset(id), seats).unwrap();
            let mut r = rng(7);
            g.execute(&domain::Command::Start, &mut r, &mut Vec::new())
                .unwrap();
            let mut moves = 0;
            while g.status() == domain::Status::Playing {
                let seat = current(&g).expect("a seat on turn");
                let mv = g.legal_moves(seat).remove(0);
                g.execute(&domain::Command::Move { seat, mv }, &mut r, &mut Vec::new())
                    .unwrap();
                moves += 1;
                assert!(
                    moves < 200_000,
                    "{id}, {seats} seats: still playing after {moves} moves"
                );
            }
        }
    }
}

// ----- D36: a player who went out may still challenge -------------------------

/// Placement scoring, three players; seat 0 has just gone out.
fn one_out() -> domain::Game {
    let mut g = game(
        with_options("base", serde_json::json!({"scoring": "positive"})),
        Deal {
            dealer: 2,
            hands: &["5H", "5S 6S 7S", "KS KD KC"],
            starter: "5C",
            stock: "3C 3D 7C 7D 10C 10D JD QD",
        },
    );
    ok(&mut g, 0, play("5H"));
    g
}

/// D36: in placement scoring a player who has gone out has left the
/// rotation but still challenges an unannounced last card.
#[test]
fn d36_a_player_who_went_out_challenges_an_unannounced_last_card() {
    let mut g = one_out();
    assert!(g.round().unwrap().is_out(0), "seat 0 went out");
    ok(&mut g, 1, play("5S"));
    ok(&mut g, 2, play("KS"));
    // Seat 1 plays down to one card, without a word.
    ok(&mut g, 1, play("7S"));
    let events = ok(&mut g, 0, challenge(1));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Challenged { by: 0, seat: 1, .. })),
        "{events:?}"
    );
}

/// D36, edge: the out player may not challenge a last card announced.
#[test]
fn d36_a_player_who_went_out_cannot_challenge_an_announced_last_card() {
    let mut g = one_out();
    ok(&mut g, 1, play("5S"));
    ok(&mut g, 2, play("KS"));
    ok(&mut g, 1, announced(play("7S")));
    cannot_challenge(refused(&mut g, 0, challenge(1)));
}

/// D36 with D37: a challenge window gives nobody a deadline of its own. A
/// challenge by the player who went out neither brings them back into the
/// rotation nor moves the turn or starts a new one, so the deadline of the
/// seat on turn runs on.
#[test]
fn d36_d37_a_challenge_by_the_player_who_went_out_leaves_the_turn_where_it_was() {
    let mut g = one_out();
    ok(&mut g, 1, play("5S"));
    ok(&mut g, 2, play("KS"));
    ok(&mut g, 1, play("7S"));
    let on_turn = current(&g);
    assert_ne!(on_turn, Some(0), "the challenger is not on turn");
    let events = ok(&mut g, 0, challenge(1));
    assert_eq!(current(&g), on_turn);
    assert!(g.round().unwrap().is_out(0), "still out of the rotation");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::TurnStarted { .. })),
        "{events:?}"
    );
}
