//! docs/RULES.md §3.3: every effect of the catalogue (normal case, edge case,
//! interaction with another effect), and the related knobs `wild_not_on`,
//! `stacking` (D25), `joker_counter`, `special_finish` (D26, D34),
//! `two_player_reverse` (D6, D7), plus D1, D3, D4, D5, D11–D14, D28, D29, D33.
//!
//! Deals are hand-made (`support::game`): the stock is written top card
//! first, the first player is the seat after the dealer. Effects of the
//! letter deck (wild_letter, firecracker) are in `rules_letters.rs`.

use crate::support::*;
use domain::{Direction, DrawReason, Event, Game, Pending, RuleError, SkipReason};
use serde_json::json;

fn illegal(e: RuleError) {
    assert!(matches!(e, RuleError::Illegal { .. }), "{e:?}");
}

fn bad_choice(e: RuleError) {
    assert!(matches!(e, RuleError::BadChoice { .. }), "{e:?}");
}

// ----- wild_suit -----------------------------------------------------------

/// S0 l.39–41: "Les 8 peuvent être posés sur n'importe quelle carte […] Le
/// joueur qui pose un 8 choisit la couleur avec laquelle le jeu va continuer."
#[test]
fn wild_suit_8_goes_on_any_card_and_names_the_suit() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["8H 3C 4C", "5D 5S 9C", "KD KS KC"],
            starter: "QS",
            stock: "7C 7D",
        },
    );
    let mv = play_suit("8H", "D");
    assert_eq!(ok(&mut g, 0, mv.clone()), vec![played(0, &mv), turn_to(1)]);
    // Diamonds now, whatever the 8's own suit: 5S (neither D nor 8) is out.
    assert_eq!(legal(&g, 1), ["5D"]);
    illegal(refused(&mut g, 1, play("5S")));
}

/// D29: "A wild card's move carries its choice: `suit` for an 8 […]
/// `legal_moves` lists one entry per possible choice."
#[test]
fn d29_an_8_must_name_a_suit_and_is_listed_once_per_suit() {
    let mut g = game(
        preset("moderne"),
        Deal {
            dealer: 2,
            hands: &["8H 3C 4C", "5D", "KD"],
            starter: "QS",
            stock: "7C",
        },
    );
    assert_eq!(legal(&g, 0), ["8H:C", "8H:D", "8H:H", "8H:S"]);
    bad_choice(refused(&mut g, 0, play("8H")));
    bad_choice(refused(&mut g, 0, play_letter("8H", "K")));
}

/// S0 l.39: "Les 8 peuvent être posés sur n'importe quelle carte sauf le 2."
#[test]
fn wild_not_on_s0_an_8_may_not_go_on_a_2() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["8H 3D 4C", "5D", "KD"],
            starter: "2C",
            stock: "7C",
        },
    );
    illegal(refused(&mut g, 0, play_suit("8H", "S")));
    // Nothing else matches the 2 of clubs except 4C (suit).
    assert_eq!(legal(&g, 0), ["4C"]);
}

/// `wild_not_on` is the S0 knob only: in `moderne` (S1 l.68 "Vous pouvez le
/// jouer à n'importe quel moment") an 8 goes on a 2.
#[test]
fn wild_not_on_is_empty_in_moderne_so_an_8_goes_on_a_2() {
    let mut g = game(
        preset("moderne"),
        Deal {
            dealer: 2,
            hands: &["8H 3D 4D", "5D", "KD"],
            starter: "2C",
            stock: "7C",
        },
    );
    let mv = play_suit("8H", "S");
    assert_eq!(ok(&mut g, 0, mv.clone()), vec![played(0, &mv), turn_to(1)]);
}

/// Interaction wild_suit × draw_skip (S0 l.39 and l.49): after the 2's
/// penalty the 2 is still the card to match, so the next player may not put
/// an 8 on it either.
#[test]
fn wild_not_on_still_holds_after_the_2s_penalty() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["2H 5C 6C", "9S 9D 9C", "8C KH 2S"],
            starter: "4H",
            stock: "3S 3D 7C 7D",
        },
    );
    ok(&mut g, 0, play("2H"));
    assert_eq!(current(&g), Some(2));
    assert_eq!(legal(&g, 2), ["KH", "2S"]);
    illegal(refused(&mut g, 2, play_suit("8C", "C")));
}

// ----- draw_skip (D4, D28, D1) -------------------------------------------

/// D4, D28; S0 l.49: "Lorsqu'un joueur pose un 2, le joueur suivant devra
/// piocher 2 cartes et passer son tour." Applied at once, in the same move.
#[test]
fn d4_a_2_makes_the_next_player_draw_two_and_lose_the_turn() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["2H 5C 6C", "9S 9D 9C", "KD KS KC"],
            starter: "4H",
            stock: "3S 3D 7C 7D",
        },
    );
    let mv = play("2H");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![
            played(0, &mv),
            drew(1, "3S 3D", DrawReason::Penalty),
            skipped(1, SkipReason::Penalty),
            turn_to(2),
        ]
    );
    assert_eq!(hand(&g, 1), ["9S", "9D", "9C", "3S", "3D"]);
}

/// D4: "the next player plays normally on the 2/joker (the attack is spent)";
/// with two players that next player is the one who played the 2 (S4 l.42
/// "le suivant pioche 2 cartes et ne joue pas, même s'il le pourrait").
#[test]
fn d4_with_two_players_the_player_of_the_2_plays_again_on_it() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 1,
            hands: &["2H 5H 6C", "2S 9D 9C"],
            starter: "4H",
            stock: "3S 3D 7C 7D",
        },
    );
    let mv = play("2H");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![
            played(0, &mv),
            drew(1, "3S 3D", DrawReason::Penalty),
            skipped(1, SkipReason::Penalty),
            turn_to(0),
        ]
    );
    // The attack is spent: nothing pending, the 2H is matched normally.
    assert_eq!(g.round().unwrap().pending, Pending::None);
    assert!(legal(&g, 0).contains(&"5H".to_string()));
    illegal(refused(&mut g, 0, play("6C")));
}

