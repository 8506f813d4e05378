//! Section 7 of docs/RULES.md through the table, each case folded back
//! exactly from its events: the clock, timeouts, away seats, resigning and
//! aborting (D37-D41, `presence`), and the server's moves for a seat and
//! bot seats (D42, `bots`). This module holds the tables they start from.

mod bots;
mod notices;
mod presence;

use rand::SeedableRng;

use super::presence::act;
use super::*;
use crate::bots::{Level, Playouts};
use crate::engine::Command;
use crate::event::Event;
use crate::event::{DrawReason, EndReason};

fn rng() -> rand::rngs::StdRng {
    rand::rngs::StdRng::seed_from_u64(3)
}

const PLAYERS: [&str; 3] = ["a", "b", "c"];

/// A started 3-player `classique` table (with `clock`), and its log.
pub(crate) fn started(clock: Option<Clock>) -> (Table, Vec<TableEvent>) {
    let mut log = Table::create("classique", &Default::default(), 3, clock, &"a".into()).unwrap();
    let mut table = Table::from_events(&log).unwrap();
    for id in &PLAYERS[1..] {
        let join = TableCommand::Join {
            account_id: (*id).into(),
            joining: crate::table::Joining::Open,
            guest: false,
            client_seed: None,
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
pub(crate) fn started_with(people: &[&str], bots: &[Level]) -> (Table, Vec<TableEvent>) {
    let seats = people.len() + bots.len();
    let creator = people[0];
    let mut log = Table::create(
        "classique",
        &Default::default(),
        seats,
        None,
        &creator.into(),
    )
    .unwrap();
    let mut table = Table::from_events(&log).unwrap();
    for id in &people[1..] {
        let join = TableCommand::Join {
            account_id: (*id).into(),
            joining: crate::table::Joining::Open,
            guest: false,
            client_seed: None,
        };
        log.extend(table.execute(&join, &mut rng()).unwrap());
    }
    for level in bots {
        let bot = TableCommand::SeatBot {
            account_id: creator.into(),
            level: *level,
            client_seed: None,
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

pub(crate) fn clock(away_after: u32) -> Option<Clock> {
    Some(Clock {
        turn_seconds: 30,
        away_after,
    })
}

/// Runs `command`, appends its events to `log`, checks that the log folds
/// back to the same table, and returns the events.
pub(crate) fn run(
    table: &mut Table,
    log: &mut Vec<TableEvent>,
    command: TableCommand,
) -> Vec<TableEvent> {
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
pub(crate) fn own_move(table: &mut Table, log: &mut Vec<TableEvent>) -> Seat {
    let seat = table.must_act().unwrap();
    let mv = table.game.as_ref().unwrap().legal_moves(seat)[0].clone();
    let account_id = PLAYERS[seat].into();
    run(table, log, TableCommand::Move { account_id, mv });
    seat
}

/// Own moves until `seat` is on turn.
pub(crate) fn until_turn_of(table: &mut Table, log: &mut Vec<TableEvent>, seat: Seat) {
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
pub(crate) fn play_for(seed: u32) -> TableCommand {
    TableCommand::PlayFor {
        seed,
        playouts: Playouts::FULL,
    }
}

/// The server plays while the seat on turn is one it plays.
pub(crate) fn server_plays(table: &mut Table, log: &mut Vec<TableEvent>) {
    while table.automatic().is_some() {
        run(table, log, play_for(1));
    }
}

pub(crate) fn time_out(table: &mut Table, log: &mut Vec<TableEvent>) -> Vec<TableEvent> {
    let deadline = "2025-01-31T18:04:35.000000Z".to_owned();
    run(table, log, TableCommand::TimeOut { deadline })
}
