//! docs/RULES.md §5: every preset's knob values and options, and §3's refusal of
//! impossible combinations (`RulesError`), options of the wrong type or of
//! another preset, and the override of any §3 knob by its name.

use crate::support::*;
use domain::{Game, Preset, RulesError};
use serde_json::{json, Value};

fn knobs(rules: domain::Rules) -> Value {
    serde_json::to_value(rules).unwrap()
}

/// Asserts every key of `expected` has that value in the rules.
fn assert_knobs(rules: domain::Rules, expected: Value) {
    let v = knobs(rules);
    for (k, want) in expected.as_object().unwrap() {
        assert_eq!(&v[k], want, "knob {k}");
    }
}

fn options(id: &str, options: Value) -> Result<domain::Rules, RulesError> {
    Preset::from_id(id)
        .unwrap()
        .with_options(options.as_object().unwrap())
}

fn bad_option(id: &str, opts: Value, option: &str) {
    match options(id, opts.clone()) {
        Err(RulesError::BadOption { option: o, .. }) => assert_eq!(o, option, "{opts}"),
        other => panic!("{id} {opts}: expected a bad option, got {other:?}"),
    }
}

fn invalid(id: &str, opts: Value) -> String {
    match options(id, opts.clone()) {
        Err(RulesError::Invalid(reason)) => reason,
        other => panic!("{id} {opts}: expected Invalid, got {other:?}"),
    }
}

// ----- §5 the table of presets --------------------------------------------------

/// §5 `classique` (S0): french52, 1 deck (2 above 5 players, S0 l.9),
/// 2–10, 7 cards (l.13), redraw_special (l.17), 8 wild not on a 2 (l.39),
/// 2 +2 (l.49), aces attack ×2 (l.43–45), jacks reverse, 2p none (l.51),
/// penalty 2 (l.63), lowest wins at 500 (D18).
#[test]
fn s0_classique_knobs() {
    assert_knobs(
        preset("classique"),
        json!({
            "deck": "french52",
            "decks": {"per_players": 5},
            "players": {"min": 2, "max": 10},
            "deal": {"fixed": 7},
            "starter": "redraw_special",
            "draw": "draw_then_may_play",
            "voluntary_draw": false,
            "effects": {"8": "wild_suit", "2": {"draw_skip": 2}, "A": {"attack_chain": 2}, "J": "reverse"},
            "wild_not_on": ["2"],
            "stacking": "none",
            "joker_counter": false,
            "special_finish": true,
            "two_player_reverse": "none",
            "announce": {"word": "Carte !", "penalty": 2, "penalty_skips_turn": false},
            "scoring": {"hand_points": {"finisher_bonus": 0}},
            "end": {"lowest_wins_at": 500},
            "rounds": null,
        }),
    );
}

/// §5 `classique` options (S0 l.55–59): jokers (french54, +4), tens
/// (must_replay 2), sevens (skip).
#[test]
fn s0_classique_options() {
    assert_knobs(
        options(
            "classique",
            json!({"jokers": true, "tens_replay": true, "sevens_skip": true}),
        )
        .unwrap(),
        json!({
            "deck": "french54",
            "effects": {
                "8": "wild_suit", "2": {"draw_skip": 2}, "A": {"attack_chain": 2}, "J": "reverse",
                "JK": {"draw_skip": 4}, "10": {"must_replay": 2}, "7": "skip",
            },
        }),
    );
}

/// §5 `moderne` (S1): french54, 2–5 (l.12), 7 cards, 8 wild, joker +4, 2 +2,
/// J skip, A reverse (2p skip, l.105), lowest wins at 500 (l.156).
#[test]
fn s1_moderne_knobs() {
    assert_knobs(
        preset("moderne"),
        json!({
            "deck": "french54",
            "decks": {"fixed": 1},
            "players": {"min": 2, "max": 5},
            "deal": {"fixed": 7},
            "starter": "redraw_special",
            "draw": "draw_then_may_play",
            "voluntary_draw": false,
            "effects": {"8": "wild_suit", "JK": {"draw_skip": 4}, "2": {"draw_skip": 2}, "J": "skip", "A": "reverse"},
            "wild_not_on": [],
            "stacking": "none",
            "joker_counter": false,
            "special_finish": true,
            "two_player_reverse": "skip",
            "announce": {"word": "Carte !", "penalty": 2, "penalty_skips_turn": false},
            "end": {"lowest_wins_at": 500},
        }),
    );
}