/// D1: "A joker with draw_skip(4) (S0 option, S1) is legal on any card and
/// its player names the suit that follows". S1 l.78: "Le Joker fait piocher
/// 4 cartes au joueur suivant."
#[test]
fn d1_joker_draw_four_goes_on_anything_and_names_a_suit() {
    let mut g = game(
        preset("moderne"),
        Deal {
            dealer: 2,
            hands: &["JK 5C 6C", "9S 9D 9C", "3S 9H KD"],
            starter: "4H",
            stock: "3C 3D 7C 7D 10C",
        },
    );
    bad_choice(refused(&mut g, 0, play("JK")));
    let mv = play_suit("JK", "S");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![
            played(0, &mv),
            drew(1, "3C 3D 7C 7D", DrawReason::Penalty),
            skipped(1, SkipReason::Penalty),
            turn_to(2),
        ]
    );
    assert_eq!(legal(&g, 2), ["3S"]);
}

/// D1 with S0's joker option (S0 l.55): the classique joker also goes on a
/// 2, where an 8 may not (the `wild_not_on` restriction is the 8's).
#[test]
fn d1_classique_joker_option_goes_on_a_2() {
    let mut g = game(
        with_options("classique", json!({"jokers": true})),
        Deal {
            dealer: 2,
            hands: &["JK 8C 6H", "9S 9D 9C", "3S 9H KD"],
            starter: "2D",
            stock: "3C 3D 7C 7D 10C",
        },
    );
    assert_eq!(legal(&g, 0), ["JK:C", "JK:D", "JK:H", "JK:S"]);
    ok(&mut g, 0, play_suit("JK", "H"));
    assert_eq!(hand(&g, 1).len(), 7);
}

// ----- attack_chain (D3, D28) --------------------------------------------

/// A `classique` deal where seat 0 opens with the ace of hearts on seat 1,
/// who holds the ace of spades.
fn ace_attack() -> Game {
    game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["AH 5S 6C", "AS 9S 9D", "KD KC QC"],
            starter: "4H",
            stock: "3S 3D 7C 7D 10C 10D",
        },
    )
}

/// D3; S0 l.43–45: "le joueur 3 devra tirer 4 cartes s'il ne peut pas poser
/// d'As, puis il passera son tour."
#[test]
fn d3_ace_chain_draws_two_per_ace() {
    let mut g = ace_attack();
    let ah = play("AH");
    // D28: the victim may answer, so nothing is drawn yet.
    assert_eq!(
        ok(&mut g, 0, ah.clone()),
        vec![
            played(0, &ah),
            turn(
                1,
                Pending::Attack {
                    count: 1,
                    per_card: 2
                },
                false
            ),
        ]
    );
    let as_ = play("AS");
    assert_eq!(
        ok(&mut g, 1, as_.clone()),
        vec![
            played(1, &as_),
            turn(
                2,
                Pending::Attack {
                    count: 2,
                    per_card: 2
                },
                false
            ),
        ]
    );
    assert_eq!(legal(&g, 2), ["draw"]);
    assert_eq!(
        ok(&mut g, 2, domain::Move::Draw {}),
        vec![drew(2, "3S 3D 7C 7D", DrawReason::Penalty), turn_to(0)]
    );
}

/// D3: "The next player then plays on that ace normally (suit or rank)."
#[test]
fn d3_after_the_chain_the_next_player_plays_on_the_ace_normally() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["5S 6C 7S 9H", "AS 9D 9C", "KD KC QC"],
            starter: "4S",
            stock: "3C 3D 7C 7D 10C 10D",
        },
    );
    ok(&mut g, 0, play("5S"));
    ok(&mut g, 1, play("AS"));
    ok(&mut g, 2, domain::Move::Draw {});
    assert_eq!(g.round().unwrap().pending, Pending::None);
    // On the AS: a spade or an ace; 6C is neither.
    assert_eq!(legal(&g, 0), ["7S"]);
}

/// D3; S0 l.47: "poser un 8 sur un As annule les As." The 8 names a suit.
#[test]
fn d3_an_8_on_a_pending_ace_cancels_the_chain_and_names_a_suit() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["AH 5S 6C", "8S 9S 9D", "KD KC QC"],
            starter: "4H",
            stock: "3S 3D 7C 7D",
        },
    );
    ok(&mut g, 0, play("AH"));
    // D28: the victim sees the attack whatever their hand: an ace, an 8 or draw.
    assert_eq!(legal(&g, 1), ["8S:C", "8S:D", "8S:H", "8S:S", "draw"]);
    illegal(refused(&mut g, 1, play("9D")));
    let mv = play_suit("8S", "D");
    assert_eq!(ok(&mut g, 1, mv.clone()), vec![played(1, &mv), turn_to(2)]);
    assert_eq!(legal(&g, 2), ["KD"]);
}

/// D28: the attack waits for the victim's move, and `draw` is open even to a
/// victim holding an ace (nothing about the hand is revealed).
#[test]
fn d28_an_attack_waits_and_the_victim_may_take_it_holding_an_ace() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["AH 5S 6C", "AS 9S 9D", "KD KC QC"],
            starter: "4H",
            stock: "3S 3D 7C 7D",
        },
    );
    ok(&mut g, 0, play("AH"));
    assert_eq!(legal(&g, 1), ["AS", "draw"]);
    assert_eq!(
        ok(&mut g, 1, domain::Move::Draw {}),
        vec![drew(1, "3S 3D", DrawReason::Penalty), turn_to(2)]
    );
}

// ----- freeze (D12) --------------------------------------------------------

fn frozen_757() -> domain::Game {
    game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &["AH 5H 6C", "AS 8D JK KH 5S", "AD 9C 9D"],
            starter: "4H",
            stock: "AC KC 3D",
        },
    )
}

