//! Section 7 of docs/RULES.md through the table: the clock's seat (D37), the
//! timeout move (D38), away seats (D39), resigning (D40), aborting (D41) and
//! the server's moves for a seat (D42), each folded back exactly from its
//! events.

use rand::SeedableRng;

use super::presence::act;
use super::*;
use crate::bots::{Level, Playouts};
use crate::engine::Command;
use crate::event::Event;
use crate::event::{DrawReason, EndReason};
use crate::redaction::Seen;

fn rng() -> rand::rngs::StdRng {
    rand::rngs::StdRng::seed_from_u64(3)
}

const PLAYERS: [&str; 3] = ["a", "b", "c"];

/// A started 3-player `classique` table (with `clock`), and its log.
fn started(clock: Option<Clock>) -> (Table, Vec<TableEvent>) {
    let mut log =
        Table::create("classique", &Default::default(), 3, clock, &"a".into(), "a").unwrap();
    let mut table = Table::from_events(&log).unwrap();
    for id in &PLAYERS[1..] {
        let join = TableCommand::Join {
            account_id: (*id).into(),
            username: (*id).into(),
        };
        log.extend(table.execute(&join, &mut rng()).unwrap());
    }
    let start = TableCommand::Start {
        account_id: "a".into(),
    };
    log.extend(table.execute(&start, &mut rng()).unwrap());
    (table, log)
}

/// A started `classique` table of these people (the first creates it) and
/// then these bots, without a clock.
fn started_with(people: &[&str], bots: &[Level]) -> (Table, Vec<TableEvent>) {
    let seats = people.len() + bots.len();
    let creator = people[0];
    let mut log = Table::create(
        "classique",
        &Default::default(),
        seats,
        None,
        &creator.into(),
        creator,
    )
    .unwrap();
    let mut table = Table::from_events(&log).unwrap();
    for id in &people[1..] {
        let join = TableCommand::Join {
            account_id: (*id).into(),
            username: (*id).into(),
        };
        log.extend(table.execute(&join, &mut rng()).unwrap());
    }
    for level in bots {
        let bot = TableCommand::SeatBot {
            account_id: creator.into(),
            level: *level,
        };
        log.extend(table.execute(&bot, &mut rng()).unwrap());
    }
    let start = TableCommand::Start {
        account_id: creator.into(),
    };
    log.extend(table.execute(&start, &mut rng()).unwrap());
    (table, log)
}

/// A started table where seat 1 ("b") has resigned and is on turn.
fn resigned_seat_on_turn() -> (Table, Vec<TableEvent>) {
    let (mut table, mut log) = started(None);
    let resign = TableCommand::Resign {
        account_id: "b".into(),
    };
    run(&mut table, &mut log, resign);
    until_turn_of(&mut table, &mut log, 1);
    (table, log)
}

fn clock(away_after: u32) -> Option<Clock> {
    Some(Clock {
        turn_seconds: 30,
        away_after,
    })
}

/// Runs `command`, appends its events to `log`, checks that the log folds
/// back to the same table, and returns the events.
fn run(table: &mut Table, log: &mut Vec<TableEvent>, command: TableCommand) -> Vec<TableEvent> {
    let events = table.execute(&command, &mut rng()).unwrap();
    log.extend(events.iter().cloned());
    assert_eq!(
        &Table::from_events(log.iter()).unwrap(),
        table,
        "the log folds back"
    );
    events
}

/// The seat on turn plays its first legal move itself.
fn own_move(table: &mut Table, log: &mut Vec<TableEvent>) -> Seat {
    let seat = table.must_act().unwrap();
    let mv = table.game.as_ref().unwrap().legal_moves(seat)[0].clone();
    let account_id = PLAYERS[seat].into();
    run(table, log, TableCommand::Move { account_id, mv });
    seat
}

