//! D42: the server's moves for a seat, a function of its seed (and, for a
//! level that searches, of its playouts), hidden from the other seats, and
//! checked by the audit; bot seats playing to the end.

use super::*;

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
    let mut log = Table::create("classique", &Default::default(), 3, None, &"a".into()).unwrap();
    let mut table = Table::from_events(&log).unwrap();
    let seat_bot = |id: &str, level| TableCommand::SeatBot {
        account_id: id.into(),
        level,
        client_seed: None,
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
fn d42_a_strong_bot_searches_what_it_is_given_and_records_it() {
    let (mut table, mut log) = started_with(&["a"], &[Level::Strong]);
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