/// D12; S4 l.54–55: "As : jouer un autre As (ne débloque pas la situation),
/// ou dégeler la pile par le dépôt d'un 8 […] sinon rien d'autre (sauf joker
/// qui sert d'As ou de 8)".
#[test]
fn d12_an_ace_freezes_only_ace_8_or_joker_as_one_is_legal() {
    let mut g = frozen_757();
    let mv = play("AH");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![played(0, &mv), turn(1, Pending::None, true)]
    );
    let moves = legal(&g, 1);
    // AS; 8D × 4 suits; the joker as each ace (4) or each 8 × 4 suits (16); draw.
    assert_eq!(moves.len(), 1 + 4 + 4 + 16 + 1, "{moves:?}");
    assert!(moves.contains(&"JK=AC".to_string()));
    assert!(moves.contains(&"JK=8C:H".to_string()));
    // A heart is not enough on a frozen pile, nor a joker standing for one.
    illegal(refused(&mut g, 1, play("KH")));
    illegal(refused(&mut g, 1, play_as("JK", "KH", None)));
}

/// D12: "an ace (still frozen)".
#[test]
fn d12_another_ace_keeps_the_pile_frozen() {
    let mut g = frozen_757();
    ok(&mut g, 0, play("AH"));
    let mv = play("AS");
    assert_eq!(
        ok(&mut g, 1, mv.clone()),
        vec![played(1, &mv), turn(2, Pending::None, true)]
    );
    // Seat 2 holds AD and two nines: only the ace (or a voluntary draw).
    assert_eq!(legal(&g, 2), ["AD", "draw"]);
}

/// D12: "an 8 (unfreezes, names a suit)".
#[test]
fn d12_an_8_unfreezes_and_names_a_suit() {
    let mut g = frozen_757();
    ok(&mut g, 0, play("AH"));
    let mv = play_suit("8D", "C");
    assert_eq!(
        ok(&mut g, 1, mv.clone()),
        vec![played(1, &mv), turn(2, Pending::None, false)]
    );
    assert_eq!(legal(&g, 2), ["9C", "draw"]);
}

/// D12 × substitute (D13): a joker standing for an 8 unfreezes too.
#[test]
fn d12_a_joker_standing_for_an_8_unfreezes() {
    let mut g = frozen_757();
    ok(&mut g, 0, play("AH"));
    let mv = play_as("JK", "8C", Some("D"));
    assert_eq!(
        ok(&mut g, 1, mv.clone()),
        vec![played(1, &mv), turn(2, Pending::None, false)]
    );
    assert_eq!(legal(&g, 2), ["AD", "9D", "draw"]);
}

/// D12: "a player with none draws one card (and may play it if it is one
/// of those)".
#[test]
fn d12_a_player_without_one_draws_and_may_play_a_drawn_ace() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &["AH 5H 6C", "KH 5S 9S", "AD 9C 9D"],
            starter: "4H",
            stock: "AC KC",
        },
    );
    ok(&mut g, 0, play("AH"));
    assert_eq!(legal(&g, 1), ["draw"]);
    assert_eq!(
        ok(&mut g, 1, domain::Move::Draw {}),
        vec![
            drew(1, "AC", DrawReason::Draw),
            turn(1, Pending::Drawn { card: card("AC") }, true),
        ]
    );
    assert_eq!(legal(&g, 1), ["AC", "pass"]);
    ok(&mut g, 1, play("AC"));
    assert!(g.round().unwrap().frozen);
}

/// D12: a drawn card that is not an ace, an 8 or a joker ends the turn, and
/// the pile stays frozen.
#[test]
fn d12_a_drawn_card_that_does_not_unfreeze_ends_the_turn() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &["AH 5H 6C", "KH 5S 9S", "AD 9C 9D"],
            starter: "4H",
            stock: "KC AC",
        },
    );
    ok(&mut g, 0, play("AH"));
    assert_eq!(
        ok(&mut g, 1, domain::Move::Draw {}),
        vec![
            drew(1, "KC", DrawReason::Draw),
            turn(2, Pending::None, true)
        ]
    );
}

// ----- skip ------------------------------------------------------------------

/// S1 l.94–96: "Le Valet fait sauter le tour du joueur suivant."
#[test]
fn skip_a_jack_makes_the_next_player_lose_the_turn() {
    let mut g = game(
        preset("moderne"),
        Deal {
            dealer: 2,
            hands: &["JH 5C 6C", "9H 9D 9C", "KH KS KC"],
            starter: "4H",
            stock: "3S",
        },
    );
    let mv = play("JH");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![played(0, &mv), skipped(1, SkipReason::Skip), turn_to(2)]
    );
}

/// Edge: with two players the skipped seat is the only other one, so the
/// player plays again.
#[test]
fn skip_with_two_players_the_player_plays_again() {
    let mut g = game(
        preset("moderne"),
        Deal {
            dealer: 1,
            hands: &["JH 5C 6C", "9H 9D 9C"],
            starter: "4H",
            stock: "3S",
        },
    );
    let mv = play("JH");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![played(0, &mv), skipped(1, SkipReason::Skip), turn_to(0)]
    );
}

/// S0 l.59 (option): "Lorsqu'un joueur pose un 7, le joueur suivant passe
/// son tour." × reverse (S0 l.51): the skip follows the reversed direction.
#[test]
fn skip_sevens_option_follows_a_reversed_direction() {
    let mut g = game(
        with_options("classique", json!({"sevens_skip": true})),
        Deal {
            dealer: 3,
            hands: &["JH 5C 6C", "9H 9D 9C", "KH KS KC", "7H 3D 3C"],
            starter: "4H",
            stock: "3S",
        },
    );
    let jh = play("JH");
    assert_eq!(
        ok(&mut g, 0, jh.clone()),
        vec![
            played(0, &jh),
            Event::DirectionChanged {
                direction: Direction::Counterclockwise
            },
            turn_to(3),
        ]
    );
    let seven = play("7H");
    assert_eq!(
        ok(&mut g, 3, seven.clone()),
        vec![played(3, &seven), skipped(2, SkipReason::Skip), turn_to(1)]
    );
}