/// Own moves until `seat` is on turn.
fn until_turn_of(table: &mut Table, log: &mut Vec<TableEvent>, seat: Seat) {
    for _ in 0..200 {
        if table.must_act() == Some(seat) {
            return;
        }
        own_move(table, log);
    }
    panic!("seat {seat} never got the turn");
}

/// D41: `abort` is too late, if the game still runs.
fn too_late_if_running(table: &Table, abort: &TableCommand) {
    if table.status() == Status::Playing {
        assert_eq!(
            table.decide(abort, &mut rng()),
            Err(TableError::AbortTooLate)
        );
    }
}

/// The server's move for the seat it plays, with `seed` and a full search.
fn play_for(seed: u32) -> TableCommand {
    TableCommand::PlayFor {
        seed,
        playouts: Playouts::FULL,
    }
}

/// The server plays while the seat on turn is one it plays.
fn server_plays(table: &mut Table, log: &mut Vec<TableEvent>) {
    while table.automatic().is_some() {
        run(table, log, play_for(1));
    }
}

fn time_out(table: &mut Table, log: &mut Vec<TableEvent>) -> Vec<TableEvent> {
    let deadline = "2025-01-31T18:04:35.000000Z".to_owned();
    run(table, log, TableCommand::TimeOut { deadline })
}