/// §5 `moderne` options (S1 l.181–184) and "2 optional" decks (l.13).
#[test]
fn s1_moderne_options() {
    assert_knobs(
        options(
            "moderne",
            json!({"stacking": "draw_cards", "joker_counter": true, "special_finish": false,
                   "two_player_ace": "none", "decks": 2}),
        )
        .unwrap(),
        json!({
            "stacking": "draw_cards",
            "joker_counter": true,
            "special_finish": false,
            "two_player_reverse": "none",
            "decks": {"fixed": 2},
        }),
    );
}

/// §5 `base` (S2): french52, 2–8, 10/8/6 (l.21–24), draw ends the turn
/// (l.14–15), no effect, by_effect points, lowest wins above 100 (l.47).
#[test]
fn s2_base_knobs() {
    assert_knobs(
        preset("base"),
        json!({
            "deck": "french52",
            "decks": {"fixed": 1},
            "players": {"min": 2, "max": 8},
            "deal": {"by_players": [[2, 10], [3, 8], [4, 6]]},
            "draw": "draw_ends_turn",
            "voluntary_draw": false,
            "effects": {},
            "announce": {"word": "Carte !", "penalty": 2, "penalty_skips_turn": false},
            "points": "by_effect",
            "scoring": {"hand_points": {"finisher_bonus": 0}},
            "end": {"lowest_wins_above": 100},
        }),
    );
}

/// §5 `base` options: deck french32 (2–5 players, S2 l.25), positive
/// scoring (placement 50/20/10, highest wins above 100, l.31–36), effects
/// from the catalogue on any rank (l.7 "l'effet est déterminé par la
/// variante choisie").
#[test]
fn s2_base_options() {
    assert_knobs(
        options(
            "base",
            json!({"deck": "french32", "scoring": "positive",
                   "effects": {"8": "wild_suit", "A": {"draw_skip": 2}}}),
        )
        .unwrap(),
        json!({
            "deck": "french32",
            "players": {"min": 2, "max": 5},
            "scoring": {"placement": {"awards": [50, 20, 10]}},
            "end": {"highest_wins_above": 100},
            "effects": {"8": "wild_suit", "A": {"draw_skip": 2}},
        }),
    );
    // The effects option is played: an 8 is now wild in `base`.
    let mut g = game(
        options("base", json!({"effects": {"8": "wild_suit"}})).unwrap(),
        Deal {
            dealer: 1,
            hands: &["8S 3C 4C", "9D 5D 6C"],
            starter: "4H",
            stock: "2C",
        },
    );
    ok(&mut g, 0, play_suit("8S", "D"));
    assert_eq!(legal(&g, 1), ["9D", "5D"]);
}

/// §5 `amerix` (S3): letters100, 2–8 (l.7), 7 cards (l.21), the letters
/// starter, star wild letter, pétard +2, X reverse (2p plays again),
/// "Toutilix !" with 2 cards and a lost turn (l.27), lowest wins at 300
/// (l.33).
#[test]
fn s3_amerix_knobs() {
    assert_knobs(
        preset("amerix"),
        json!({
            "deck": "letters100",
            "decks": {"fixed": 1},
            "players": {"min": 2, "max": 8},
            "deal": {"fixed": 7},
            "starter": "letters",
            "draw": "draw_then_may_play",
            "voluntary_draw": false,
            "effects": {"STAR": "wild_letter", "BANG": {"firecracker": 2}, "X": "reverse"},
            "two_player_reverse": "skip",
            "announce": {"word": "Toutilix !", "penalty": 2, "penalty_skips_turn": true},
            "end": {"lowest_wins_at": 300},
        }),
    );
    // S3 l.33 "on peut se mettre d'accord sur un nombre différent": target.
    assert_knobs(
        options("amerix", json!({"target": 200})).unwrap(),
        json!({"end": {"lowest_wins_at": 200}}),
    );
}