/// Without the option a 7 is an ordinary card (S0 lists it under "Autres
/// cartes spéciales", an option).
#[test]
fn skip_sevens_are_plain_without_the_option() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["7H 5C 6C", "9H 9D 9C", "KH KS KC"],
            starter: "4H",
            stock: "3S",
        },
    );
    let mv = play("7H");
    assert_eq!(ok(&mut g, 0, mv.clone()), vec![played(0, &mv), turn_to(1)]);
}

// ----- reverse and two_player_reverse (D6, D7) -------------------------------

/// D6; S0 l.51: "Lorsqu'un joueur pose un valet, le sens du jeu s'inverse."
#[test]
fn d6_classique_jack_reverses_with_three_players() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["JH 5C 6C", "9H 9D 9C", "KH KS KC"],
            starter: "4H",
            stock: "3S",
        },
    );
    let mv = play("JH");
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
    // And back again.
    let mv = play("KH");
    ok(&mut g, 2, mv);
    assert_eq!(current(&g), Some(1));
}

/// D6; S0 l.51: "(Non applicable pour 2 joueurs)": nothing happens.
#[test]
fn d6_classique_jack_does_nothing_with_two_players() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 1,
            hands: &["JH 5C 6C", "9H 9D 9C"],
            starter: "4H",
            stock: "3S",
        },
    );
    let mv = play("JH");
    assert_eq!(ok(&mut g, 0, mv.clone()), vec![played(0, &mv), turn_to(1)]);
    assert_eq!(g.round().unwrap().direction, Direction::Clockwise);
}

/// D7; S1 l.105: "à 2 joueurs, l'As agit comme un Valet (il fait sauter)".
#[test]
fn d7_moderne_ace_with_two_players_lets_the_player_play_again() {
    let mut g = game(
        preset("moderne"),
        Deal {
            dealer: 1,
            hands: &["AH 5C 6C", "9H 9D 9C"],
            starter: "4H",
            stock: "3S",
        },
    );
    let mv = play("AH");
    assert_eq!(ok(&mut g, 0, mv.clone()), vec![played(0, &mv), turn_to(0)]);
}

/// D7 "unless two_player_reverse = none" (S1 l.184 "As = inversion stricte"):
/// the `two_player_ace` option.
#[test]
fn d7_two_player_ace_none_option_passes_the_turn() {
    let mut g = game(
        with_options("moderne", json!({"two_player_ace": "none"})),
        Deal {
            dealer: 1,
            hands: &["AH 5C 6C", "9H 9D 9C"],
            starter: "4H",
            stock: "3S",
        },
    );
    let mv = play("AH");
    assert_eq!(ok(&mut g, 0, mv.clone()), vec![played(0, &mv), turn_to(1)]);
}

/// S1 l.100: "L'As inverse le sens de jeu" with more than two players;
/// × skip: the jack then skips counter-clockwise.
#[test]
fn reverse_moderne_ace_then_jack_skips_counterclockwise() {
    let mut g = game(
        preset("moderne"),
        Deal {
            dealer: 3,
            hands: &["AH 5C 6C", "9H 9D 9C", "KH KS KC", "JH 3D 3C"],
            starter: "4H",
            stock: "3S",
        },
    );
    ok(&mut g, 0, play("AH"));
    assert_eq!(current(&g), Some(3));
    let mv = play("JH");
    assert_eq!(
        ok(&mut g, 3, mv.clone()),
        vec![played(3, &mv), skipped(2, SkipReason::Skip), turn_to(1)]
    );
}

// ----- pass_across (D14) -----------------------------------------------------

fn seats757(n: usize) -> Vec<&'static str> {
    let all = ["6H 5C 7C", "9H 9D 9C", "KH KS KC", "3D 3C 3S", "10H 4C 4D"];
    all[..n].to_vec()
}

/// D14; S4 l.44: "6 : la main passe en face de la table". Four players:
/// seat 0 → seat 2.
#[test]
fn d14_a_6_passes_the_turn_across_the_table() {
    let hands = seats757(4);
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 3,
            hands: &hands,
            starter: "4H",
            stock: "3H",
        },
    );
    let mv = play("6H");
    assert_eq!(ok(&mut g, 0, mv.clone()), vec![played(0, &mv), turn_to(2)]);
}

/// D14: "seat (s + ⌊n/2⌋)": with five players, seat 0 → seat 2.
#[test]
fn d14_with_five_players_the_turn_moves_two_seats() {
    let hands = seats757(5);
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 4,
            hands: &hands,
            starter: "4H",
            stock: "3H",
        },
    );
    ok(&mut g, 0, play("6H"));
    assert_eq!(current(&g), Some(2));
}

/// D14: "with 2 or 3 players this is the ordinary next seat".
#[test]
fn d14_with_three_players_it_is_the_next_seat() {
    let hands = seats757(3);
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &hands,
            starter: "4H",
            stock: "3H",
        },
    );
    ok(&mut g, 0, play("6H"));
    assert_eq!(current(&g), Some(1));
}

/// D14 "counted in the current direction" × reverse (S4 l.48): after a 10,
/// seat 4 of five passes counter-clockwise to seat 2.
#[test]
fn d14_pass_across_counts_in_the_current_direction() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 4,
            hands: &["10H 5C 7C", "9H 9D 9C", "KH KS KC", "3D 3C 3S", "6H 4C 4D"],
            starter: "4H",
            stock: "3H",
        },
    );
    ok(&mut g, 0, play("10H"));
    assert_eq!(current(&g), Some(4));
    let mv = play("6H");
    assert_eq!(ok(&mut g, 4, mv.clone()), vec![played(4, &mv), turn_to(2)]);
}

