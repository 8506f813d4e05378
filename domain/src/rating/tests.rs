//! Which games count, and Weng-Lin's update checked against the paper's
//! formulas (Weng & Lin 2011, Algorithm 1, Bradley-Terry full pairing).

use super::*;
use crate::bots::Level;
use crate::event::{EndReason, Placing};

fn person(seat: usize, name: &str) -> Seated {
    Seated {
        seat,
        account_id: PlayerId::from(name),
        bot: None,
        guest: false,
        client_seed: None,
    }
}

/// Every seat played in the game (D43).
fn everyone(_: Seat) -> bool {
    true
}

/// A game ended with these (seat, total, place), the winners those at
/// place 1.
fn ended(placings: &[(usize, i32, usize)]) -> GameEnded {
    GameEnded {
        ranking: placings
            .iter()
            .map(|&(seat, total, place)| Placing { seat, total, place })
            .collect(),
        winners: placings.iter().filter(|p| p.2 == 1).map(|p| p.0).collect(),
        losers: Vec::new(),
        reason: EndReason::EndCondition,
    }
}

/// The paper's update, written out plainly: for each player i and each
/// other q, c = √(σi² + σq² + 2β²), p = e^(μi/c) / (e^(μi/c) + e^(μq/c)),
/// s = 1, ½ or 0 as i finished ahead, level or behind; μi += Σ σi²/c (s − p);
/// σi² *= max(1 − Σ (σi/c) σi²/c² p (1 − p), κ).
fn by_the_paper(before: &[Rating], places: &[usize]) -> Vec<Rating> {
    let (beta, kappa) = (25.0_f64 / 6.0, 1e-6);
    before
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let (mut omega, mut delta) = (0.0, 0.0);
            for (q, o) in before.iter().enumerate().filter(|(q, _)| *q != i) {
                let c = (r.sigma.powi(2) + o.sigma.powi(2) + 2.0 * beta * beta).sqrt();
                let (ei, eq) = ((r.mu / c).exp(), (o.mu / c).exp());
                let p = ei / (ei + eq);
                let s = match places[q].cmp(&places[i]) {
                    std::cmp::Ordering::Greater => 1.0,
                    std::cmp::Ordering::Equal => 0.5,
                    std::cmp::Ordering::Less => 0.0,
                };
                omega += r.sigma.powi(2) / c * (s - p);
                delta += (r.sigma / c) * r.sigma.powi(2) / (c * c) * p * (1.0 - p);
            }
            Rating {
                mu: r.mu + omega,
                sigma: (r.sigma.powi(2) * f64::max(1.0 - delta, kappa)).sqrt(),
            }
        })
        .collect()
}

fn game(places: &[usize]) -> RatedGame {
    RatedGame {
        ruleset: "classique".into(),
        finishes: places
            .iter()
            .enumerate()
            .map(|(seat, &place)| Finish {
                player: PlayerId::from(format!("p{seat}")),
                place,
                total: 0,
                won: place == 1,
            })
            .collect(),
    }
}

fn close(a: &[Rating], b: &[Rating]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x.mu - y.mu).abs() < 1e-12, "{x:?} against {y:?}");
        assert!((x.sigma - y.sigma).abs() < 1e-12, "{x:?} against {y:?}");
    }
}

#[test]
fn two_new_players_the_winner_gains_what_the_loser_loses() {
    // By hand: c = √(2·(25/3)² + 2·(25/6)²) = 13.176; p = ½;
    // Ω = ±(25/3)²/c · ½ = ±2.63523; Δ = (σ/c)·σ²/c²·¼ = 0.063246.
    let after = game(&[1, 2]).rate(&[Rating::NEW, Rating::NEW]);
    assert!((after[0].mu - 27.635_231_383_473_65).abs() < 1e-12);
    assert!((after[1].mu - 22.364_768_616_526_35).abs() < 1e-12);
    assert!((after[0].sigma - 8.065506316323548).abs() < 1e-12);
    assert_eq!(after[0].sigma, after[1].sigma);
}