/// §5 `757` (S4): french54, ceil(players/6) decks, 2–18, 5 cards (l.24),
/// apply_effect (l.30), voluntary draw (l.61), 2 +2, 6 across, 8 wild, 10
/// reverse (2p none), Q may replay, A freeze, joker substitute, "CARTE" with
/// 1 card (l.64–67), finisher −10 (l.74), reaching 151 loses.
#[test]
fn s4_757_knobs() {
    assert_knobs(
        preset("757"),
        json!({
            "deck": "french54",
            "decks": {"per_players": 6},
            "players": {"min": 2, "max": 18},
            "deal": {"fixed": 5},
            "starter": "apply_effect",
            "draw": "draw_then_may_play",
            "voluntary_draw": true,
            "effects": {"2": {"draw_skip": 2}, "6": "pass_across", "8": "wild_suit", "10": "reverse",
                        "Q": "may_replay", "A": "freeze", "JK": "substitute"},
            "wild_not_on": [],
            "two_player_reverse": "none",
            "announce": {"word": "CARTE", "penalty": 1, "penalty_skips_turn": false},
            "scoring": {"hand_points": {"finisher_bonus": -10}},
            "end": {"reacher_loses_at": 151},
        }),
    );
}

/// §5: "every preset: `target` (the end threshold: 500, 500, 100, 300,
/// 151), `rounds` […], `decks`".
#[test]
fn every_preset_takes_target_rounds_and_decks() {
    for (id, default) in [
        ("classique", 500),
        ("moderne", 500),
        ("base", 100),
        ("amerix", 300),
        ("757", 151),
    ] {
        assert_eq!(preset(id).end.threshold(), default, "{id}");
        let r = options(id, json!({"target": 42, "rounds": 3, "decks": 2})).unwrap();
        assert_eq!((r.end.threshold(), r.rounds), (42, Some(3)), "{id}");
        assert_eq!(r.decks.count(2), 2, "{id}");
        assert_eq!(options(id, json!({"rounds": null})).unwrap().rounds, None);
    }
}

// ----- §3 refusals ------------------------------------------------------------------

/// §3: "too many players for the cards": classique up to 10 players needs
/// two decks above 7 players (8 × 7 + 1 = 57 > 52); one deck is refused.
#[test]
fn too_many_players_for_the_cards_is_refused() {
    let reason = invalid("classique", json!({"decks": 1}));
    assert!(reason.contains("8 players × 7 cards"), "{reason}");
    assert!(invalid("757", json!({"decks": 1})).contains("players"));
    // The same deck count is fine once the players knob fits it (10 × 5 + 1 ≤ 54).
    assert!(options("757", json!({"decks": 1, "players": {"min": 2, "max": 10}})).is_ok());
    assert!(invalid("amerix", json!({"deal": {"fixed": 13}})).contains("players"));
}

/// A table of more seats than the rules take is refused (S1 l.12 "maximum 5
/// joueurs", S2 l.25 "5 joueurs pour un jeu de 32").
#[test]
fn seats_outside_the_players_range_are_refused() {
    assert!(matches!(
        Game::new(preset("moderne"), 6),
        Err(RulesError::Invalid(_))
    ));
    assert!(matches!(
        Game::new(preset("classique"), 1),
        Err(RulesError::Invalid(_))
    ));
    let b32 = options("base", json!({"deck": "french32"})).unwrap();
    assert!(Game::new(b32.clone(), 5).is_ok());
    assert!(matches!(Game::new(b32, 6), Err(RulesError::Invalid(_))));
}