// ----- must_replay (D5, D33) -------------------------------------------------

fn tens() -> domain::Rules {
    with_options("classique", json!({"tens_replay": true}))
}

/// D5; S0 l.57: "Un joueur qui pose un dix doit obligatoirement rejouer."
/// D33: while the obligation holds only cards legal on the ten; no draw.
#[test]
fn d5_a_ten_must_be_followed_by_a_card_legal_on_it() {
    let mut g = game(
        tens(),
        Deal {
            dealer: 2,
            hands: &["10H 5H 6C KD", "9S 9D 9C", "KH KS KC"],
            starter: "4H",
            stock: "3S 3D",
        },
    );
    let mv = play("10H");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![
            played(0, &mv),
            turn(0, Pending::MustReplay { penalty: 2 }, false)
        ]
    );
    assert_eq!(legal(&g, 0), ["5H"]);
    assert!(matches!(
        refused(&mut g, 0, domain::Move::Draw {}),
        RuleError::CannotDraw(_)
    ));
    illegal(refused(&mut g, 0, play("KD")));
    let mv = play("5H");
    assert_eq!(ok(&mut g, 0, mv.clone()), vec![played(0, &mv), turn_to(1)]);
}

/// D5: "a ten again repeats the obligation".
#[test]
fn d5_a_ten_on_a_ten_repeats_the_obligation() {
    let mut g = game(
        tens(),
        Deal {
            dealer: 2,
            hands: &["10H 10C 5C KD", "9S 9D 9C", "KH KS KC"],
            starter: "4H",
            stock: "3S 3D",
        },
    );
    ok(&mut g, 0, play("10H"));
    let mv = play("10C");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![
            played(0, &mv),
            turn(0, Pending::MustReplay { penalty: 2 }, false)
        ]
    );
    ok(&mut g, 0, play("5C"));
    assert_eq!(current(&g), Some(1));
}

/// D5, D33; S0 l.57: "Dans le cas contraire, il tire 2 cartes": draw is the
/// only move when nothing is legal on the ten, and it ends the turn.
#[test]
fn d33_no_card_legal_on_the_ten_draws_two_and_ends_the_turn() {
    let mut g = game(
        tens(),
        Deal {
            dealer: 2,
            hands: &["10H 6C KD", "9S 9D 9C", "KH KS KC"],
            starter: "4H",
            stock: "3S 3D 7C",
        },
    );
    ok(&mut g, 0, play("10H"));
    assert_eq!(legal(&g, 0), ["draw"]);
    assert_eq!(
        ok(&mut g, 0, domain::Move::Draw {}),
        vec![drew(0, "3S 3D", DrawReason::Penalty), turn_to(1)]
    );
}

/// D5: "A ten that is the last card ends the round."
#[test]
fn d5_a_ten_as_the_last_card_ends_the_round() {
    let mut g = game(
        tens(),
        Deal {
            dealer: 2,
            hands: &["10H", "9S 9D 9C", "KH KS KC"],
            starter: "4H",
            stock: "3S 3D 7C",
        },
    );
    let events = ok(&mut g, 0, play("10H"));
    assert_eq!(
        kinds(&events)[..4],
        [
            "card_played",
            "player_went_out",
            "round_ended",
            "round_started"
        ]
    );
    assert_eq!(g.history()[0].out_order, vec![0]);
}

/// D5 × draw_skip: the replayed card keeps its own effect (a 2 after a ten).
#[test]
fn d5_a_2_replayed_on_the_ten_makes_the_next_player_draw() {
    let mut g = game(
        tens(),
        Deal {
            dealer: 2,
            hands: &["10H 2H 5C", "9S 9D 9C", "KH KS KC"],
            starter: "4H",
            stock: "3S 3D 7C",
        },
    );
    ok(&mut g, 0, play("10H"));
    let mv = play("2H");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![
            played(0, &mv),
            drew(1, "3S 3D", DrawReason::Penalty),
            skipped(1, SkipReason::Penalty),
            turn_to(2),
        ]
    );
}

// ----- may_replay (D11) ------------------------------------------------------

/// D11; S4 l.50: "dame : permet de rejouer éventuellement une carte (qui
/// respecte la règle §6-) si on le désire": one more card, or pass; no draw.
#[test]
fn d11_a_queen_allows_one_more_card_or_a_pass() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &["QH 5H 7C 9D", "9S 9C 3C", "KH KS KC"],
            starter: "4H",
            stock: "3S",
        },
    );
    let mv = play("QH");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![played(0, &mv), turn(0, Pending::MayReplay, false)]
    );
    assert_eq!(legal(&g, 0), ["5H", "pass"]);
    assert!(matches!(
        refused(&mut g, 0, domain::Move::Draw {}),
        RuleError::CannotDraw(_)
    ));
    assert_eq!(
        ok(&mut g, 0, domain::Move::Pass {}),
        vec![Event::TurnPassed { seat: 0 }, turn_to(1)]
    );
}

/// D11: "(a queen again allows another)"; a non-queen ends the turn.
#[test]
fn d11_a_queen_on_a_queen_allows_another() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &["QH QC 7C 9D", "9S 9C 3C", "KH KS KC"],
            starter: "4H",
            stock: "3S",
        },
    );
    ok(&mut g, 0, play("QH"));
    let mv = play("QC");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![played(0, &mv), turn(0, Pending::MayReplay, false)]
    );
    let mv = play("7C");
    assert_eq!(ok(&mut g, 0, mv.clone()), vec![played(0, &mv), turn_to(1)]);
}

/// D11; S4 l.51–52: "un joueur ne peut pas finir au 1er tour qu'il joue
/// (poser ses 5 cartes à la suite)".
#[test]
fn d11_in_a_first_turn_the_queen_chain_may_not_empty_the_hand() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &["QH 5H", "9S 9C 3C", "KH KS KC"],
            starter: "4H",
            stock: "3S",
        },
    );
    ok(&mut g, 0, announced(play("QH")));
    illegal(refused(&mut g, 0, play("5H")));
    assert_eq!(legal(&g, 0), ["pass"]);
}

