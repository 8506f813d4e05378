//! What a table tells its people away from it (docs/API.md "Finding a game
//! and coming back": the feed): one notice per person per thing, never a
//! bot, and the turn's alarm at 80 % of its clock.

use std::time::Duration;

use super::*;
use crate::table::notices::{Notice, NoticeKind, TURN_ENDING};

/// The notices of `command` on `table`, as the server asks for them.
fn told(table: &mut Table, log: &mut Vec<TableEvent>, command: TableCommand) -> Vec<Notice> {
    let waited = table.to_act().cloned();
    let events = run(table, log, command);
    table.notices(waited.as_ref(), &events)
}

fn notice(kind: NoticeKind, player: &str) -> Notice {
    Notice {
        kind,
        player: player.into(),
    }
}

#[test]
fn the_start_tells_every_person_and_the_first_to_play_that_it_is_their_turn() {
    let mut log = Table::create("classique", &Default::default(), 3, None, &"a".into()).unwrap();
    let mut table = Table::from_events(&log).unwrap();
    let join = TableCommand::Join {
        account_id: "b".into(),
        joining: crate::table::Joining::Open,
        guest: false,
        client_seed: None,
    };
    assert_eq!(
        told(&mut table, &mut log, join),
        vec![],
        "a join tells nobody"
    );
    let bot = TableCommand::SeatBot {
        account_id: "a".into(),
        level: Level::Basic,
        client_seed: None,
    };
    run(&mut table, &mut log, bot);
    let start = TableCommand::Start {
        account_id: "a".into(),
    };
    let notices = told(&mut table, &mut log, start);
    let first = table.to_act().cloned();
    let mut expected = vec![
        notice(NoticeKind::GameStarted, "a"),
        notice(NoticeKind::GameStarted, "b"),
    ];
    // The bot's seat may deal first: then nobody waits yet.
    expected.extend(first.map(|p| notice(NoticeKind::YourTurn, p.as_str())));
    assert_eq!(notices, expected, "the bot is told nothing");
}

#[test]
fn your_turn_is_told_once_when_the_turn_passes_to_a_person() {
    let (mut table, mut log) = started(None);
    for _ in 0..12 {
        let seat = table.must_act().unwrap();
        let mv = table.game.as_ref().unwrap().legal_moves(seat)[0].clone();
        let account_id: PlayerId = PLAYERS[seat].into();
        let notices = told(&mut table, &mut log, TableCommand::Move { account_id, mv });
        let yours: Vec<&Notice> = notices
            .iter()
            .filter(|n| n.kind == NoticeKind::YourTurn)
            .collect();
        match table.to_act() {
            // The same player again (a skip): told nothing new.
            Some(now) if now.as_str() == PLAYERS[seat] => assert!(yours.is_empty()),
            Some(now) => assert_eq!(yours, [&notice(NoticeKind::YourTurn, now.as_str())]),
            None => assert!(yours.is_empty()),
        }
    }
}

#[test]
fn a_seat_the_server_plays_is_never_told_its_turn() {
    let (mut table, mut log) = resigned_seat_on_turn();
    assert_eq!(table.automatic().map(|(s, _)| s), Some(1));
    assert_eq!(table.to_act(), None);
    let notices = told(&mut table, &mut log, play_for(4));
    assert!(
        notices.iter().all(|n| n.player.as_str() != "b"),
        "{notices:?}"
    );
}

#[test]
fn the_end_of_a_game_tells_every_person_and_a_rematch_everyone_but_its_opener() {
    let (mut table, mut log) = started(None);
    let abort = TableCommand::Abort {
        account_id: "a".into(),
    };
    let notices = told(&mut table, &mut log, abort);
    assert_eq!(
        notices,
        ["a", "b", "c"].map(|p| notice(NoticeKind::GameOver, p)),
        "aborted: over for everyone, nobody's turn"
    );
    let offer = TableCommand::OfferRematch {
        account_id: "b".into(),
        table_id: "00000000-0000-0000-0000-00000000000b".into(),
    };
    assert_eq!(
        told(&mut table, &mut log, offer),
        ["a", "c"].map(|p| notice(NoticeKind::RematchOffered, p))
    );
}

#[test]
fn a_turns_alarm_rings_at_80_percent_of_its_clock_and_only_for_a_person() {
    let (table, _) = started(clock(2));
    assert_eq!(TURN_ENDING, 80);
    let turn = Due::After(Duration::from_secs(30));
    assert_eq!(
        table.turn_ending_after(turn),
        Due::After(Duration::from_secs(24)),
        "80 % of a 30 s turn"
    );
    assert_eq!(
        table.turn_ending_after(Due::Keep),
        Due::Keep,
        "the turn goes on"
    );
    assert_eq!(table.turn_ending_after(Due::Clear), Due::Clear);
    let (unclocked, _) = started(None);
    assert_eq!(unclocked.turn_ending_after(turn), Due::Clear, "no clock");
    let (server_plays, _) = resigned_seat_on_turn();
    assert_eq!(
        server_plays.turn_ending_after(Due::After(Duration::from_millis(500))),
        Due::Clear,
        "the server's own move"
    );
}

#[test]
fn a_game_played_to_its_end_tells_its_people_it_is_over_and_its_bots_nothing() {
    let (mut table, mut log) = started_with(&["a"], &[Level::Basic, Level::Basic]);
    let mut last = Vec::new();
    for _ in 0..5_000 {
        if table.status() != Status::Playing {
            break;
        }
        last = if table.automatic().is_some() {
            told(&mut table, &mut log, play_for(7))
        } else {
            let seat = table.must_act().unwrap();
            let mv = table.game.as_ref().unwrap().legal_moves(seat)[0].clone();
            let account_id = "a".into();
            told(&mut table, &mut log, TableCommand::Move { account_id, mv })
        };
    }
    assert_eq!(table.status(), Status::Finished);
    assert_eq!(last, vec![notice(NoticeKind::GameOver, "a")]);
}