/// §3: "an effect on a rank the deck lacks" is refused: a 2 in the 32-card
/// deck, a joker in french52, a French rank on the letter deck, a suit wild
/// on a letter.
#[test]
fn an_effect_on_a_rank_the_deck_lacks_is_refused() {
    invalid(
        "base",
        json!({"deck": "french32", "effects": {"2": {"draw_skip": 2}}}),
    );
    invalid("base", json!({"effects": {"JK": {"draw_skip": 4}}}));
    invalid("amerix", json!({"effects": {"8": "wild_suit"}}));
    invalid("amerix", json!({"effects": {"A": "wild_suit"}}));
    invalid("classique", json!({"effects": {"JK": "substitute"}}));
}

/// Other impossible combinations of §3: stacking without a draw card, the
/// letters starter on a French deck, a substitute that is not the joker.
#[test]
fn other_impossible_combinations_are_refused() {
    invalid("base", json!({"stacking": "draw_cards"}));
    invalid("moderne", json!({"starter": "letters"}));
    invalid(
        "757",
        json!({"effects": {"Q": "substitute", "JK": "substitute"}}),
    );
    invalid("base", json!({"effects": {"2": {"draw_skip": 0}}}));
}

/// Bad option values are refused with the option's name.
#[test]
fn bad_option_values_are_refused() {
    bad_option("classique", json!({"jokers": "yes"}), "jokers");
    bad_option("classique", json!({"target": 0}), "target");
    bad_option("classique", json!({"rounds": 0}), "rounds");
    bad_option("classique", json!({"decks": 0}), "decks");
    bad_option("moderne", json!({"stacking": "all"}), "stacking");
    bad_option(
        "moderne",
        json!({"two_player_ace": "sometimes"}),
        "two_player_ace",
    );
    bad_option("base", json!({"deck": "french36"}), "deck");
    bad_option("base", json!({"scoring": "both"}), "scoring");
    bad_option("base", json!({"effects": {"8": "teleport"}}), "effects");
    bad_option("757", json!({"voluntary_draw": 3}), "voluntary_draw");
}

/// Unknown options, and options of another preset that are no §3 knob, are
/// refused; an unknown preset too.
#[test]
fn unknown_options_and_presets_are_refused() {
    for (id, opts) in [
        ("moderne", json!({"tens_replay": true})),
        ("classique", json!({"two_player_ace": "none"})),
        ("757", json!({"colour": "red"})),
    ] {
        assert!(
            matches!(
                options(id, opts.clone()),
                Err(RulesError::UnknownOption { .. })
            ),
            "{id} {opts}"
        );
    }
    assert!(matches!(
        Preset::from_id("uno"),
        Err(RulesError::UnknownPreset(_))
    ));
}

/// §5: "any other knob of §3 may be overridden too, by its name".
#[test]
fn any_knob_may_be_overridden_by_name() {
    assert_knobs(
        options(
            "757",
            json!({"voluntary_draw": false, "deal": {"fixed": 6}, "two_player_reverse": "skip"}),
        )
        .unwrap(),
        json!({"voluntary_draw": false, "deal": {"fixed": 6}, "two_player_reverse": "skip"}),
    );
    assert_knobs(
        options(
            "classique",
            json!({"announce": {"word": "Uno", "penalty": 4, "penalty_skips_turn": true},
                   "draw": "draw_ends_turn", "wild_not_on": []}),
        )
        .unwrap(),
        json!({"announce": {"word": "Uno", "penalty": 4, "penalty_skips_turn": true},
               "draw": "draw_ends_turn", "wild_not_on": []}),
    );
    // A knob override is played: with classique's wild_not_on emptied, an 8
    // goes on a 2.
    let mut g = game(
        options("classique", json!({"wild_not_on": []})).unwrap(),
        Deal {
            dealer: 1,
            hands: &["8S 3C", "9D 5D"],
            starter: "2H",
            stock: "2C",
        },
    );
    ok(&mut g, 0, play_suit("8S", "D"));
}