/// D11: after a first turn, a queen chain may take a player out.
#[test]
fn d11_after_the_first_turn_a_queen_chain_may_go_out() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 1,
            hands: &["3H QH 5H", "9H 9C 3C"],
            starter: "4H",
            stock: "3S 7D 7S",
        },
    );
    ok(&mut g, 0, play("3H"));
    ok(&mut g, 1, play("9H"));
    ok(&mut g, 0, announced(play("QH")));
    let events = ok(&mut g, 0, play("5H"));
    assert_eq!(
        kinds(&events)[..3],
        ["card_played", "player_went_out", "round_ended"]
    );
}

/// D11 × draw_skip: the extra card keeps its effect.
#[test]
fn d11_a_2_after_a_queen_makes_the_next_player_draw() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &["QH 2H 7C 9D", "9S 9C 3C", "KH KS KC"],
            starter: "4H",
            stock: "3S 3D",
        },
    );
    ok(&mut g, 0, play("QH"));
    let mv = play("2H");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![
            played(0, &mv),
            drew(1, "3S 3D", DrawReason::Penalty),
            skipped(1, SkipReason::Penalty),
            turn_to(2),
        ]
    );
}

// ----- substitute (D13, D29) -------------------------------------------------

/// D13; S4 l.57–59: "Joker : quand il est joué il remplace la carte désirée
/// dans la mesure où la règle générale §6- est respectée". It takes on the
/// named card's effect: a joker as 2H makes the next player draw two.
#[test]
fn d13_a_joker_stands_for_a_legal_card_and_takes_its_effect() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &["JK 9C 5D", "9S 9D 3C", "KH KS KC"],
            starter: "4H",
            stock: "3S 3D",
        },
    );
    let mv = play_as("JK", "2H", None);
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![
            played(0, &mv),
            drew(1, "3S 3D", DrawReason::Penalty),
            skipped(1, SkipReason::Penalty),
            turn_to(2),
        ]
    );
}

/// D13: the named card must be legal on the top card; D29: the joker must
/// name one, and not a joker.
#[test]
fn d13_a_joker_must_name_a_legal_card() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &["JK 9C 5D", "9S 9D 3C", "KH KS KC"],
            starter: "4H",
            stock: "3S 3D",
        },
    );
    illegal(refused(&mut g, 0, play_as("JK", "5C", None)));
    bad_choice(refused(&mut g, 0, play("JK")));
    bad_choice(refused(&mut g, 0, play_as("JK", "JK", None)));
    bad_choice(refused(&mut g, 0, play_as("JK", "8C", None)));
    bad_choice(refused(&mut g, 0, play_as("JK", "5H", Some("S"))));
}

/// D29: "`legal_moves` lists one entry per possible choice": on 4H, any
/// heart but the 8 (12), the 8H with each suit (4), 4C 4D 4S (3), and the
/// other 8s with each suit (12): 31.
#[test]
fn d29_legal_moves_list_the_joker_once_per_named_card() {
    let g = game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &["JK 9C 5D", "9S 9D 3C", "KH KS KC"],
            starter: "4H",
            stock: "3S 3D",
        },
    );
    let moves = legal(&g, 0);
    assert_eq!(moves.iter().filter(|m| m.starts_with("JK")).count(), 31);
    assert!(moves.contains(&"JK=4S".to_string()));
    assert!(moves.contains(&"JK=8S:D".to_string()));
    assert!(!moves.contains(&"JK=5S".to_string()));
    assert_eq!(moves.last().map(String::as_str), Some("draw"));
}

/// D13: "it then counts as that card for matching": after JK as 9H, a 9 or a
/// heart follows.
#[test]
fn d13_the_joker_counts_as_the_named_card_for_matching() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &["JK 9C 5D", "9S 5H KC", "KH KS KC"],
            starter: "9H",
            stock: "3S 3D",
        },
    );
    ok(&mut g, 0, play_as("JK", "9H", None));
    assert_eq!(legal(&g, 1), ["9S", "5H", "draw"]);
}

/// D13 × wild_suit (D29 "plus `suit` when it stands for an 8"): the suit it
/// names is the one to follow.
#[test]
fn d29_a_joker_standing_for_an_8_names_the_suit() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &["JK 9C 5D", "9S 5H KC", "KH KS KC"],
            starter: "4H",
            stock: "3S 3D",
        },
    );
    ok(&mut g, 0, play_as("JK", "8C", Some("S")));
    assert_eq!(legal(&g, 1), ["9S", "draw"]);
}

/// D13 × may_replay: a joker standing for a queen lets its player replay.
#[test]
fn d13_a_joker_as_a_queen_may_replay() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &["JK 5H 5D", "9S 5C KC", "KH KS KC"],
            starter: "4H",
            stock: "3S 3D",
        },
    );
    let mv = play_as("JK", "QH", None);
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![played(0, &mv), turn(0, Pending::MayReplay, false)]
    );
    assert_eq!(legal(&g, 0), ["5H!", "5H", "pass"]);
}

// ----- stacking (D25), joker_counter ----------------------------------------

fn stacking() -> domain::Game {
    game(
        with_options("moderne", json!({"stacking": "draw_cards"})),
        Deal {
            dealer: 2,
            hands: &["2H 5C 6C", "2S 5H 9D", "JK 3C 4C"],
            starter: "4H",
            stock: "3S 3D 7C 7D 10C 10D KS KD",
        },
    )
}