#[test]
fn three_players_with_a_tie_follow_the_papers_formulas() {
    let before = [
        Rating {
            mu: 30.0,
            sigma: 5.0,
        },
        Rating::NEW,
        Rating {
            mu: 20.0,
            sigma: 7.0,
        },
    ];
    // Seat 1 won; seats 0 and 2 tied second.
    let places = [2, 1, 2];
    let after = game(&places).rate(&before);
    close(&after, &by_the_paper(&before, &places));
    // Figures computed apart (Python, the same formulas).
    close(
        &after,
        &[
            Rating {
                mu: 28.12753392347041,
                sigma: 4.892913811192141,
            },
            Rating {
                mu: 30.96300085829253,
                sigma: 7.6047103848762285,
            },
            Rating {
                mu: 19.46254010438679,
                sigma: 6.625848385424569,
            },
        ],
    );
}

#[test]
fn d21_players_tied_share_a_rank_and_move_alike() {
    let after = game(&[1, 1, 3, 4]).rate(&[Rating::NEW; 4]);
    assert_eq!(after[0], after[1]);
    assert!(after[1].mu > after[2].mu && after[2].mu > after[3].mu);
    let everyone_level = game(&[1, 1]).rate(&[Rating::NEW; 2]);
    assert_eq!(everyone_level[0].mu, 25.0);
    assert!(everyone_level[0].sigma < Rating::NEW.sigma);
}

#[test]
fn a_rating_is_provisional_while_its_deviation_is_above_six() {
    assert!(Rating::NEW.provisional());
    assert!(Rating {
        mu: 25.0,
        sigma: 6.000_001
    }
    .provisional());
    assert!(!Rating {
        mu: 25.0,
        sigma: 6.0
    }
    .provisional());
    // A winner of steady games leaves it after some games, not at once.
    let mut standings = Standings::default();
    let mut games = 0;
    while standings.of(&"p0".into(), "classique").rating.provisional() {
        standings.add(&game(&[1, 2]));
        games += 1;
    }
    assert!((3..30).contains(&games), "{games} games");
}

#[test]
fn a_game_between_people_is_rated_with_each_ones_place_total_and_win() {
    let players = [person(0, "ann"), person(1, "bob"), person(2, "cy")];
    let rated = RatedGame::of(
        "moderne",
        &players,
        everyone,
        &ended(&[(1, 0, 1), (0, 40, 2), (2, 40, 2)]),
    )
    .expect("rated");
    assert_eq!(rated.ruleset, "moderne");
    assert_eq!(
        rated.finishes,
        vec![
            Finish {
                player: "ann".into(),
                place: 2,
                total: 40,
                won: false
            },
            Finish {
                player: "bob".into(),
                place: 1,
                total: 0,
                won: true
            },
            Finish {
                player: "cy".into(),
                place: 2,
                total: 40,
                won: false
            },
        ]
    );
}

#[test]
fn a_game_with_a_bot_seat_is_not_rated() {
    let players = [person(0, "ann"), Seated::bot(1, Level::Basic, None)];
    assert_eq!(
        RatedGame::of(
            "moderne",
            &players,
            everyone,
            &ended(&[(0, 0, 1), (1, 9, 2)])
        ),
        None
    );
}

#[test]
fn d43_a_game_with_a_guest_seat_is_not_rated_whatever_the_guest_became() {
    let guest = Seated {
        guest: true,
        ..person(1, "gus")
    };
    let players = [person(0, "ann"), guest.clone()];
    let game = ended(&[(0, 0, 1), (1, 9, 2)]);
    assert_eq!(RatedGame::of("moderne", &players, everyone, &game), None);
    // The log keeps what the seat was when taken: the account's later
    // upgrade changes nothing (the rating is recomputable from the log).
    let written = serde_json::to_value(&guest).unwrap();
    assert_eq!(written["guest"], true, "{written}");
    assert_eq!(serde_json::from_value::<Seated>(written).unwrap(), guest);
    let player = serde_json::to_value(person(0, "ann")).unwrap();
    assert!(
        player.get("guest").is_none(),
        "absent for a player: {player}"
    );
}

#[test]
fn one_account_at_two_seats_is_not_rated() {
    let players = [person(0, "ann"), person(1, "ann")];
    assert_eq!(
        RatedGame::of(
            "moderne",
            &players,
            everyone,
            &ended(&[(0, 0, 1), (1, 9, 2)])
        ),
        None
    );
}

