//! D37-D41: the seat on turn and its clock, timeouts, away seats,
//! resigning, aborting, and what a command leaves due.

use super::*;

#[test]
fn d37_only_the_seat_on_turn_of_a_running_game_must_act() {
    let waiting = Table::from_events(
        &Table::create("classique", &Default::default(), 3, clock(2), &"a".into()).unwrap(),
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
fn the_table_waits_for_the_person_on_turn_never_for_a_seat_the_server_plays() {
    let (mut table, mut log) = started(clock(2));
    let seat = table.must_act().unwrap();
    assert_eq!(table.to_act(), Some(&PLAYERS[seat].into()));
    // Away after two timeouts: the server plays it, nobody is waited for.
    for _ in 0..2 {
        until_turn_of(&mut table, &mut log, seat);
        time_out(&mut table, &mut log);
    }
    until_turn_of(&mut table, &mut log, seat);
    assert!(table.presence[seat].away);
    assert_eq!(table.to_act(), None);
    // A bot's seat, and a table not started, wait for nobody either.
    let (bots, _) = started_with(&["a"], &[Level::Basic]);
    let on_turn = bots.must_act().unwrap();
    let expected = (bots.bot_at(on_turn).is_none()).then(|| PlayerId::from("a"));
    assert_eq!(bots.to_act(), expected.as_ref());
    let waiting = Table::from_events(
        &Table::create("classique", &Default::default(), 3, None, &"a".into()).unwrap(),
    )
    .unwrap();
    assert_eq!(waiting.to_act(), None);
}

#[test]
fn d37_a_clock_out_of_range_is_refused() {
    for (turn_seconds, away_after) in [(4, 2), (1_209_601, 2), (30, 0), (30, 11)] {
        let clock = Some(Clock {
            turn_seconds,
            away_after,
        });
        let refused = Table::create("classique", &Default::default(), 3, clock, &"a".into());
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
            &Table::create("classique", &Default::default(), 3, None, &"a".into()).unwrap()
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
    let mut log = Table::create("classique", &Default::default(), 3, None, &"a".into()).unwrap();
    let mut table = Table::from_events(&log).unwrap();
    for _ in 0..2 {
        let bot = TableCommand::SeatBot {
            account_id: "a".into(),
            level: Level::Strong,
            client_seed: None,
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