/// D25, D28; S1 l.181: "Empilement des +2 et +4 : autoriser qu'un joueur
/// réponde par un 2 ou un Joker pour « renvoyer » la pioche au suivant."
#[test]
fn d25_a_2_answers_a_pending_2_and_passes_the_sum_on() {
    let mut g = stacking();
    let mv = play("2H");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![played(0, &mv), turn(1, Pending::Draw { total: 2 }, false)]
    );
    let mv = play("2S");
    assert_eq!(
        ok(&mut g, 1, mv.clone()),
        vec![played(1, &mv), turn(2, Pending::Draw { total: 4 }, false)]
    );
    assert_eq!(
        ok(&mut g, 2, domain::Move::Draw {}),
        vec![drew(2, "3S 3D 7C 7D", DrawReason::Penalty), turn_to(0)]
    );
}

/// D25: only a 2 or a joker answers; a heart does not, though it matches.
#[test]
fn d25_only_a_draw_card_answers_a_pending_draw() {
    let mut g = stacking();
    ok(&mut g, 0, play("2H"));
    assert_eq!(legal(&g, 1), ["2S", "draw"]);
    illegal(refused(&mut g, 1, play("5H")));
}

/// D25 × D1: a joker answers a pending 2 (+4) and names a suit.
#[test]
fn d25_a_joker_answers_a_pending_2_and_adds_four() {
    let mut g = stacking();
    ok(&mut g, 0, play("2H"));
    ok(&mut g, 1, play("2S"));
    assert_eq!(legal(&g, 2), ["JK:C", "JK:D", "JK:H", "JK:S", "draw"]);
    let mv = play_suit("JK", "C");
    assert_eq!(
        ok(&mut g, 2, mv.clone()),
        vec![played(2, &mv), turn(0, Pending::Draw { total: 8 }, false)]
    );
}

/// D25: "`joker_counter` alone allows only a joker on a joker" (S1 l.82).
#[test]
fn d25_joker_counter_lets_only_a_joker_answer_a_joker() {
    let mut g = game(
        with_options("moderne", json!({"joker_counter": true})),
        Deal {
            dealer: 2,
            hands: &["JK 2H 5C", "JK 2S 9D", "3C 4C 5D"],
            starter: "4H",
            stock: "3S 3D 7C 7D 10C 10D KS KD",
        },
    );
    ok(&mut g, 0, play_suit("JK", "S"));
    assert_eq!(legal(&g, 1), ["JK:C", "JK:D", "JK:H", "JK:S", "draw"]);
    illegal(refused(&mut g, 1, play("2S")));
    let mv = play_suit("JK", "D");
    assert_eq!(
        ok(&mut g, 1, mv.clone()),
        vec![played(1, &mv), turn(2, Pending::Draw { total: 8 }, false)]
    );
}

/// D28 × joker_counter: without stacking a 2 still acts at once.
#[test]
fn d28_with_joker_counter_a_2_still_applies_at_once() {
    let mut g = game(
        with_options("moderne", json!({"joker_counter": true})),
        Deal {
            dealer: 2,
            hands: &["JK 2H 5C", "JK 2S 9D", "3C 4C 5D"],
            starter: "4H",
            stock: "3S 3D 7C",
        },
    );
    let mv = play("2H");
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![
            played(0, &mv),
            drew(1, "3S 3D", DrawReason::Penalty),
            skipped(1, SkipReason::Penalty),
            turn_to(2),
        ]
    );
}

// ----- special_finish (D26, D34) ---------------------------------------------

fn no_special_finish() -> domain::Rules {
    with_options("moderne", json!({"special_finish": false}))
}

/// D26, D34; S1 l.183: "certaines tables interdisent de finir sur un Joker
/// ou un 8": a single effect card cannot be played; the player must draw,
/// and may then play the drawn card (it is not the last).
#[test]
fn d34_a_single_effect_card_cannot_be_played_so_the_player_draws() {
    let mut g = game(
        no_special_finish(),
        Deal {
            dealer: 2,
            hands: &["8H", "9S 9D 9C", "KH KS KC"],
            starter: "4H",
            stock: "5H 6C",
        },
    );
    assert_eq!(legal(&g, 0), ["draw"]);
    illegal(refused(&mut g, 0, play_suit("8H", "H")));
    assert_eq!(
        ok(&mut g, 0, domain::Move::Draw {}),
        vec![
            drew(0, "5H", DrawReason::Draw),
            turn(0, Pending::Drawn { card: card("5H") }, false),
        ]
    );
    assert_eq!(legal(&g, 0), ["5H!", "5H", "pass"]);
}

/// D34 × draw_skip: a drawn effect card may be played as it is not the last.
#[test]
fn d34_a_drawn_effect_card_may_be_played_because_it_is_not_the_last() {
    let mut g = game(
        no_special_finish(),
        Deal {
            dealer: 2,
            hands: &["JH", "9S 9D 9C", "KH KS KC"],
            starter: "4H",
            stock: "2H 3S 3D",
        },
    );
    ok(&mut g, 0, domain::Move::Draw {});
    let mv = announced(play("2H"));
    assert_eq!(
        ok(&mut g, 0, mv.clone()),
        vec![
            played(0, &mv),
            drew(1, "3S 3D", DrawReason::Penalty),
            skipped(1, SkipReason::Penalty),
            turn_to(2),
        ]
    );
}

/// D34: "only the last card is restricted": playing down to an effect card
/// is fine.
#[test]
fn d34_a_player_may_keep_an_effect_card_as_the_last() {
    let mut g = game(
        no_special_finish(),
        Deal {
            dealer: 2,
            hands: &["8H 5H", "9S 9D 9C", "KH KS KC"],
            starter: "4H",
            stock: "2H 3S 3D",
        },
    );
    assert_eq!(
        legal(&g, 0),
        ["8H:C!", "8H:C", "8H:D!", "8H:D", "8H:H!", "8H:H", "8H:S!", "8H:S", "5H!", "5H"]
    );
    ok(&mut g, 0, announced(play("5H")));
    assert_eq!(hand(&g, 0), ["8H"]);
}