#[test]
fn d40_a_game_ended_by_resigning_counts_as_its_ranking_says() {
    let players = [person(0, "ann"), person(1, "bob")];
    let mut by_resigning = ended(&[(1, 30, 1), (0, 10, 2)]);
    by_resigning.reason = EndReason::Resigned;
    by_resigning.losers = vec![0];
    let rated = RatedGame::of("classique", &players, everyone, &by_resigning).expect("rated");
    assert_eq!(rated.finishes[0].place, 2);
    assert!(!rated.finishes[0].won && rated.finishes[1].won);
}

fn created() -> TableEvent {
    let events =
        Table::create("classique", &Default::default(), 2, None, &"ann".into()).expect("a table");
    let TableEvent::TableCreated(c) = &events[0] else {
        panic!("{events:?}")
    };
    TableEvent::TableCreated(c.clone())
}

#[test]
fn d43_a_game_a_person_never_moved_in_is_not_rated() {
    let players = [person(0, "ann"), person(1, "bob"), person(2, "cy")];
    let end = ended(&[(0, 0, 1), (1, 9, 2), (2, 20, 3)]);
    let bob_never_moved = |seat: Seat| seat != 1;
    assert_eq!(
        RatedGame::of("moderne", &players, bob_never_moved, &end),
        None
    );
    assert!(RatedGame::of("moderne", &players, everyone, &end).is_some());
}

#[test]
fn a_log_is_rated_from_its_creation_its_start_its_acts_and_its_end_and_d41_an_abort_never_is() {
    let started = TableEvent::GameStarted {
        players: vec![person(0, "ann"), person(1, "bob")],
    };
    let passed = |seat| TableEvent::Game(Event::TurnPassed { seat });
    let end = TableEvent::Game(Event::GameEnded(Box::new(ended(&[(0, 0, 1), (1, 25, 2)]))));
    let log = [
        created(),
        started.clone(),
        passed(0),
        passed(1),
        end.clone(),
    ];
    let rated = RatedGame::from_log(&log).expect("rated");
    assert_eq!(rated.ruleset, "classique");
    assert_eq!(rated.finishes.len(), 2);
    let aborted = [
        created(),
        started.clone(),
        TableEvent::GameAborted { by: 0 },
    ];
    assert_eq!(RatedGame::from_log(&aborted), None);
    // D43: bob's only act is the server's, after a timeout or for his away
    // seat: not rated; once he is back, his own act counts.
    let timed_out = TableEvent::TurnTimedOut {
        seat: 1,
        deadline: "2025-01-31T18:04:35.000000Z".into(),
    };
    let log = [
        created(),
        started.clone(),
        passed(0),
        timed_out,
        passed(1),
        end.clone(),
    ];
    assert_eq!(RatedGame::from_log(&log), None);
    let back = TableEvent::SeatBack { seat: 1 };
    let log = [
        created(),
        started.clone(),
        passed(0),
        back,
        passed(1),
        end.clone(),
    ];
    assert!(RatedGame::from_log(&log).is_some());
    let never = [created(), started, passed(0), end];
    assert_eq!(RatedGame::from_log(&never), None);
}

#[test]
fn standings_fold_games_in_order_and_count_games_wins_places_and_points() {
    let mut standings = Standings::default();
    let mut first = game(&[1, 2]);
    first.finishes[0].total = -10;
    first.finishes[1].total = 40;
    let changes = standings.add(&first);
    assert_eq!(changes[0].0, Rating::NEW);
    let second = game(&[2, 1]);
    standings.add(&second);
    let p0 = standings.of(&"p0".into(), "classique");
    assert_eq!(
        p0.stats,
        Stats {
            games: 2,
            wins: 1,
            places: 3,
            points: -10
        }
    );
    assert_eq!(p0.stats.average_place(), Some(1.5));
    // The order matters: the same two games the other way round end
    // elsewhere (which is why they are folded in the order they ended).
    let mut swapped = Standings::default();
    swapped.add(&second);
    swapped.add(&first);
    assert_ne!(swapped.of(&"p0".into(), "classique").rating, p0.rating);
    assert_eq!(swapped.of(&"p0".into(), "classique").stats, p0.stats);
    // Another ruleset is another standing.
    assert_eq!(standings.of(&"p0".into(), "moderne"), Standing::default());
}