#[test]
fn d37_only_the_seat_on_turn_of_a_running_game_must_act() {
    let waiting = Table::from_events(
        &Table::create(
            "classique",
            &Default::default(),
            3,
            clock(2),
            &"a".into(),
            "a",
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(waiting.must_act(), None);
    let (table, _) = started(clock(2));
    let current = table.game.as_ref().unwrap().round().unwrap().current;
    assert!(current.is_some());
    assert_eq!(table.must_act(), current);
    assert_eq!(table.clock, clock(2));
}

#[test]
fn d37_a_clock_out_of_range_is_refused() {
    for (turn_seconds, away_after) in [(4, 2), (1_209_601, 2), (30, 0), (30, 11)] {
        let clock = Some(Clock {
            turn_seconds,
            away_after,
        });
        let refused = Table::create("classique", &Default::default(), 3, clock, &"a".into(), "a");
        assert!(
            matches!(refused, Err(TableError::InvalidClock(_))),
            "{turn_seconds} {away_after}"
        );
    }
}

#[test]
fn d38_a_timeout_draws_or_passes_and_never_plays_the_drawn_card() {
    let (mut table, mut log) = started(clock(5));
    for _ in 0..6 {
        let seat = table.must_act().unwrap();
        let events = time_out(&mut table, &mut log);
        assert_eq!(
            events[0],
            TableEvent::TurnTimedOut {
                seat,
                deadline: "2025-01-31T18:04:35.000000Z".into()
            }
        );
        for e in &events[1..] {
            match e {
                TableEvent::Game(Event::CardPlayed(p)) => assert_ne!(p.seat, seat, "{events:?}"),
                TableEvent::Game(Event::CardsDrawn {
                    seat: s, reason, ..
                }) if *s == seat => {
                    assert_ne!(*reason, DrawReason::Challenge)
                }
                _ => {}
            }
        }
        assert_ne!(table.must_act(), Some(seat), "the turn ended: {events:#?}");
        own_move(&mut table, &mut log);
    }
    assert_eq!(
        Table::from_events(
            &Table::create("classique", &Default::default(), 3, None, &"a".into(), "a").unwrap()
        )
        .unwrap()
        .decide(
            &TableCommand::TimeOut {
                deadline: String::new()
            },
            &mut rng()
        ),
        Err(TableError::NoAutomaticMove),
        "no clock, no timeout"
    );
}

#[test]
fn d39_timeouts_in_a_row_make_a_seat_away_until_its_player_comes_back() {
    let (mut table, mut log) = started(clock(2));
    let seat = table.must_act().unwrap();
    let player: PlayerId = PLAYERS[seat].into();
    // One timeout, then a move of its own: the count starts again.
    time_out(&mut table, &mut log);
    until_turn_of(&mut table, &mut log, seat);
    own_move(&mut table, &mut log);
    until_turn_of(&mut table, &mut log, seat);
    let events = time_out(&mut table, &mut log);
    assert!(!events.contains(&TableEvent::SeatAway { seat }));
    // Two in a row: away.
    until_turn_of(&mut table, &mut log, seat);
    let events = time_out(&mut table, &mut log);
    assert_eq!(events.last(), Some(&TableEvent::SeatAway { seat }));
    assert!(table.presence[seat].away);
    // The server plays for it at once, recorded as such.
    until_turn_of(&mut table, &mut log, seat);
    assert_eq!(table.automatic(), Some((seat, BotReason::Away)));
    let mv = table.game.as_ref().unwrap().legal_moves(seat)[0].clone();
    let by_hand = TableCommand::Move {
        account_id: player.clone(),
        mv,
    };
    assert_eq!(
        table.decide(&by_hand, &mut rng()),
        Err(TableError::SeatAway)
    );
    let events = run(&mut table, &mut log, play_for(7));
    assert_eq!(
        events[0],
        TableEvent::BotMoved {
            seat,
            bot: "basic@1".into(),
            reason: BotReason::Away,
            seed: 7,
            playouts: None
        }
    );
    // Back, and its own moves again.
    let back = TableCommand::Back {
        account_id: player.clone(),
    };
    assert_eq!(
        run(&mut table, &mut log, back.clone()),
        vec![TableEvent::SeatBack { seat }]
    );
    assert_eq!(table.decide(&back, &mut rng()), Err(TableError::NotAway));
    until_turn_of(&mut table, &mut log, seat);
    assert_eq!(table.automatic(), None);
    assert_eq!(
        table.decide(&play_for(1), &mut rng()),
        Err(TableError::NoAutomaticMove)
    );
    own_move(&mut table, &mut log);
}

#[test]
fn d40_resigned_seats_are_played_by_the_server_and_ranked_last_latest_first() {
    let (mut table, mut log) = started(None);
    let resign = |id: &str| TableCommand::Resign {
        account_id: id.into(),
    };
    run(&mut table, &mut log, resign("b"));
    assert_eq!(
        table.decide(&resign("b"), &mut rng()),
        Err(TableError::AlreadyResigned)
    );
    until_turn_of(&mut table, &mut log, 1);
    assert_eq!(table.automatic(), Some((1, BotReason::Resigned)));
    let events = run(&mut table, &mut log, play_for(1));
    assert!(matches!(
        events[0],
        TableEvent::BotMoved {
            seat: 1,
            reason: BotReason::Resigned,
            ..
        }
    ));
    // One seat left unresigned: the game ends at once.
    let events = run(&mut table, &mut log, resign("c"));
    let Some(TableEvent::Game(Event::GameEnded(ended))) = events.last() else {
        panic!("the game ends: {events:?}");
    };
    assert_eq!(ended.reason, EndReason::Resigned);
    let order: Vec<Seat> = ended.ranking.iter().map(|p| p.seat).collect();
    assert_eq!(
        order,
        vec![0, 2, 1],
        "unresigned first, then the latest resignation"
    );
    assert_eq!(ended.winners, vec![0]);
    assert_eq!(ended.losers, vec![1, 2]);
    assert_eq!(table.status(), Status::Finished);
    assert_eq!(table.must_act(), None);
}

#[test]
fn d41_a_game_may_be_aborted_until_every_person_has_moved() {
    let (mut table, mut log) = started(None);
    own_move(&mut table, &mut log);
    let abort = |id: &str| TableCommand::Abort {
        account_id: id.into(),
    };
    assert_eq!(
        run(&mut table, &mut log, abort("c")),
        vec![TableEvent::GameAborted { by: 2 }]
    );
    assert_eq!(table.status(), Status::Aborted);
    assert_eq!(table.must_act(), None);
    assert_eq!(
        table.decide(&abort("a"), &mut rng()),
        Err(TableError::Aborted)
    );

    let (mut table, mut log) = started(None);
    let mut moved = [false; 3];
    while moved.contains(&false) {
        moved[own_move(&mut table, &mut log)] = true;
    }
    assert_eq!(
        table.decide(&abort("a"), &mut rng()),
        Err(TableError::AbortTooLate)
    );
}

#[test]
fn d41_a_turn_that_timed_out_counts_a_player_who_never_moves_cannot_keep_abort_open() {
    let (mut table, mut log) = started(clock(5));
    let abort = |id: &str| TableCommand::Abort {
        account_id: id.into(),
    };
    // One seat timed out: the two others have not had a turn yet.
    let first = table.must_act().unwrap();
    time_out(&mut table, &mut log);
    assert!(
        !table.presence[first].moved,
        "a timeout is not its own move"
    );
    assert!(table.presence[first].turned);
    assert!(table.decide(&abort(PLAYERS[first]), &mut rng()).is_ok());
    // Every seat has had a turn, the last two timing out too: too late.
    for _ in 0..20 {
        if table.presence.iter().all(|p| p.turned) {
            break;
        }
        time_out(&mut table, &mut log);
    }
    assert!(table.presence.iter().all(|p| !p.moved), "nobody moved");
    for id in PLAYERS {
        assert_eq!(
            table.decide(&abort(id), &mut rng()),
            Err(TableError::AbortTooLate)
        );
    }
}

#[test]
fn d41_abort_closes_once_the_first_round_is_over() {
    // The round-over clause alone: seat 1's turns are forgotten after each
    // move, as if it never had one (a seat every turn skips).
    let (mut table, _) = started_with(&["a", "b"], &[]);
    let abort = TableCommand::Abort {
        account_id: "a".into(),
    };
    while table.game.as_ref().unwrap().history().is_empty() {
        assert!(table.decide(&abort, &mut rng()).is_ok());
        let seat = table.must_act().unwrap();
        let mv = table.game.as_ref().unwrap().legal_moves(seat)[0].clone();
        let account_id = PLAYERS[seat].into();
        table
            .execute(&TableCommand::Move { account_id, mv }, &mut rng())
            .unwrap();
        table.presence[1].turned = false;
    }
    too_late_if_running(&table, &abort);
}

#[test]
fn d41_a_player_who_resigned_cannot_abort() {
    let (mut table, mut log) = started(None);
    let resign = TableCommand::Resign {
        account_id: "c".into(),
    };
    run(&mut table, &mut log, resign);
    let abort = |id: &str| TableCommand::Abort {
        account_id: id.into(),
    };
    assert_eq!(
        table.decide(&abort("c"), &mut rng()),
        Err(TableError::AlreadyResigned)
    );
    assert!(table.decide(&abort("a"), &mut rng()).is_ok());
}

#[test]
fn d40_a_game_is_never_started_without_a_person_seated() {
    let mut log =
        Table::create("classique", &Default::default(), 3, None, &"a".into(), "a").unwrap();
    let mut table = Table::from_events(&log).unwrap();
    for _ in 0..2 {
        let bot = TableCommand::SeatBot {
            account_id: "a".into(),
            level: Level::Strong,
        };
        run(&mut table, &mut log, bot);
    }
    run(
        &mut table,
        &mut log,
        TableCommand::Leave {
            account_id: "a".into(),
        },
    );
    let start = TableCommand::Start {
        account_id: "a".into(),
    };
    assert_eq!(
        table.decide(&start, &mut rng()),
        Err(TableError::NoPersonSeated)
    );
    assert_eq!(TableError::NoPersonSeated.code(), "no_person_seated");
}

#[test]
fn d42_the_servers_move_for_a_seat_is_a_function_of_its_seed() {
    let (table, _) = resigned_seat_on_turn();
    let once = table.decide(&play_for(42), &mut rng()).unwrap();
    let again = table.decide(&play_for(42), &mut rng()).unwrap();
    assert_eq!(once, again);
}

#[test]
fn d38_d42_an_audit_tells_the_servers_moves_from_forged_ones() {
    let (mut table, mut log) = started(clock(5));
    let before = table.clone();
    let seat = table.must_act().unwrap();
    let events = time_out(&mut table, &mut log);
    assert_eq!(before.check_automatic(&events[0], &events[1..]), Ok(()));
    // A pass where the server had to draw, or a draw where it had to pass.
    let forged: Vec<TableEvent> = events[1..]
        .iter()
        .map(|e| match e {
            TableEvent::Game(Event::TurnPassed { seat }) => TableEvent::Game(Event::CardsDrawn {
                seat: *seat,
                cards: Vec::new(),
                reason: DrawReason::Draw,
            }),
            TableEvent::Game(Event::CardsDrawn { seat, .. }) => {
                TableEvent::Game(Event::TurnPassed { seat: *seat })
            }
            e => e.clone(),
        })
        .collect();
    assert!(before.check_automatic(&events[0], &forged).is_err());
    // A timeout of a seat that was not on turn.
    let wrong = TableEvent::TurnTimedOut {
        seat: (seat + 1) % 3,
        deadline: "2025-01-31T18:04:35.000000Z".into(),
    };
    assert!(before.check_automatic(&wrong, &events[1..]).is_err());

    // The stand-in's move for a resigned seat, and a forged one.
    let (mut table, mut log) = resigned_seat_on_turn();
    let before = table.clone();
    let events = run(&mut table, &mut log, play_for(9));
    assert_eq!(before.check_automatic(&events[0], &events[1..]), Ok(()));
    let other = before
        .game
        .as_ref()
        .unwrap()
        .legal_moves(1)
        .into_iter()
        .map(|mv| {
            let moved = before
                .game
                .as_ref()
                .unwrap()
                .decide(&Command::Move { seat: 1, mv }, &mut rng())
                .unwrap();
            moved.into_iter().map(TableEvent::Game).collect::<Vec<_>>()
        })
        .find(|moved| {
            moved
                .iter()
                .filter_map(act)
                .ne(events[1..].iter().filter_map(act))
        });
    if let Some(other) = other {
        assert!(before.check_automatic(&events[0], &other).is_err());
    }
    let away = TableEvent::BotMoved {
        seat: 1,
        bot: "basic@1".into(),
        reason: BotReason::Away,
        seed: 9,
        playouts: None,
    };
    assert!(
        before.check_automatic(&away, &events[1..]).is_err(),
        "the seat resigned, it is not away"
    );
}

#[test]
fn d42_bot_seats_play_to_the_end_of_the_game_by_their_own_level() {
    let mut log =
        Table::create("classique", &Default::default(), 3, None, &"a".into(), "a").unwrap();
    let mut table = Table::from_events(&log).unwrap();
    let seat_bot = |id: &str, level| TableCommand::SeatBot {
        account_id: id.into(),
        level,
    };
    assert_eq!(
        table.decide(&seat_bot("b", Level::Basic), &mut rng()),
        Err(TableError::NotCreator)
    );
    run(&mut table, &mut log, seat_bot("a", Level::Random));
    run(&mut table, &mut log, seat_bot("a", Level::Basic));
    assert_eq!(
        table.decide(&seat_bot("a", Level::Basic), &mut rng()),
        Err(TableError::Full)
    );
    assert_eq!(table.bot_at(1), Some(Level::Random));
    run(
        &mut table,
        &mut log,
        TableCommand::Start {
            account_id: "a".into(),
        },
    );
    assert_eq!(
        table.decide(&seat_bot("a", Level::Basic), &mut rng()),
        Err(TableError::NotWaiting)
    );
    let mut seed = 0;
    let mut bot_moves = 0;
    while table.status() == Status::Playing {
        match table.automatic() {
            Some((seat, reason)) => {
                assert_eq!(reason, BotReason::Bot);
                let before = table.clone();
                seed += 1;
                let events = run(
                    &mut table,
                    &mut log,
                    TableCommand::PlayFor {
                        seed,
                        playouts: Playouts::FULL,
                    },
                );
                let TableEvent::BotMoved { bot, .. } = &events[0] else {
                    panic!("{events:?}");
                };
                assert_eq!(*bot, before.bot_at(seat).unwrap().tag());
                assert_eq!(before.check_automatic(&events[0], &events[1..]), Ok(()));
                bot_moves += 1;
            }
            None => {
                own_move(&mut table, &mut log);
            }
        }
    }
    assert!(bot_moves > 10, "{bot_moves} bot moves");
    assert_eq!(table.status(), Status::Finished);
}

#[test]
fn d40_d41_with_bots_only_the_persons_count() {
    let (mut table, mut log) = started_with(&["a", "b"], &[Level::Basic]);
    // D41: the persons a and b must both move; the bot does not count.
    let abort = TableCommand::Abort {
        account_id: "a".into(),
    };
    assert!(table.decide(&abort, &mut rng()).is_ok());
    // D40: b resigns; a and the bot are left, the game goes on; a resigns:
    // no person is left, the game ends.
    run(
        &mut table,
        &mut log,
        TableCommand::Resign {
            account_id: "b".into(),
        },
    );
    assert_eq!(table.status(), Status::Playing);
    let events = run(
        &mut table,
        &mut log,
        TableCommand::Resign {
            account_id: "a".into(),
        },
    );
    assert!(matches!(
        events.last(),
        Some(TableEvent::Game(Event::GameEnded(_)))
    ));
    assert_eq!(table.status(), Status::Finished);
}

#[test]
fn d40_a_seat_resigned_under_an_attack_is_answered_by_the_server() {
    // Play until the seat on turn faces an attack (classique's aces), then
    // its player resigns: the server answers the attack for it.
    for seed in 0..50u64 {
        let (mut table, mut log) = started(None);
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut found = false;
        for _ in 0..300 {
            if table.status() != Status::Playing {
                break;
            }
            let seat = table.must_act().unwrap();
            let pending = table.game.as_ref().unwrap().round().unwrap().pending;
            if matches!(pending, crate::event::Pending::Attack { .. }) {
                let resign = TableCommand::Resign {
                    account_id: PLAYERS[seat].into(),
                };
                run(&mut table, &mut log, resign);
                assert_eq!(table.automatic(), Some((seat, BotReason::Resigned)));
                let before = table.clone();
                let events = run(&mut table, &mut log, play_for(3));
                assert_eq!(before.check_automatic(&events[0], &events[1..]), Ok(()));
                // Answered or taken: the attack no longer waits on that seat.
                assert!(table.must_act() != Some(seat) || table.status() != Status::Playing);
                found = true;
                break;
            }
            let moves = table.game.as_ref().unwrap().legal_moves(seat);
            let mv = moves[rand::Rng::gen_range(&mut rng, 0..moves.len())].clone();
            run(
                &mut table,
                &mut log,
                TableCommand::Move {
                    account_id: PLAYERS[seat].into(),
                    mv,
                },
            );
        }
        if found {
            return;
        }
    }
    panic!("no attack met in 50 games");
}

#[test]
fn d41_the_moves_of_a_bot_seat_do_not_stop_an_abort() {
    let (mut table, mut log) = started_with(&["a"], &[Level::Basic]);
    // Whatever the bot plays, the person has not moved: abort stays open.
    server_plays(&mut table, &mut log);
    let abort = TableCommand::Abort {
        account_id: "a".into(),
    };
    assert!(table.decide(&abort, &mut rng()).is_ok());
    own_move(&mut table, &mut log);
    server_plays(&mut table, &mut log);
    too_late_if_running(&table, &abort);
}

#[test]
fn d42_a_strong_bot_searches_what_it_is_given_and_records_it() {
    let (table, _) = started_with(&["a"], &[Level::Strong]);
    let mut table = table;
    let mut log = Vec::new();
    // Until the bot is on turn with a choice to make.
    while table.automatic().is_none() {
        own_move(&mut table, &mut log);
    }
    let little = Playouts::new(1);
    assert_eq!(little, Playouts::LEAST, "never below the least search");
    assert_eq!(Playouts::new(u32::MAX), Playouts::FULL);
    let command = TableCommand::PlayFor {
        seed: 5,
        playouts: little,
    };
    let events = table.decide(&command, &mut rng()).unwrap();
    let TableEvent::BotMoved { playouts, .. } = &events[0] else {
        panic!("{events:?}");
    };
    assert_eq!(*playouts, Some(Playouts::LEAST.get()));
    // The audit replays the recorded search, and tells a forged number.
    assert_eq!(table.check_automatic(&events[0], &events[1..]), Ok(()));
    let TableEvent::BotMoved {
        seat,
        bot,
        reason,
        seed,
        ..
    } = events[0].clone()
    else {
        unreachable!()
    };
    let forged = TableEvent::BotMoved {
        seat,
        bot,
        reason,
        seed,
        playouts: Some(1_000_000),
    };
    assert!(table.check_automatic(&forged, &events[1..]).is_err());
    // A level that does not search records no playouts.
    let (mut basic, mut log) = started_with(&["a"], &[Level::Basic]);
    while basic.automatic().is_none() {
        own_move(&mut basic, &mut log);
    }
    let events = run(&mut basic, &mut log, command);
    assert!(matches!(
        events[0],
        TableEvent::BotMoved { playouts: None, .. }
    ));
}

#[test]
fn d42_a_bots_seed_is_hidden_from_the_other_seats_like_a_card() {
    let (mut table, mut log) = started_with(&["a"], &[Level::Random]);
    while table.automatic().is_none() {
        own_move(&mut table, &mut log);
    }
    let command = play_for(77);
    let events = run(&mut table, &mut log, command);
    let moved = &events[0];
    for reader in [Some(0), None] {
        let Seen::Part(part) = moved.seen_by(reader) else {
            panic!("the seed shown to {reader:?}");
        };
        assert!(part.get("seed").is_none(), "{part}");
        assert_eq!(part["seat"], 1);
        assert_eq!(part["bot"], "random@1");
    }
    assert_eq!(moved.seen_by(Some(1)), Seen::Whole);
}

#[test]
fn d37_d42_what_a_command_leaves_due() {
    use std::time::Duration;
    let delay = Duration::from_millis(500);
    // D37: a new turn on a table with a clock: its seconds from now.
    let (mut table, mut log) = started(clock(2));
    let before = table.turn();
    own_move(&mut table, &mut log);
    let events = &log[log.len() - 1..];
    assert_eq!(
        table.due_after(before, events, delay),
        Due::After(Duration::from_secs(30))
    );
    // Nothing changed whose turn it is (another seat's act within the turn,
    // a challenge, D36): the deadline stays.
    assert_eq!(table.due_after(table.turn(), &[], delay), Due::Keep);
    // No clock: nothing is due while people play.
    let (mut free, mut log) = started(None);
    let before = free.turn();
    own_move(&mut free, &mut log);
    assert_eq!(free.due_after(before, &[], delay), Due::Clear);
    // D39-D42: a seat the server plays comes on turn: its move, after the
    // delay, clock or not.
    let (mut table, mut log) = resigned_seat_on_turn();
    assert_eq!(
        table.due_after(Turn::default(), &[], delay),
        Due::After(delay)
    );
    // The game over: nothing.
    let resign = TableCommand::Resign {
        account_id: "a".into(),
    };
    let before = table.turn();
    let events = run(&mut table, &mut log, resign);
    assert_eq!(table.status(), Status::Finished);
    assert_eq!(table.due_after(before, &events, delay), Due::Clear);
}