/// D26: by default (`special_finish` = true, S1) an 8 may be the last card.
#[test]
fn d26_by_default_an_8_may_end_the_round() {
    let mut g = game(
        preset("moderne"),
        Deal {
            dealer: 2,
            hands: &["8H", "9S 9D 9C", "KH KS KC"],
            starter: "4H",
            stock: "5H 6C",
        },
    );
    let events = ok(&mut g, 0, play_suit("8H", "S"));
    assert_eq!(
        kinds(&events)[..3],
        ["card_played", "player_went_out", "round_ended"]
    );
}

/// D3 edge: once a chain is paid, a new ace starts a new chain of one.
#[test]
fn d3_a_new_ace_after_a_paid_chain_starts_a_chain_of_one() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["AH 5S 6C", "9S 9D 9C", "AD KC QC"],
            starter: "4H",
            stock: "3S 3D 7C 7D",
        },
    );
    ok(&mut g, 0, play("AH"));
    ok(&mut g, 1, domain::Move::Draw {});
    let mv = play("AD");
    assert_eq!(
        ok(&mut g, 2, mv.clone()),
        vec![
            played(2, &mv),
            turn(
                0,
                Pending::Attack {
                    count: 1,
                    per_card: 2
                },
                false
            ),
        ]
    );
}

// ----- D35: `wild_not_on` is the wild suit's restriction only ----------------

/// D35: on a 2, classique's 8 (`wild_suit`, `wild_not_on: ["2"]`) is
/// refused, while the joker (`draw_skip(4)`) stays legal (D1).
#[test]
fn d35_wild_not_on_refuses_the_eight_on_a_two_but_not_the_joker() {
    let mut g = game(
        with_options("classique", json!({"jokers": true})),
        Deal {
            dealer: 2,
            hands: &["8S JK 6H", "9S 9D 9C", "3S 9H KD"],
            starter: "2D",
            stock: "3C 3D 7C 7D 10C",
        },
    );
    assert!(
        legal(&g, 0).iter().all(|m| !m.starts_with("8S")),
        "{:?}",
        legal(&g, 0)
    );
    assert!(legal(&g, 0).iter().any(|m| m.starts_with("JK")));
    assert!(matches!(
        refused(&mut g, 0, play_suit("8S", "H")),
        RuleError::Illegal { .. }
    ));
}

/// D35, edge: on anything but a 2 the same 8 names its suit as ever.
#[test]
fn d35_the_eight_is_wild_on_anything_else() {
    let mut g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["8S 6H 5C", "9S 9D 9C", "3S 9H KD"],
            starter: "KD",
            stock: "3C 3D 7C 7D 10C",
        },
    );
    assert!(
        legal(&g, 0).contains(&"8S:H".to_owned()),
        "{:?}",
        legal(&g, 0)
    );
    ok(&mut g, 0, play_suit("8S", "H"));
}

// ----- D38: the timeout move meets the effects ---------------------------------

fn time_out(g: &mut domain::Game, seat: usize) -> Vec<Event> {
    let mut events = Vec::new();
    g.execute(&domain::Command::TimeOut { seat }, &mut rng(1), &mut events)
        .expect("the seat on turn times out");
    events
}

/// A timeout's events: `seat` drew a penalty of `n` cards, and played none.
fn drew_a_penalty_and_played_nothing(events: &[Event], seat: usize, n: usize) {
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::CardsDrawn { seat: s, cards, reason: DrawReason::Penalty } if *s == seat && cards.len() == n
        )),
        "{events:?}"
    );
    assert!(!events.iter().any(|e| matches!(e, Event::CardPlayed(_))));
}

/// D38 with D5/D33: under a ten's obligation the timeout draws the ten's
/// penalty (it may not play the card it holds), and the turn ends.
#[test]
fn d38_a_timeout_under_a_tens_obligation_draws_its_penalty() {
    let mut g = game(
        tens(),
        Deal {
            dealer: 2,
            hands: &["10H 5H 6C KD", "9S 9D 9C", "KH KS KC"],
            starter: "4H",
            stock: "3S 3D 7C 7D",
        },
    );
    ok(&mut g, 0, play("10H"));
    drew_a_penalty_and_played_nothing(&time_out(&mut g, 0), 0, 2);
    assert_eq!(current(&g), Some(1));
}

/// D38 with D3: a timeout under an attack takes the whole penalty, even
/// with a card that could answer it in hand.
#[test]
fn d38_a_timeout_under_an_attack_takes_the_whole_penalty() {
    let mut g = ace_attack();
    ok(&mut g, 0, play("AH"));
    drew_a_penalty_and_played_nothing(&time_out(&mut g, 1), 1, 2);
    assert_ne!(current(&g), Some(1));
}

/// D37 with D28: under an attack the seat that must answer it is the seat
/// on turn, the one whose deadline runs; the attacker's has stopped.
#[test]
fn d37_the_seat_under_an_attack_is_the_one_that_must_act() {
    let mut g = ace_attack();
    assert_eq!(current(&g), Some(0));
    let events = ok(&mut g, 0, play("AH"));
    assert!(
        matches!(g.round().unwrap().pending, Pending::Attack { .. }),
        "an attack is pending"
    );
    assert_eq!(current(&g), Some(1));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::TurnStarted { seat: 1, .. })),
        "a new turn, so a new deadline: {events:?}"
    );
}

/// D38 with D11: after a queen the timeout passes (no draw).
#[test]
fn d38_a_timeout_after_a_queen_passes() {
    let mut g = game(
        preset("757"),
        Deal {
            dealer: 2,
            hands: &["QH 5H 6C KD 9C", "9S 9D 4C 4D 5D", "KH KS KC 3C 3H"],
            starter: "4H",
            stock: "3S 3D 7C 7D 10C 10D",
        },
    );
    ok(&mut g, 0, play("QH"));
    let events = time_out(&mut g, 0);
    assert!(
        matches!(events.first(), Some(Event::TurnPassed { seat: 0 })),
        "{events:?}"
    );
    assert!(!events.iter().any(|e| matches!(e, Event::CardsDrawn { .. })));
}
